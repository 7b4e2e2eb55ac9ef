"""The demo: a scripted lifecycle to watch against a running server (``lifecycle``, over the
server's own lifecycle driver, ``slowave_graph.workload.driver``) and a seeded demo memory for the
dashboard, the notebooks and the docs (``seed`` with its ``data``)."""
