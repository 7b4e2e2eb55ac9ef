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
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from safetensors.numpy import load_file

    config = _config(directory)
    weights = load_file(str(directory / "model.safetensors"))
    prefix = "bert." if "bert.embeddings.word_embeddings.weight" in weights else ""
    epsilon = float(config["layer_norm_eps"])
    initializers: list[Any] = []
    nodes: list[Any] = []

    def constant(name: str, array: Any) -> str:
        initializers.append(numpy_helper.from_array(np.ascontiguousarray(array, dtype=np.float32), name))
        return name

    def weight(key: str) -> Any:
        return weights[prefix + key]

    def stored(key: str) -> str:  # a checkpoint tensor as it is, under its own name
        return constant(key, weight(key))

    def dense(x: str, key: str, out: str) -> None:  # PyTorch stores (out, in); MatMul takes (in, out)
        nodes.append(
            helper.make_node("MatMul", [x, constant(key + ".weight", weight(key + ".weight").T)], [out])
        )

    def add_and_norm(x: str, residual: str, key: str, out: str) -> None:
        """The dense layer's bias, the residual and LayerNorm in one operator."""
        norm, bias = stored(key + ".LayerNorm.weight"), stored(key + ".LayerNorm.bias")
        inputs = [x, residual, norm, bias, stored(key + ".dense.bias")]
        nodes.append(
            helper.make_node("SkipLayerNormalization", inputs, [out], domain=MICROSOFT, epsilon=epsilon)
        )

    # the contrib operators take int32 ids and mask
    nodes += [helper.make_node("Cast", [name], [name + "_int32"], to=TensorProto.INT32) for name in INPUTS]
    embeddings = ("word_embeddings", "position_embeddings", "token_type_embeddings", "LayerNorm")
    tables = [stored(f"embeddings.{table}.weight") for table in embeddings]
    nodes.append(
        helper.make_node(
            "EmbedLayerNormalization",
            [
                "input_ids_int32",
                "token_type_ids_int32",
                *tables,
                stored("embeddings.LayerNorm.bias"),
                "attention_mask_int32",
            ],
            ["embedded", "mask_index"],  # mask_index: each row's length, for Attention
            domain=MICROSOFT,
            epsilon=epsilon,
        )
    )
    hidden = "embedded"
    layers = int(config["num_hidden_layers"])
    for n in range(layers):
        layer, attention = f"encoder.layer.{n}.", f"encoder.layer.{n}.attention."
        projections = [f"{attention}self.{p}" for p in ("query", "key", "value")]
        qkv = np.concatenate([weight(p + ".weight").T for p in projections], axis=1)
        qkv_bias = np.concatenate([weight(p + ".bias") for p in projections])
        qkv_inputs = [
            hidden,
            constant(f"{attention}qkv.weight", qkv),
            constant(f"{attention}qkv.bias", qkv_bias),
        ]
        heads = int(config["num_attention_heads"])
        nodes.append(
            helper.make_node(
                "Attention",
                [*qkv_inputs, "mask_index"],
                [f"layer{n}_context"],
                domain=MICROSOFT,
                num_heads=heads,
            )
        )
        normed, out = f"layer{n}_attention_normed", OUTPUT if n == layers - 1 else f"layer{n}_output"
        dense(f"layer{n}_context", attention + "output.dense", f"layer{n}_attention")
        add_and_norm(f"layer{n}_attention", hidden, attention + "output", normed)
        dense(normed, layer + "intermediate.dense", f"layer{n}_up")
        nodes.append(  # bias + exact GELU
            helper.make_node(
                "BiasGelu",
                [f"layer{n}_up", stored(layer + "intermediate.dense.bias")],
                [f"layer{n}_activated"],
                domain=MICROSOFT,
            )
        )
        dense(f"layer{n}_activated", layer + "output.dense", f"layer{n}_down")
        add_and_norm(f"layer{n}_down", normed, layer + "output", out)
        hidden = out
    output_shape: list[str | int] = ["batch", "sequence", int(config["hidden_size"])]
    graph = helper.make_graph(
        nodes,
        "bert",
        [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"]) for name in INPUTS],
        [helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, output_shape)],
        initializers,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MICROSOFT, 1)],
        producer_name="slowave-graph",
        ir_version=IR_VERSION,
    )
    onnx.checker.check_model(model)  # a malformed graph fails here, not at its first load
    onnx.save(model, str(target))
