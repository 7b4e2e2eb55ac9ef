"""The stdio screen (mcp/stdio.py): whatever a line holds, the SDK gets a line it reads — the line
itself, or a stand-in that is answered with the JSON-RPC error — and the screen never raises."""

from __future__ import annotations

import json
import os

from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import types

from slowave_graph.mcp.stdio import NONCHARACTER, REFUSED, screen

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


def test_a_valid_request_passes_unchanged_and_others_are_refused_with_their_codes() -> None:
    ping = '{"jsonrpc":"2.0","id":7,"method":"ping"}'
    assert screen(ping.encode() + b"\r\n") == ping
    refused = {
        b"garbage": (types.PARSE_ERROR, None),
        b"[" * 1500: (types.PARSE_ERROR, None),
        b'{"id": 4, "x": 1}': (types.INVALID_REQUEST, 4),
        b'{"jsonrpc":"2.0","id":"a\\ud800","method":"ping"}': (types.INVALID_REQUEST, None),
    }
    for line, (code, ident) in refused.items():
        out = screen(line + b"\n")
        assert out is not None
        params = json.loads(out)["params"]
        assert (json.loads(out)["method"], params["code"], params["id"]) == (REFUSED, code, ident)
    # a lone surrogate in the arguments reaches the tools as U+FFFF, which they refuse
    repaired = screen(b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":"\\ud800"}}\n')
    assert repaired is not None and json.loads(repaired)["params"]["a"] == "\uffff"


def test_lone_surrogates_are_repaired_and_valid_pairs_untouched() -> None:
    plain = '{"jsonrpc":"2.0","id":1,"method":"ping"}'
    pair = '{"jsonrpc":"2.0","id":2,"method":"x","params":{"a":"\\ud83d\\ude00"}}'  # an emoji
    assert screen(plain.encode() + b"\n") == plain and screen(pair.encode() + b"\n") == pair
    lone = b'{"jsonrpc":"2.0","id":3,"method":"x","params":{"k\\udfff":"a\\ud800b"}}\n'
    repaired = screen(lone)
    assert repaired is not None
    assert json.loads(repaired)["params"] == {f"k{NONCHARACTER}": f"a{NONCHARACTER}b"}


def test_lines_nested_beyond_the_parsers_are_refused_without_raising() -> None:
    """1,500 nested arrays in a 3 KB line make Python's parser raise RecursionError, which must not
    escape the screen (it would end the stdin reader and the server with it)."""
    for depth in (1_500, 100_000):
        deep = (
            b'{"jsonrpc":"2.0","method":"x","params":{"a":"\\u0041","b":'
            + b"[" * depth
            + b"]" * depth
            + b"}}\n"
        )
        unclosed = b'{"a":"\\u0041","b":' + b"[" * depth + b"\n"
        for line in (deep, unclosed):
            out = screen(line)
            assert out is not None and json.loads(out)["params"]["code"] == types.PARSE_ERROR
