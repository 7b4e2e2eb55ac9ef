"""The analyst's Cypher catalog (``cypher/explore.cypher`` and the read-only stats queries): their
declared parameters, typed parameter parsing, and running them by name in read transactions."""
