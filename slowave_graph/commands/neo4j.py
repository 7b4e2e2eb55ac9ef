"""`slowave-graph neo4j start|stop|status|fetch|browser`: the managed local Neo4j."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from slowave_graph.commands import Common
from slowave_graph.config import Settings
from slowave_graph.neo4j_local.lease import ManagedLease


def register(sub: Any, common: Common) -> None:
    neo4j = sub.add_parser("neo4j", help="control the managed local Neo4j")
    neo4j.add_argument(
        "action",
        choices=["start", "stop", "status", "fetch", "browser"],
        help="fetch: download the jars from Maven Central, compile the launcher and record the JVM's "
        "AOT cache (Java 25+, once), without starting; browser: serve Neo4j Browser for this Neo4j "
        "on 127.0.0.1 until Ctrl-C and print its URL and how to log in",
    )
    neo4j.add_argument(
        "--port", dest="browser_port", type=int, default=7474, help="browser: loopback port (default 7474)"
    )
    neo4j.add_argument("--open", action="store_true", help="browser: also open it in a web browser")
    neo4j.add_argument(
        "--show-password", action="store_true", help="browser: print the neo4j user's password too"
    )
    common(neo4j)
    neo4j.set_defaults(handler=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    lease = ManagedLease(settings)
    if args.action == "start":
        status, started = lease.start_kept()
        print(json.dumps({"started": started, **status}, indent=2))
    elif args.action == "stop":
        print(json.dumps({"stopped": lease.stop()}))
    elif args.action == "browser":
        return _neo4j_browser(settings, lease, args)
    elif args.action == "fetch":
        from slowave_graph.workload.jvm_training import trainer

        fetched = lease.neo4j.fetch()
        cache = lease.neo4j.train_aot_cache(trainer(settings))
        print(json.dumps({**fetched, "aot_cache": None if cache is None else str(cache)}, indent=2))
    else:
        print(json.dumps(lease.status(), indent=2))
    return 0


def _neo4j_browser(settings: Settings, lease: ManagedLease, args: argparse.Namespace) -> int:
    """Neo4j Browser on loopback for the managed Neo4j (or NEO4J_URI's), in the foreground."""
    import webbrowser

    import uvicorn

    from slowave_graph.neo4j_local import browser
    from slowave_graph.neo4j_local.manager import port_is_free

    if not port_is_free(args.browser_port):
        print(f"slowave-graph: port {args.browser_port} is taken; pick another with --port", file=sys.stderr)
        return 1
    static = browser.ensure_browser(settings)
    if settings.managed:
        uri, _, password = lease.acquire()
        password_file: Path | None = lease.neo4j.password_file if settings.neo4j_password is None else None
    else:
        assert settings.neo4j_uri is not None
        uri, password_file = settings.neo4j_uri, None
        password = settings.neo4j_password.get_secret_value() if settings.neo4j_password else ""
    try:
        url = browser.browser_url(args.browser_port, uri)
        print(browser.describe(url, uri, browser.login_hint(settings, password_file)), flush=True)
        if args.show_password:
            print(f"password: {password}", flush=True)
        if args.open:
            webbrowser.open(url)
        app = browser.browser_app(static, uri)
        uvicorn.run(app, host="127.0.0.1", port=args.browser_port, log_level="warning")
    finally:
        if settings.managed:
            lease.release()
    return 0
