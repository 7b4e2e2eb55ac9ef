"""Property-based tests of pure functions: no database, but Hypothesis (a dev dependency), which is
why they are not in tests/unit."""
