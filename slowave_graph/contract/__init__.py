"""Contract models: the single source of tool schemas, validation and docs."""
