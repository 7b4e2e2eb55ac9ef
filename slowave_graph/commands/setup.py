"""`slowave-graph setup`: write this server into MCP clients' own configuration files.

Every edit is planned first (nothing is written if any file of a client cannot be edited safely),
keeps other servers and unrelated keys, backs the previous file up with a timestamp, and is
idempotent: a second run changes nothing and makes no backup. ``--dry-run`` prints unified diffs.

Secrets stay out of client files where the client can refer to an environment variable
(clients/registry.py) and out of everything printed: the diffs are redacted, and the output names
the variables to export, never their values. A client that can only hold the value gets it in an
owner-only file, with a warning naming that file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from slowave_graph.clients import (
    CLIENTS,
    Client,
    ClientPlan,
    FileChange,
    SetupError,
    apply,
    plan,
    spec_from_settings,
)
from slowave_graph.clients.instructions import BLOCK
from slowave_graph.clients.redact import redact
from slowave_graph.clients.spec import ENV_NAME, ServerSpec
from slowave_graph.commands import Common
from slowave_graph.config import Settings


def register(sub: argparse._SubParsersAction, common: Common) -> None:
    parser = sub.add_parser(
        "setup",
        help="configure MCP clients (Claude Code, Codex, Cursor, …) to use this server",
        description=(
            "Writes the slowave-graph MCP server into each client's own configuration file, and an "
            "agent-instruction block into its instruction file where it has one. Other servers and "
            "keys are kept; the previous file is backed up (<file>.bak-<timestamp>); running it "
            "again changes nothing."
        ),
    )
    parser.add_argument(
        "--client",
        action="append",
        choices=[*CLIENTS, "all"],
        help="client to configure (repeatable); 'all' = every client found in the home directory",
    )
    parser.add_argument(
        "--transport",
        choices=["http", "stdio"],
        default="http",
        help="http: clients connect to a running `slowave-graph serve` (default); stdio: clients "
        "spawn the server themselves",
    )
    parser.add_argument("--url", help="MCP endpoint for http (default http://127.0.0.1:<port>/mcp)")
    parser.add_argument("--host", help="HTTP host of the server (SLOWAVE_HTTP_HOST)")
    parser.add_argument("--port", type=int, help="HTTP port of the server (SLOWAVE_HTTP_PORT)")
    parser.add_argument(
        "--token-env",
        type=_env_name,
        metavar="VAR",
        help="environment variable clients read the bearer token from (default SLOWAVE_AUTH_TOKEN, "
        "the server's own token); e.g. one holding a token from `slowave-graph token add`",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="print the diffs (secrets masked), write nothing"
    )
    parser.add_argument("--home", help="home directory to configure (default: yours)")
    parser.add_argument("--no-instructions", action="store_true", help="leave instruction files alone")
    parser.add_argument(
        "--print-instructions", action="store_true", help="print the agent-instruction block and exit"
    )
    common(parser)
    parser.set_defaults(handler=run)


def _env_name(value: str) -> str:
    if not ENV_NAME.match(value):
        raise argparse.ArgumentTypeError(f"not an environment variable name: {value!r}")
    return value


def _mode(mode: int | None) -> str:
    return "none" if mode is None else f"{mode:04o}"


def _warn_literal(client_plan: ClientPlan, change: FileChange, before: int | None, dry_run: bool) -> None:
    """Say which file holds a secret as plain text, and how it is protected."""
    title = client_plan.client.title
    what = ", ".join(client_plan.literals)
    if dry_run:
        print(
            f"  warning: {title} cannot read environment variables in its configuration, so "
            f"{change.path} would hold {what} as plain text (owner-only, mode {_mode(change.mode())})"
        )
        return
    mode = change.current_mode()
    was = f", was {_mode(before)}" if before is not None and before != mode else ""
    if mode is not None and mode & 0o077:
        protection = f"mode {_mode(mode)}{was}: others can read it, chmod 600 {change.path}"
    else:
        protection = f"owner-only, mode {_mode(mode)}{was}"
    print(
        f"  warning: {title} cannot read environment variables in its configuration, so "
        f"{change.path} holds {what} as plain text ({protection})"
    )


def _names(titles: list[str]) -> tuple[str, bool]:
    """The titles as a list in prose, and whether there are several."""
    unique = list(dict.fromkeys(titles))
    if len(unique) == 1:
        return unique[0], False
    return f"{', '.join(unique[:-1])} and {unique[-1]}", True


def _guidance(spec: ServerSpec, readers: dict[str, list[str]]) -> list[str]:
    """What to export, by name, for the clients whose files refer to variables."""
    lines = []
    token_var = spec.token.var if spec.token else None
    default_var = Settings.env_names()["auth_token"]
    for var, titles in readers.items():
        who, several = _names(titles)
        reads, passes, where = ("read", "pass", "they start") if several else ("reads", "passes", "it starts")
        if var == token_var and var == default_var:
            lines.append(
                f"{who} {reads} the bearer token from ${var}: export it where {where}, with the value "
                "`slowave-graph serve` runs with (setup read it from this shell)"
            )
        elif var == token_var:
            lines.append(
                f"{who} {reads} the bearer token from ${var}: export it where {where}, holding a "
                "token from `slowave-graph token add` (printed once when created)"
            )
        else:
            lines.append(f"{who} {passes} ${var} on to the server it starts: export it where {where}")
    if lines:
        lines.append(
            "the client files name these variables, never their values; an app started from a desktop "
            "launcher may not see variables exported in a shell: start it from that shell, or set "
            "them in your login environment"
        )
    return lines


def run(args: argparse.Namespace, settings: Settings) -> int:
    if args.print_instructions:
        print(BLOCK, end="")
        return 0
    if not args.client:
        print("slowave-graph setup: name a client with --client (or --client all)", file=sys.stderr)
        return 2
    home = Path(args.home).expanduser() if args.home else Path.home()
    spec = spec_from_settings(settings, args.transport, args.url, args.token_env)
    names = _client_names(args.client, home)
    if names is None:
        return 1
    failures = 0
    readers: dict[str, list[str]] = {}
    for name in names:
        if not _configure(CLIENTS[name], home, spec, args, readers):
            failures += 1
    _closing_notes(spec, settings, readers, args.dry_run)
    return 1 if failures else 0


def _client_names(requested: list[str], home: Path) -> list[str] | None:
    """The clients to configure, in order; None (said on stderr) when 'all' finds none."""
    if "all" in requested:
        names = [name for name, client in CLIENTS.items() if client.installed(home)]
        if not names:
            print(f"no MCP client found under {home}; name one with --client", file=sys.stderr)
            return None
        return names
    return list(dict.fromkeys(requested))


def _configure(
    client: Client, home: Path, spec: ServerSpec, args: argparse.Namespace, readers: dict[str, list[str]]
) -> bool:
    """Plan and apply (or show) one client's changes, adding the variables its files refer to
    to ``readers``; False when its files cannot be edited safely."""
    try:
        client_plan = plan(client, home, spec, instructions=not args.no_instructions)
    except SetupError as exc:
        print(f"✗ {client.title}: {redact(str(exc), spec.secret_values)}", file=sys.stderr)
        return False
    for note in client_plan.notes:
        print(f"  note: {note}")
    for var in client_plan.references:
        readers.setdefault(var, []).append(client.title)
    for change in client_plan.changes:
        _apply_change(client_plan, change, spec, args.dry_run)
    return True


def _apply_change(client_plan: ClientPlan, change: FileChange, spec: ServerSpec, dry_run: bool) -> None:
    """Write one file (or print its diff), saying what happened and where a secret now lies."""
    title = client_plan.client.title
    before = change.current_mode()
    if not change.changed:
        if not dry_run:
            apply(change)  # writes nothing; makes a file holding a secret owner-only again
        print(f"= {title}: {change.path} already up to date")
    elif dry_run:
        print(f"~ {title}: would {'create' if change.old is None else 'change'} {change.path}")
        # The user's own lines can hold secrets too (an older entry, other servers' tokens).
        print(redact(change.diff(), spec.secret_values, patterns=change.private), end="")
    else:
        backup = apply(change)
        saved = f" (previous version: {backup})" if backup else ""
        print(f"✓ {title}: {'created' if change.old is None else 'updated'} {change.path}{saved}")
        if backup and change.old_holds_secret:
            print(
                f"  note: {backup} keeps the secret the previous entry held as plain text "
                f"(owner-only): delete it once {title} works"
            )
    if change.holds_secret:
        _warn_literal(client_plan, change, before, dry_run)


def _closing_notes(
    spec: ServerSpec, settings: Settings, readers: dict[str, list[str]], dry_run: bool
) -> None:
    """What the user still has to do: variables to export, a token to create, a server to run."""
    for line in _guidance(spec, readers):
        print(f"→ {line}")
    if spec.transport == "http" and spec.token is None and settings.tokens_path.exists():
        print(
            f"→ {settings.tokens_path} exists, so the server asks every request for a token, but "
            "SLOWAVE_AUTH_TOKEN is not set here: no Authorization header was written. Create a token "
            "with `slowave-graph token add NAME --scope ...`, export it (e.g. as SLOWAVE_CLIENT_TOKEN) "
            "and run setup again with --token-env SLOWAVE_CLIENT_TOKEN"
        )
    if spec.transport == "http" and not dry_run:
        print(
            f"clients connect to {spec.url}: keep `slowave-graph serve` running, or run it as a "
            "service (at login, restarted on failure, with a daily backup): `slowave-graph service install`"
        )
