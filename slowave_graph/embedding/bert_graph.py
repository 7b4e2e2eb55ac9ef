"""A BERT encoder's ONNX graph built from its weights, with ONNX Runtime's fused transformer ops.

ONNX Runtime runs a BERT layer fastest as a handful of fused operators (``Attention``,
``SkipLayerNormalization``, ``BiasGelu``; ``EmbedLayerNormalization`` in front), and
``quantize_dynamic`` turns those into int8 ones (``QAttention``, ``MatMulInteger``). Its transformer
optimizer finds them only in the exports it knows; the int8 MiniLM graph we started from hides the
attention behind a mask pattern it does not recognise (``docs/performance.md``). So the graph is
written here directly from a sentence-transformers checkpoint (``config.json`` and
``model.safetensors``): 7 nodes per layer instead of ~40, no PyTorch, and the same bytes every time
for the same weights and onnx version. Only what the bundled MiniLM needs: a ``BertModel`` with
absolute positions and exact (erf) GELU; anything else is refused, not approximated.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MICROSOFT = "com.microsoft"  # ONNX Runtime's contrib operators
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT = "last_hidden_state"
# ONNX Runtime 1.20 reads IR version 10; newer onnx writes a higher one by default.
IR_VERSION = 10


def _config(directory: Path) -> dict[str, Any]:
    config: dict[str, Any] = json.loads((directory / "config.json").read_text())
    supported = (
        config.get("model_type") == "bert"
        and config.get("hidden_act") == "gelu"
        and config.get("position_embedding_type", "absolute") == "absolute"
    )
    if not supported:
        raise ValueError(f"{directory} is not a BERT encoder with absolute positions and GELU")
    return config


def build_bert_graph(directory: Path, target: Path) -> None:
    """Write the float32 ONNX graph of the BERT checkpoint in ``directory`` to ``target``: inputs
    ``input_ids``, ``attention_mask``, ``token_type_ids`` (int64, batch × sequence, padded on the
    right), output ``last_hidden_state`` (batch × sequence × hidden), as a Hugging Face export has."""
    import onnx
    from safetensors.numpy import load_file

    config = _config(directory)
    graph = _Graph(config, load_file(str(directory / "model.safetensors")))
    hidden = graph.embeddings()
    layers = int(config["num_hidden_layers"])
    for n in range(layers):
        out = OUTPUT if n == layers - 1 else f"layer{n}_output"
        graph.layer(n, hidden, out)
        hidden = out
    model = graph.model()
    onnx.checker.check_model(model)  # a malformed graph fails here, not at its first load
    onnx.save(model, str(target))


class _Graph:
    """The nodes and initializers of the graph being written, in the order they are added (the
    bytes written depend on it)."""

    def __init__(self, config: dict[str, Any], weights: dict[str, Any]) -> None:
        self.config = config
        self.weights = weights
        self.prefix = "bert." if "bert.embeddings.word_embeddings.weight" in weights else ""
        self.epsilon = float(config["layer_norm_eps"])
        self.initializers: list[Any] = []
        self.nodes: list[Any] = []

    def constant(self, name: str, array: Any) -> str:
        import numpy as np
        from onnx import numpy_helper

        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array, dtype=np.float32), name))
        return name

    def weight(self, key: str) -> Any:
        return self.weights[self.prefix + key]

    def stored(self, key: str) -> str:  # a checkpoint tensor as it is, under its own name
        return self.constant(key, self.weight(key))

    def dense(self, x: str, key: str, out: str) -> None:  # PyTorch stores (out, in); MatMul takes (in, out)
        from onnx import helper

        matrix = self.constant(key + ".weight", self.weight(key + ".weight").T)
        self.nodes.append(helper.make_node("MatMul", [x, matrix], [out]))

    def add_and_norm(self, x: str, residual: str, key: str, out: str) -> None:
        """The dense layer's bias, the residual and LayerNorm in one operator."""
        from onnx import helper

        norm, bias = self.stored(key + ".LayerNorm.weight"), self.stored(key + ".LayerNorm.bias")
        inputs = [x, residual, norm, bias, self.stored(key + ".dense.bias")]
        self.nodes.append(
            helper.make_node("SkipLayerNormalization", inputs, [out], domain=MICROSOFT, epsilon=self.epsilon)
        )

    def embeddings(self) -> str:
        """The inputs cast and embedded; returns the name of the embeddings' output."""
        from onnx import TensorProto, helper

        # the contrib operators take int32 ids and mask
        self.nodes += [
            helper.make_node("Cast", [name], [name + "_int32"], to=TensorProto.INT32) for name in INPUTS
        ]
        embeddings = ("word_embeddings", "position_embeddings", "token_type_embeddings", "LayerNorm")
        tables = [self.stored(f"embeddings.{table}.weight") for table in embeddings]
        self.nodes.append(
            helper.make_node(
                "EmbedLayerNormalization",
                [
                    "input_ids_int32",
                    "token_type_ids_int32",
                    *tables,
                    self.stored("embeddings.LayerNorm.bias"),
                    "attention_mask_int32",
                ],
                ["embedded", "mask_index"],  # mask_index: each row's length, for Attention
                domain=MICROSOFT,
                epsilon=self.epsilon,
            )
        )
        return "embedded"

    def layer(self, n: int, hidden: str, out: str) -> None:
        """Encoder layer ``n`` from ``hidden`` to ``out``: attention, then the feed-forward block."""
        from onnx import helper

        layer, attention = f"encoder.layer.{n}.", f"encoder.layer.{n}.attention."
        self.attention(n, hidden)
        normed = f"layer{n}_attention_normed"
        self.dense(f"layer{n}_context", attention + "output.dense", f"layer{n}_attention")
        self.add_and_norm(f"layer{n}_attention", hidden, attention + "output", normed)
        self.dense(normed, layer + "intermediate.dense", f"layer{n}_up")
        self.nodes.append(  # bias + exact GELU
            helper.make_node(
                "BiasGelu",
                [f"layer{n}_up", self.stored(layer + "intermediate.dense.bias")],
                [f"layer{n}_activated"],
                domain=MICROSOFT,
            )
        )
        self.dense(f"layer{n}_activated", layer + "output.dense", f"layer{n}_down")
        self.add_and_norm(f"layer{n}_down", normed, layer + "output", out)

    def attention(self, n: int, hidden: str) -> None:
        """Layer ``n``'s self-attention as one operator over the query, key and value projections
        side by side; output ``layer{n}_context``."""
        import numpy as np
        from onnx import helper

        attention = f"encoder.layer.{n}.attention."
        projections = [f"{attention}self.{p}" for p in ("query", "key", "value")]
        qkv = np.concatenate([self.weight(p + ".weight").T for p in projections], axis=1)
        qkv_bias = np.concatenate([self.weight(p + ".bias") for p in projections])
        qkv_inputs = [
            hidden,
            self.constant(f"{attention}qkv.weight", qkv),
            self.constant(f"{attention}qkv.bias", qkv_bias),
        ]
        heads = int(self.config["num_attention_heads"])
        self.nodes.append(
            helper.make_node(
                "Attention",
                [*qkv_inputs, "mask_index"],
                [f"layer{n}_context"],
                domain=MICROSOFT,
                num_heads=heads,
            )
        )

    def model(self) -> Any:
        """The graph with its typed inputs and output, as an ONNX model."""
        from onnx import TensorProto, helper

        output_shape: list[str | int] = ["batch", "sequence", int(self.config["hidden_size"])]
        graph = helper.make_graph(
            self.nodes,
            "bert",
            [
                helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
                for name in INPUTS
            ],
            [helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, output_shape)],
            self.initializers,
        )
        return helper.make_model(
            graph,
            opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MICROSOFT, 1)],
            producer_name="slowave-graph",
            ir_version=IR_VERSION,
        )
