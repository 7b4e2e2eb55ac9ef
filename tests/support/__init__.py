"""What several test modules share: MCP call helpers, server processes, the conformance and
fidelity scenarios, the suite's Neo4j target, stubs and reference data. Not collected (no test_
modules); each module imports only what its own tests need, so a unit test importing one does not
bring in the integration stack."""
