"""The stdio screen (mcp/stdio.py) on generated lines: whatever a line holds, the SDK gets a line it
reads — the line itself, or a stand-in that is answered with the JSON-RPC error — and the screen
never raises. SLOWAVE_FUZZ_EXAMPLES sets how many lines (`make fuzz`)."""

from __future__ import annotations

import json
import os

from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import types

from slowave_graph.mcp.stdio import REFUSED, screen

EXAMPLES = int(os.environ.get("SLOWAVE_FUZZ_EXAMPLES", "300"))

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
messages = st.fixed_dictionaries(
    {"jsonrpc": st.sampled_from(["2.0", "1.0", 2]), "method": st.text(max_size=12)},
    optional={"id": st.integers() | st.text(max_size=6) | st.none() | st.booleans(), "params": json_values},
)
lines = (
    st.binary(max_size=300)
    | json_values.map(lambda v: json.dumps(v).encode())
    | messages.map(lambda m: json.dumps(m).encode())
    | messages.map(lambda m: json.dumps(m).encode()[: len(json.dumps(m)) // 2])  # cut short
    | st.integers(1, 3000).map(lambda n: b"[" * n)
)


@settings(max_examples=EXAMPLES, deadline=None)
@given(lines)
def test_every_line_becomes_one_line_the_sdk_reads(raw: bytes) -> None:
    line = raw.replace(b"\n", b" ") + b"\n"
    out = screen(line)
    if out is None:
        assert not line.decode("utf-8", errors="replace").strip()
        return
    assert "\n" not in out and "\r" not in out  # one line for the SDK's reader, which also cuts at CR
    message = types.jsonrpc_message_adapter.validate_json(out, by_name=False)
    if isinstance(message, types.JSONRPCNotification) and message.method == REFUSED:
        params = message.params or {}
        assert params["code"] in (types.PARSE_ERROR, types.INVALID_REQUEST)
        ident = params["id"]
        assert ident is None or (isinstance(ident, (int, str)) and not isinstance(ident, bool))
