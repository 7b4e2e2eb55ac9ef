"""The stdio screen (mcp/stdio.py) on chosen lines: a valid one passes unchanged, others become a
stand-in answered with the JSON-RPC error. Generated lines: tests/property/test_stdio_screen.py."""

from __future__ import annotations

import json

from mcp import types

from slowave_graph.mcp.stdio import NONCHARACTER, REFUSED, screen


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
