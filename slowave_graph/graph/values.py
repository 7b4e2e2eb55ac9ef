"""Neo4j driver values as plain Python and as JSON: the one converter every reader of query rows
uses (the dashboard renders Python values; the CLI, the Cypher catalog and the audit print JSON).

The export's lossless encoding of property values is a file format of its own (operator/codec.py).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any


def native(value: Any) -> Any:
    """Driver values → Python values, recursively: temporal values as ``datetime``/``date``/…
    (``to_native``), lists and maps walked, anything else as it is."""
    if isinstance(value, Mapping):
        return {k: native(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [native(v) for v in value]
    to_native = getattr(value, "to_native", None)
    if callable(to_native):
        try:
            return to_native()
        except (ValueError, OverflowError):  # nanoseconds or ranges Python cannot hold
            return value
    return value


def jsonable(value: Any) -> Any:
    """Driver values as JSON values: temporal values as ISO 8601 (RFC 3339 for zoned datetimes)
    strings, lists and maps recursively, bytes as base64, anything else (points, graph objects,
    durations) as its string form."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode()
    converted = native(value)
    if converted is not value and hasattr(converted, "isoformat"):
        return converted.isoformat()
    iso = getattr(value, "iso_format", None)
    if callable(iso):
        return iso()
    return str(value)
