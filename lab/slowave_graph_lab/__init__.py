"""slowave-graph-lab: the benchmarks, the demo and the notebooks' helpers of slowave-graph."""

__version__ = "0.1.0"
