"""Keeping secrets out of what setup prints.

``--dry-run`` shows diffs of the user's own files, whose lines (ours from an older setup, other
servers' in the context around ours) can hold tokens and passwords. ``redact`` masks every secret
value setup knows, every literal ``Bearer`` credential, and the value of every key named like a
secret; a reference to an environment variable (``${NAME}``, ``${env:NAME}``, ``{env:NAME}``) is
not a secret and stays readable, since it is what tells the user which variable to export.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

MASK = "****"

_REFERENCE = r"\$\{(?:env:)?[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}|\{env:[A-Za-z_][A-Za-z0-9_]*\}"
_REFERENCES = re.compile(rf"(?:{_REFERENCE})+")
_SCHEME = re.compile(r"^(?:Bearer|Basic)\s+", re.IGNORECASE)
# The credential after an auth scheme: references, or anything up to the quote or space ending it.
_CREDENTIAL = re.compile(rf"\b(Bearer|Basic)(\s+)((?:{_REFERENCE})+(?![^\s\"'])|[^\s\"']+)", re.IGNORECASE)
# `"NEO4J_PASSWORD": "…"` (JSON) or `DOCS_TOKEN = "…"` (TOML): a key that names a secret, then a
# quoted value. `bearer_token_env_var` and `env_vars` name variables, not secrets, and do not match.
_SECRET_KEY = re.compile(
    r"""(?P<key>["']?[A-Za-z0-9_.-]*(?:password|passwd|secret|token|api[_-]?key|authorization)["']?)"""
    r"""(?P<sep>\s*[:=]\s*)(?P<q>["'])(?P<value>(?:\\.|(?!(?P=q)).)*)(?P=q)""",
    re.IGNORECASE,
)


def is_reference(value: str) -> bool:
    """True for a value made only of variable references, optionally after an auth scheme."""
    return bool(_REFERENCES.fullmatch(_SCHEME.sub("", value.strip())))


def redact(text: str, secrets: Iterable[str] = (), patterns: bool = True) -> str:
    """``text`` with every known secret value masked (as written raw or JSON/TOML-escaped) and, with
    ``patterns``, literal credentials and values of secret-named keys (for configuration files;
    prose such as instruction files would only be garbled by them)."""
    known = {s for s in secrets if s}
    variants = known | {json.dumps(s, ensure_ascii=False)[1:-1] for s in known}
    for value in sorted(variants, key=len, reverse=True):
        text = text.replace(value, MASK)
    if not patterns:
        return text
    text = _CREDENTIAL.sub(
        lambda m: m.group(0) if is_reference(m.group(3)) else f"{m.group(1)}{m.group(2)}{MASK}", text
    )

    def _value(match: re.Match[str]) -> str:
        value = match.group("value")
        if not value or is_reference(value) or value.endswith(MASK):
            return match.group(0)
        return f"{match.group('key')}{match.group('sep')}{match.group('q')}{MASK}{match.group('q')}"

    return _SECRET_KEY.sub(_value, text)


def holds_literal_secret(entry: Any, secrets: Iterable[str] = ()) -> bool:
    """Whether a client entry holds a secret as plain text: a known secret value, or a literal
    credential after an auth scheme (e.g. an older token an earlier setup wrote)."""
    known = {s for s in secrets if s}

    def visit(node: Any) -> bool:
        if isinstance(node, dict):
            return any(visit(v) for v in node.values())
        if isinstance(node, list):
            return any(visit(v) for v in node)
        if not isinstance(node, str):
            return False
        if node in known:
            return True
        match = _CREDENTIAL.search(node)
        return match is not None and not is_reference(match.group(3))

    return visit(entry)
