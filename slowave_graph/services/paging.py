"""Pages of a frozen retrieval catalog.

A catalog lists direct hits (best first) then associated hits. Associated memories do not count
toward a page's budget of direct memories: each page carries up to ``page_size`` direct memories
plus up to ``ASSOCIATED_PER_PAGE`` associated ones; associated memories left over when the direct
ones run out fill further pages of ``page_size``. The split is a pure function of the catalog, so
a replayed cursor always yields the identical page and no item appears on two pages.
"""

from __future__ import annotations

from collections.abc import Sequence

ASSOCIATED_PER_PAGE = 2


def paginate(pathways: Sequence[str], page_size: int) -> list[list[int]]:
    """Catalog positions on each page (pages numbered from 1 are ``result[n - 1]``)."""
    if page_size < 1:
        raise ValueError("page_size must be at least 1")
    direct = [i for i, p in enumerate(pathways) if p != "associated"]
    associated = [i for i, p in enumerate(pathways) if p == "associated"]
    pages: list[list[int]] = []
    d = a = 0
    while d < len(direct):
        page = direct[d : d + page_size]
        d += page_size
        extra = associated[a : a + ASSOCIATED_PER_PAGE]
        a += len(extra)
        pages.append(page + extra)
    while a < len(associated):
        pages.append(associated[a : a + page_size])
        a += page_size
    return pages
