"""The demo annex: a scripted lifecycle to watch against a running server (``lifecycle``), the
scripted agent's side of a lifecycle that the demo, the benchmarks and the tests share (``driver``),
and a seeded demo memory for the dashboard, the notebooks and the docs (``seed`` with its ``data``)."""
