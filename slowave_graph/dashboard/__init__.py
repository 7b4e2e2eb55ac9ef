"""A read-only web dashboard over the memory graph: memories, provenance, feedback, retrievals,
procedures and sessions of each scope (served at /ui)."""

from slowave_graph.dashboard.web import build_dashboard

__all__ = ["build_dashboard"]
