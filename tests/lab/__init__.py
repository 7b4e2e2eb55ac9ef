"""Tests of slowave-graph-lab (benchmarks, demo) that need no database: they need the lab package
installed beside slowave-graph, which is why they are not in tests/unit."""
