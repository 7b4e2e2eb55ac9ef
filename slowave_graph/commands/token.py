"""`slowave-graph token add|list|revoke`: named bearer tokens with scope grants (access/tokens.py)."""

from __future__ import annotations

import argparse

from slowave_graph.commands import Common
from slowave_graph.config import Settings


def register(sub: argparse._SubParsersAction, common: Common) -> None:
    parser = sub.add_parser("token", help="named HTTP bearer tokens and the scopes each may use")
    actions = parser.add_subparsers(dest="token_action", required=True)
    add = actions.add_parser("add", help="create a token (printed once; only its hash is kept)")
    add.add_argument(
        "name",
        help="who holds it, for people to read; the sessions it opens belong to the token itself "
        "(its id), so a name issued again after a revoke starts afresh",
    )
    add.add_argument(
        "--scope",
        action="append",
        required=True,
        metavar="PATTERN",
        help="a scope it may use, e.g. project:shop or user:alice-* (repeatable; * for all)",
    )
    actions.add_parser("list", help="names, grants and creation times (never the tokens)")
    revoke = actions.add_parser("revoke", help="stop accepting a token (takes effect at once)")
    revoke.add_argument("name")
    for p in actions.choices.values():
        common(p)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    from slowave_graph.access.tokens import TokensFile, principal_of

    tokens = TokensFile(settings.tokens_path)
    if args.token_action == "add":
        try:
            token = tokens.add(args.name, args.scope)
        except ValueError as exc:
            print(f"error: {exc}")
            return 2
        print(f"token for {args.name} (scopes: {', '.join(args.scope)}) — shown once, keep it secret:")
        print(token)
        print(f"stored as a hash in {tokens.path}; clients send Authorization: Bearer <token>")
        return 0
    if args.token_action == "list":
        entries = tokens.entries()
        if not entries:
            print(f"no tokens in {tokens.path}")
        for e in entries:
            print(f"{e['name']:<24} {principal_of(e)}  {e['created_at']}  scopes: {', '.join(e['scopes'])}")
        return 0
    if tokens.revoke(args.name):
        print(f"revoked {args.name}")
        return 0
    print(f"error: no token named {args.name!r} in {tokens.path}")
    return 1
