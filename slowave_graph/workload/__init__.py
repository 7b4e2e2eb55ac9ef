"""The service's own workload: synthetic memories and tool-call lifecycles. The managed Neo4j's
JVM is trained on it (workload/jvm_training.py); the benchmarks (slowave-graph-lab) measure it."""
