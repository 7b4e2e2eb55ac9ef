"""A memory's association neighbourhood laid out for an inline SVG (no JavaScript, no CDN).

Radial and deterministic: the memory in the centre, its direct neighbours evenly on an inner
ring (in the order the query ranked them, strongest first), each second-hop memory on the outer
ring next to the first-hop memory it hangs from. Same data, same picture.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

SIZE = 560
CENTRE = SIZE / 2
INNER, OUTER = 150.0, 245.0


@dataclass(frozen=True)
class NodeView:
    id: str
    x: float
    y: float
    r: float
    hop: int
    status: str
    title: str  # hover text: the memory's content
    label: str  # under the node: the content's first words (ids alone say nothing to a reader)


@dataclass(frozen=True)
class EdgeView:
    path: str  # SVG path data: a straight line, or a curve when two edges join the same pair
    type: str  # ASSOCIATED | NEXT | SUPERSEDES
    width: float
    title: str


@dataclass(frozen=True)
class GraphView:
    size: int
    nodes: list[NodeView]
    edges: list[EdgeView]


def short_label(text: str, limit: int = 24) -> str:
    """The first words of ``text`` within ``limit`` characters, cut between words."""
    words = " ".join(text.split())
    if len(words) <= limit:
        return words
    cut = words[: limit - 1].rsplit(" ", 1)[0] if " " in words[: limit - 1] else words[: limit - 1]
    return cut.rstrip(",.;:") + "…"


def _point(angle: float, radius: float) -> tuple[float, float]:
    return round(CENTRE + radius * math.cos(angle), 1), round(CENTRE + radius * math.sin(angle), 1)


def _edge(
    e: dict[str, Any], positions: dict[str, tuple[float, float, float]], radius: dict[str, float], bend: float
) -> EdgeView:
    (x1, y1, _), (x2, y2, _) = positions[e["source"]], positions[e["target"]]
    length = math.hypot(x2 - x1, y2 - y1) or 1.0
    # Control point: the midpoint pushed sideways by `bend` (0 = straight line).
    cx = (x1 + x2) / 2 - (y2 - y1) / length * bend
    cy = (y1 + y2) / 2 + (x2 - x1) / length * bend
    if e["type"] != "ASSOCIATED":
        # Directed edges stop at the target's rim, so the arrowhead stays visible.
        back = (radius[e["target"]] + 3) / (math.hypot(x2 - cx, y2 - cy) or 1.0)
        x2, y2 = x2 - (x2 - cx) * back, y2 - (y2 - cy) * back
    path = f"M{x1:.1f},{y1:.1f} Q{cx:.1f},{cy:.1f} {x2:.1f},{y2:.1f}"
    weight = e.get("weight")
    width = 1.0 + 4.0 * float(weight) if e["type"] == "ASSOCIATED" and weight is not None else 1.5
    title = f"{e['source']} {e['type']} {e['target']}"
    if weight is not None:
        title += f" (weight {float(weight):.2f})"
    return EdgeView(path, e["type"], round(width, 2), title)


def layout(nodes: list[dict[str, Any]], edges: list[dict[str, Any]]) -> GraphView:
    by_hop = _by_hop(nodes)
    positions = _inner_positions(by_hop)
    _place_second_hop(by_hop, edges, positions)
    views = _node_views(nodes, positions)
    radius = {v.id: v.r for v in views}
    return GraphView(SIZE, views, _edge_views(edges, positions, radius))


def _by_hop(nodes: list[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    """The nodes by hop from the centre; hops 0 to 2 always present."""
    by_hop: dict[int, list[dict[str, Any]]] = {0: [], 1: [], 2: []}
    for node in nodes:
        by_hop.setdefault(int(node["hop"]), []).append(node)
    return by_hop


def _inner_positions(by_hop: dict[int, list[dict[str, Any]]]) -> dict[str, tuple[float, float, float]]:
    """id → x, y, angle of the centre and of the first hop, evenly on the inner ring."""
    positions: dict[str, tuple[float, float, float]] = {}
    for centre in by_hop[0]:
        positions[centre["id"]] = (CENTRE, CENTRE, 0.0)
    ring1 = by_hop[1]
    for i, node in enumerate(ring1):
        angle = -math.pi / 2 + 2 * math.pi * i / max(len(ring1), 1)
        positions[node["id"]] = (*_point(angle, INNER), angle)
    return positions


def _place_second_hop(
    by_hop: dict[int, list[dict[str, Any]]],
    edges: list[dict[str, Any]],
    positions: dict[str, tuple[float, float, float]],
) -> None:
    """Second hop: grouped under their first-hop parent, fanned out around its angle; those with
    no first-hop parent spread over the outer ring."""
    parent_of: dict[str, str] = {}
    for edge in edges:
        for a, b in ((edge["source"], edge["target"]), (edge["target"], edge["source"])):
            if a in positions and a not in (n["id"] for n in by_hop[0]) and b not in positions:
                parent_of.setdefault(b, a)
    children: dict[str, list[dict[str, Any]]] = {}
    orphans = []
    for node in by_hop[2]:
        parent = parent_of.get(node["id"])
        if parent is None:
            orphans.append(node)
        else:
            children.setdefault(parent, []).append(node)
    spread = 2 * math.pi / max(len(by_hop[1]), 1) * 0.8
    for parent, kids in children.items():
        base = positions[parent][2]
        for j, node in enumerate(kids):
            offset = (j - (len(kids) - 1) / 2) * spread / max(len(kids), 1)
            angle = base + offset + 0.35  # turned a little: never on the line centre → parent
            positions[node["id"]] = (*_point(angle, OUTER), angle)
    for j, node in enumerate(orphans):
        angle = math.pi / 2 + 2 * math.pi * j / max(len(orphans), 1) + 0.3
        positions[node["id"]] = (*_point(angle, OUTER), angle)


def _node_views(
    nodes: list[dict[str, Any]], positions: dict[str, tuple[float, float, float]]
) -> list[NodeView]:
    return [
        NodeView(
            id=n["id"],
            x=positions[n["id"]][0],
            y=positions[n["id"]][1],
            r=18.0 if n["hop"] == 0 else (13.0 if n["hop"] == 1 else 10.0),
            hop=int(n["hop"]),
            status=str(n.get("status") or ""),
            title=str(n.get("content") or ""),
            label=short_label(str(n.get("content") or n["id"])),
        )
        for n in nodes
        if n["id"] in positions
    ]


def _edge_views(
    edges: list[dict[str, Any]], positions: dict[str, tuple[float, float, float]], radius: dict[str, float]
) -> list[EdgeView]:
    """The edges between placed nodes; several between one pair are bent apart."""
    drawn = [e for e in edges if e["source"] in positions and e["target"] in positions]
    pairs: dict[frozenset[str], list[dict[str, Any]]] = {}
    for e in drawn:
        pairs.setdefault(frozenset((e["source"], e["target"])), []).append(e)
    lines = []
    for group in pairs.values():
        for k, e in enumerate(group):
            bend = (k - (len(group) - 1) / 2) * 30.0  # parallel edges fan out instead of overlapping
            if e["source"] > e["target"]:
                bend = -bend  # bend relative to one direction per pair, whichever way the edge points
            lines.append(_edge(e, positions, radius, bend))
    return lines
