# Two commands for a fresh machine (see README.md):
#   make serve   set up and run the MCP server on the managed local Neo4j
#   make test    run the test suite (it starts its own Neo4j)
# scripts/venv creates (once) and prints the virtualenv: the runtime one for serve, stdio and fetch,
# `scripts/venv dev` (tests, lint) for the rest, `scripts/venv torch` (PyTorch) for test-torch;
# failures stop the target.
.PHONY: serve stdio test test-torch unit lint fetch fuzz

# fetch: the Neo4j jars and, once, the JVM's AOT cache (managed Neo4j only: no NEO4J_URI)
serve:
	@venv=$$(scripts/venv) && { [ -n "$$NEO4J_URI" ] || "$$venv/bin/slowave-graph" neo4j fetch >/dev/null; } \
		&& exec "$$venv/bin/slowave-graph" serve --transport http

stdio:
	@venv=$$(scripts/venv) && exec "$$venv/bin/slowave-graph" serve --transport stdio

fetch:
	@venv=$$(scripts/venv) && "$$venv/bin/slowave-graph" neo4j fetch

# test: the suite, then its version-dependent tests against the 5.26 LTS line (scripts/test)
test:
	@scripts/test

# test-torch: the tests that need PyTorch (the float model through sentence-transformers), in their
# own virtualenv; .ci/run runs it after make test
test-torch:
	@venv=$$(scripts/venv torch) && "$$venv/bin/python" -m pytest -q -p no:cacheprovider -m torch

unit:
	@venv=$$(scripts/venv dev) && "$$venv/bin/python" -m pytest -q tests/unit

lint:
	@venv=$$(scripts/venv dev) && "$$venv/bin/ruff" check slowave_graph lab tests && "$$venv/bin/ruff" format --check slowave_graph lab tests && "$$venv/bin/mypy"

# fuzz: the deep hostile-input run, 10,000 calls per tool (the suite runs 40) and 10,000 hostile stdio
# lines; FUZZ_EXAMPLES=N to change
fuzz:
	@venv=$$(scripts/venv dev) && "$$venv/bin/slowave-graph" neo4j fetch >/dev/null \
		&& SLOWAVE_FUZZ_EXAMPLES=$${FUZZ_EXAMPLES:-10000} "$$venv/bin/python" -m pytest -q -s -p no:cacheprovider \
		tests/integration/test_fuzz.py tests/property/test_stdio_screen.py \
		tests/integration/test_edge_validation.py::test_stdio_answers_each_of_many_random_lines
