"""Each typed statement handle (graph/statements.py) names a runnable statement of the catalog and
declares exactly the parameters its text uses; its row type is checked against the statement's
columns in test_rows.py."""

from __future__ import annotations

import re
from typing import Any

import pytest

from slowave_graph.graph import statements
from slowave_graph.graph.cypher import catalog
from slowave_graph.graph.statements import Statement

HANDLES = [value for value in vars(statements).values() if isinstance(value, Statement)]


def used_parameters(name: str) -> set[str]:
    """The ``$parameters`` of a statement's text (includes expanded), comments left out."""
    code = re.sub(r"//[^\n]*", "", catalog()[name])
    return set(re.findall(r"\$([A-Za-z_]\w*)", code))


def test_each_statement_has_one_handle() -> None:
    names = [handle.name for handle in HANDLES]
    assert len(names) == len(set(names)) > 25


@pytest.mark.parametrize("handle", HANDLES, ids=[h.name for h in HANDLES])
def test_a_handle_declares_the_parameters_its_statement_uses(handle: Statement[Any]) -> None:
    assert handle.name in catalog().names(), "a runnable statement (not a fragment) of cypher/"
    assert len(handle.params) == len(set(handle.params)), handle.params
    assert set(handle.params) == used_parameters(handle.name)
    assert handle.text == catalog()[handle.name]


def test_used_parameters_reads_included_fragments_and_skips_comments() -> None:
    # activate_session takes freeze_retrieval's parameters through its include
    assert {"catalog_ids", "page_memories", "norm_key"} <= used_parameters("activate_session")
    assert used_parameters("scope_state") == {"scope", "norm_key"}
