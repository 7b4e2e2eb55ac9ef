"""Property values ⇄ JSON, exactly, and the canonical line form the checksum is taken over.

JSON carries strings, booleans, integers, floats (Python writes the shortest repr that reads
back to the same double) and lists of them as they are. Temporal values become one-key objects
— ``{"$datetime": "2026-03-01T09:30:00.123456789+00:00"}`` — with nanoseconds and offset kept;
a datetime in a named zone also keeps the zone (``"tz": "Europe/Berlin"``). Neo4j properties
cannot be maps, so an object in a property value is always such a tag.

What the service writes round-trips exactly. One limit of the driver: a datetime stored in the
named zone "UTC" reads back like one stored with offset +00:00 and is restored as the latter
(the same instant).
"""

from __future__ import annotations

import base64
import hashlib
import json
from datetime import timedelta, timezone
from typing import Any

from neo4j.time import Date, DateTime, Duration, Time

from slowave_graph.exceptions import SlowaveError


class UnsupportedValue(SlowaveError, TypeError):
    """A property value the export format cannot carry (e.g. a spatial point)."""


def _zone_name(tz: Any) -> str | None:
    """The IANA zone of a named-zone tzinfo; None for fixed offsets (and UTC, see module doc)."""
    name = getattr(tz, "zone", None) or getattr(tz, "key", None)
    if not name or name == "UTC" or str(name).startswith(("Etc/", "+", "-")):
        return None
    return str(name)


def encode(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Duration):  # before lists: a Duration is a tuple
        return {"$duration": value.iso_format()}
    if isinstance(value, list | tuple):
        return [encode(v) for v in value]
    if isinstance(value, DateTime):
        if value.tzinfo is None:
            return {"$localdatetime": value.iso_format()}
        zone = _zone_name(value.tzinfo)
        return {"$datetime": value.iso_format(), **({"tz": zone} if zone else {})}
    if isinstance(value, Date):
        return {"$date": value.iso_format()}
    if isinstance(value, Time):
        return {"$time" if value.tzinfo is not None else "$localtime": value.iso_format()}
    if isinstance(value, bytes | bytearray):
        return {"$bytes": base64.b64encode(bytes(value)).decode()}
    raise UnsupportedValue(f"cannot export a {type(value).__name__} property value")


def _fixed(value: DateTime) -> DateTime:
    """Offset datetimes as the stdlib's fixed offsets: the driver then writes an offset, not a zone."""
    offset = value.utcoffset() or timedelta(0)
    return value.replace(tzinfo=timezone(offset))


def decode(value: Any) -> Any:
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "$datetime" in value:
        parsed = _fixed(DateTime.from_iso_format(value["$datetime"]))
        zone = value.get("tz")
        if zone:
            import pytz  # the driver's own dependency for named zones

            return parsed.astimezone(pytz.timezone(zone))
        return parsed
    if "$localdatetime" in value:
        return DateTime.from_iso_format(value["$localdatetime"])
    if "$date" in value:
        return Date.from_iso_format(value["$date"])
    if "$time" in value or "$localtime" in value:
        return Time.from_iso_format(value.get("$time") or value["$localtime"])
    if "$duration" in value:
        return Duration.from_iso_format(value["$duration"])
    if "$bytes" in value:
        return bytearray(base64.b64decode(value["$bytes"]))
    raise ValueError(f"unknown tagged value {sorted(value)}")


def encode_props(props: dict[str, Any]) -> dict[str, Any]:
    return {k: encode(v) for k, v in props.items()}


def decode_props(props: dict[str, Any]) -> dict[str, Any]:
    return {k: decode(v) for k, v in props.items()}


def line(record: dict[str, Any]) -> str:
    """The canonical JSON of a record: sorted keys, no spaces, UTF-8 as is. The same graph content
    always gives the same line, so checksums compare exports of two databases."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


class Checksum:
    """An order-independent digest of a set of lines: the sum of their SHA-256 values mod 2^256.
    Export order (scopes, streaming) then does not matter, only the content."""

    MODULUS = 1 << 256

    def __init__(self) -> None:
        self._sum = 0

    def add(self, text: str) -> None:
        digest = hashlib.sha256(text.encode()).digest()
        self._sum = (self._sum + int.from_bytes(digest, "big")) % self.MODULUS

    def add_sum(self, other: Checksum) -> None:
        self._sum = (self._sum + other._sum) % self.MODULUS

    def hexdigest(self) -> str:
        return "sha256sum:" + self._sum.to_bytes(32, "big").hex()
