"""A catalog as an agent should read it: near-duplicates once, updates side by side, nothing it
already said.

- **Duplicates** (``SIMILAR_TO {kind: 'duplicate'}``, services/consolidation.py): a cluster of
  claims that say the same is shown once — its best-ranked member — and names the others in
  ``provenance.also_stored_as``; one feedback entry covers it.
- **Updates** (``kind: 'update'``): a claim and the one it updates are shown together, newest
  first, at the place of the better-ranked one, each naming the others in
  ``provenance.conflicts_with``. A partner the search did not admit is brought in, so the agent can
  settle the pair in one feedback call (stale + superseded + replacement_memory_id). At most
  ``GROUP_MAX`` memories stand together.
- **Already said**: a memory whose whole text (at least ``ECHO_MIN_WORDS`` words) is contained in
  the task, goal, question or context the agent sent is left out: it would tell the agent what it
  just wrote.

Folding never merges claims that only look alike: what is folded is what remember linked as a
duplicate, and the judgement keeps one template filled for two subjects apart.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from slowave_graph.services.text import normalise_claim

GROUP_MAX = 4
ECHO_MIN_WORDS = 4
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class SimilarEdge:
    """A SIMILAR_TO link between two memories: ``newer`` repeats or updates ``older``."""

    newer: str
    older: str
    kind: str


@dataclass
class Folded:
    """A catalog item after folding: its id, where it came from, and what it stands beside."""

    id: str
    pathway: str
    also_stored_as: list[str] = field(default_factory=list)
    conflicts_with: list[str] = field(default_factory=list)


def echoed(content: str, said: str) -> bool:
    """Whether a memory's whole text stands in what the agent sent (``said``, normalised)."""
    claim = normalise_claim(content)
    if len(_WORD.findall(claim)) < ECHO_MIN_WORDS:
        return False
    return re.search(rf"(?<!\w){re.escape(claim)}(?!\w)", said) is not None


def fold(
    order: Sequence[tuple[str, str]],
    edges: Sequence[SimilarEdge],
    created: dict[str, float],
) -> list[Folded]:
    """The catalog ``order`` ((id, pathway), best first) folded by ``edges``; ``created`` holds
    when each memory that may be placed was stored (newest first within an update group), partners
    outside the catalog included."""
    position = {memory_id: i for i, (memory_id, _) in enumerate(order)}
    pathway = dict(order)
    duplicates = _clusters([(e.newer, e.older) for e in edges if e.kind == "duplicate"], position)
    kept: dict[str, list[str]] = {}  # representative -> the other members shown through it
    hidden: set[str] = set()
    for cluster in duplicates:
        inside = sorted((m for m in cluster if m in position), key=position.__getitem__)
        if len(inside) > 1:
            kept[inside[0]] = inside[1:]
            hidden.update(inside[1:])
    visible = [m for m, _ in order if m not in hidden]

    def shown(memory_id: str) -> str:  # a folded duplicate stands for its representative
        for representative, others in kept.items():
            if memory_id in others:
                return representative
        return memory_id

    created = _newer_later(created, [e for e in edges if e.kind == "update"])
    updates = [(shown(e.newer), shown(e.older)) for e in edges if e.kind == "update"]
    updates = [(a, b) for a, b in updates if a != b and (a in visible or b in visible)]
    groups = _clusters(updates, {m: i for i, m in enumerate(visible)})
    group_of: dict[str, list[str]] = {}
    for group in groups:
        members = sorted(m for m in group if m in visible or m in created)
        best = min((visible.index(m) for m in members if m in visible), default=None)
        if best is None or len(members) < 2:
            continue
        anchor = visible[best]
        newest_first = sorted(members, key=lambda m: (-created.get(m, 0.0), m))
        # the group at the anchor's place: the anchor and the newest around it, at most GROUP_MAX
        placed_together = _around(newest_first, anchor, GROUP_MAX)
        for m in placed_together:
            group_of[m] = placed_together
    out: list[Folded] = []
    placed: set[str] = set()
    for memory_id in visible:
        if memory_id in placed:
            continue
        together = group_of.get(memory_id, [memory_id])
        for member in together:
            if member in placed:
                continue
            placed.add(member)
            out.append(
                Folded(
                    id=member,
                    pathway=pathway.get(member, pathway.get(memory_id, "direct")),
                    also_stored_as=kept.get(member, []),
                    conflicts_with=[m for m in together if m != member],
                )
            )
    return out


def _newer_later(created: dict[str, float], updates: Sequence[SimilarEdge]) -> dict[str, float]:
    """Storage times where an update is always later than what it updates, also when both were
    stored by one call (the same time)."""
    later = dict(created)
    for _ in range(len(updates)):  # enough rounds for any chain
        changed = False
        for e in updates:
            if later.get(e.newer, 0.0) <= later.get(e.older, 0.0):
                later[e.newer] = later.get(e.older, 0.0) + 1e-3
                changed = True
        if not changed:
            break
    return later


def _around(ordered: list[str], anchor: str, size: int) -> list[str]:
    """At most ``size`` of ``ordered`` (newest first), keeping ``anchor`` and those nearest it."""
    if len(ordered) <= size:
        return ordered
    at = ordered.index(anchor)
    start = min(max(0, at - size // 2), len(ordered) - size)
    return ordered[start : start + size]


def _clusters(pairs: Sequence[tuple[str, str]], rank: dict[str, int]) -> list[set[str]]:
    """Connected groups of the pairs (union-find), each with at least two members."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            # the better-ranked root wins, so groups are stable whatever the order of the pairs
            keep, drop = sorted((ra, rb), key=lambda r: (rank.get(r, len(rank)), r))
            parent[drop] = keep
    groups: dict[str, set[str]] = {}
    for x in list(parent):
        groups.setdefault(find(x), set()).add(x)
    return [g for g in groups.values() if len(g) > 1]
