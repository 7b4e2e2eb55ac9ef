"""Dashboard pieces that need no database: the graph layout, the search query, escaping."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from typing import Any

from slowave_graph.dashboard.data import search_query
from slowave_graph.dashboard.graph_svg import CENTRE, INNER, OUTER, layout, short_label
from slowave_graph.dashboard.web import _environment
from slowave_graph.services.text import scope_token

EVIL = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'


def _distance(x: float, y: float) -> float:
    return math.hypot(x - CENTRE, y - CENTRE)


def test_layout_is_radial_and_deterministic() -> None:
    nodes = [
        {"id": "sch_1", "hop": 0, "status": "active", "content": "centre"},
        {"id": "sch_2", "hop": 1, "status": "active", "content": "a"},
        {"id": "sch_3", "hop": 1, "status": "stale", "content": "b"},
        {"id": "sch_4", "hop": 2, "status": "active", "content": "c"},
    ]
    edges = [
        {"source": "sch_1", "target": "sch_2", "type": "ASSOCIATED", "weight": 0.75},
        {"source": "sch_1", "target": "sch_2", "type": "NEXT", "weight": None},
        {"source": "sch_3", "target": "sch_1", "type": "SUPERSEDES", "weight": None},
        {"source": "sch_2", "target": "sch_4", "type": "NEXT", "weight": None},
        {"source": "sch_4", "target": "sch_9", "type": "NEXT", "weight": None},  # not shown: dropped
    ]
    view = layout(nodes, edges)
    assert view == layout(nodes, edges)
    at = {n.id: n for n in view.nodes}
    assert (at["sch_1"].x, at["sch_1"].y) == (CENTRE, CENTRE)
    assert math.isclose(_distance(at["sch_2"].x, at["sch_2"].y), INNER, abs_tol=0.2)
    assert math.isclose(_distance(at["sch_4"].x, at["sch_4"].y), OUTER, abs_tol=0.2)
    assert len(view.edges) == 4
    # two edges between the same pair bend apart instead of overlapping
    pair = [e.path for e in view.edges if {"ASSOCIATED", "NEXT"} >= {e.type} and "sch_4" not in e.title]
    controls = {tuple(re.findall(r"Q([\d.]+),([\d.]+)", p)) for p in pair}
    assert len(pair) == 2 and len(controls) == 2
    associated = next(e for e in view.edges if e.type == "ASSOCIATED")
    assert associated.width == 4.0 and "weight 0.75" in associated.title


def test_a_lone_memory_is_one_node() -> None:
    view = layout([{"id": "sch_1", "hop": 0, "status": "active", "content": "x"}], [])
    assert [n.id for n in view.nodes] == ["sch_1"] and view.edges == []


def test_search_query_only_passes_quoted_words() -> None:
    query = search_query('webhook AND (secrets) "vault" -x* the', "project:shop")
    assert query == f'+scope_token:{scope_token("project:shop")}^0 +content:("webhook" "secrets" "vault")'
    assert search_query("the of and", "project:shop") is None
    assert search_query('*:"\\', "project:shop") is None


def _render(template: str, **context: Any) -> str:
    def link(path: str, **params: Any) -> str:
        return "/ui" + path

    return _environment().get_template(template).render(base="/ui", link=link, **context)


def test_stored_text_is_escaped_everywhere() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    memory = {"id": EVIL, "content": EVIL, "type": EVIL, "status": "active", "scope": EVIL, "salience": 0.5,
              "created_at": now, "integration": EVIL}  # fmt: skip
    page = _render(
        "memory.html",
        title=EVIL,
        scope=EVIL,
        tab="memories",
        m={
            "memory": memory,
            "exposures": 1,
            "provenance": [{"id": EVIL, "kind": "event", "type": EVIL, "content": EVIL, "recorded_at": now,
                            "client_name": EVIL, "session_id": EVIL, "task": EVIL}],
            "supersession": [{"newer_id": EVIL, "newer_content": EVIL, "newer_status": EVIL, "older_id": EVIL,
                              "older_content": EVIL, "older_status": EVIL, "reason": EVIL, "at": now}],
            "ledger": [{"event_id": EVIL, "retrieval_id": EVIL, "query": EVIL, "assessment": EVIL,
                        "reason": EVIL, "status": "accepted", "effective": True, "created_at": now}],
            "corrections": [{"id": EVIL, "action": EVIL, "memory_id": EVIL, "replacement_id": EVIL,
                             "from_status": EVIL, "to_status": EVIL, "reason": EVIL, "actor": EVIL,
                             "host": EVIL, "at": now}],
        },
        graph=layout([{"id": EVIL, "hop": 0, "status": EVIL, "content": EVIL}], []),
        tokens={"suppress": EVIL, "restore": EVIL, "supersede": EVIL},
    )  # fmt: skip
    assert "<script" not in page and "<img" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert page.count('<form class="correct') == 2  # an active memory: suppress and supersede
    # ids in links are URL-quoted, not just HTML-escaped
    assert 'href="/ui/memory/%3Cscript%3Ealert%281%29%3C%2Fscript%3E%22%3E%3Cimg' in page


def test_nodes_are_labelled_by_their_content() -> None:
    view = layout([{"id": "sch_1", "hop": 0, "status": "active",
                    "content": "Harbor deploys go through Argo CD after the smoke tests pass"}], [])  # fmt: skip
    assert view.nodes[0].label == "Harbor deploys go…"
    assert short_label("Short claim") == "Short claim"
    assert short_label("x" * 40) == "x" * 23 + "…"


def test_demo_scopes_are_marked_and_their_cleanup_named() -> None:
    row = {"active": 3, "stale": 0, "sessions": 2, "procedures": 1}
    page = _render(
        "index.html",
        title="Scopes",
        scopes=[{"scope": "demo:4f2a9c", **row}, {"scope": "project:shop", **row}],
        total=2, find="", limit=500,
    )  # fmt: skip
    rows = re.findall(r"<tr>.*?</tr>", page, re.S)[1:]
    assert ">demo</span>" in rows[0] and ">demo</span>" not in rows[1]
    assert "slowave-graph demo cleanup --yes" in page
    plain = _render("index.html", title="Scopes", scopes=[{"scope": "project:demo", **row}], total=1, find="",
                    limit=500)  # fmt: skip
    assert ">demo</span>" not in plain and "demo cleanup" not in plain


def test_the_index_offers_a_finder_once_it_cannot_list_every_scope() -> None:
    row = {"active": 3, "stale": 0, "sessions": 2, "procedures": 1}
    few = _render("index.html", title="Scopes", scopes=[{"scope": "project:shop", **row}], total=1, find="",
                  limit=500)  # fmt: skip
    assert 'name="find"' not in few  # every scope is listed: nothing to find
    many = _render("index.html", title="Scopes", scopes=[{"scope": "project:shop", **row}], total=1200,
                   find="", limit=500)  # fmt: skip
    assert 'name="find"' in many and "1200 scopes; the 500 fullest shown." in many
    found = _render("index.html", title="Scopes", scopes=[], total=0, find=EVIL, limit=500)
    assert "<script" not in found and "No scope has" in found and 'name="find"' in found
