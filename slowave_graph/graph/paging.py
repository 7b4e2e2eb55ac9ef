"""Pages of a frozen retrieval catalog.

A catalog lists memories — direct hits (best first), then associated hits — and, separately,
applicable procedures (best first). A page carries at most ``page_size`` memories, associated hits
included, and at most ``PROCEDURES_PER_PAGE`` procedures; whatever does not fit is reached with
``continue_from``. While direct hits remain, a page keeps a few of its places
(``associated_slots``) for associated hits, so they are seen beside the matches that brought them
instead of only after every direct hit. The split is a pure function of the catalog, so a replayed
cursor always yields the identical page and no item appears on two pages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

PROCEDURES_PER_PAGE = 3
ASSOCIATED_PER_PAGE = 2
# What a forgotten memory leaves in the frozen catalogs that listed it (`slowave-graph forget`,
# forget_memory in cypher/admin.cypher): its place is kept, so pages are cut as before and what was
# shown keeps its page and rank; no memory has this id, so a page serving it shows one item fewer.
FORGOTTEN = "forgotten"


@dataclass(frozen=True)
class Page:
    memories: list[int]  # positions in the memory catalog
    procedures: list[int]  # positions in the procedure catalog


def associated_slots(page_size: int) -> int:
    """Places of a page kept for associated hits while direct hits remain: none on pages of one or
    two (the best match comes first), one in five, two in ten."""
    return min(ASSOCIATED_PER_PAGE, page_size // 3)


def paginate(pathways: Sequence[str], page_size: int, procedures: int = 0) -> list[Page]:
    """The pages of a catalog with these memory pathways and this many procedures (pages numbered
    from 1 are ``result[n - 1]``)."""
    if page_size < 1:
        raise ValueError("page_size must be at least 1")
    direct = [i for i, p in enumerate(pathways) if p != "associated"]
    associated = [i for i, p in enumerate(pathways) if p == "associated"]
    memory_pages: list[list[int]] = []
    d = a = 0
    while d < len(direct) or a < len(associated):
        kept = min(associated_slots(page_size), len(associated) - a)
        page = direct[d : d + page_size - kept]
        d += len(page)
        extra = associated[a : a + page_size - len(page)]
        a += len(extra)
        memory_pages.append(page + extra)
    procedure_pages = [
        list(range(start, min(start + PROCEDURES_PER_PAGE, procedures)))
        for start in range(0, procedures, PROCEDURES_PER_PAGE)
    ]
    return [
        Page(
            memory_pages[n] if n < len(memory_pages) else [],
            procedure_pages[n] if n < len(procedure_pages) else [],
        )
        for n in range(max(len(memory_pages), len(procedure_pages)))
    ]
