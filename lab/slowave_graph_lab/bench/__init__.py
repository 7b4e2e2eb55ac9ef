"""Benchmarks: retrieval quality and learning on external data, through the product's own paths."""
