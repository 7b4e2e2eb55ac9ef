"""The demo annex: a scripted lifecycle to watch against a running server (``lifecycle``) and a
seeded demo memory for the dashboard, the notebooks and the docs (``seed`` with its ``data``)."""
