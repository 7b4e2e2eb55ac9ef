"""Neo4j Browser for the managed Neo4j, served on loopback.

The managed Neo4j is an embedded DBMS with its HTTP connector off (it has no web server), but its
Bolt port also speaks Bolt over WebSocket, which is all Neo4j Browser needs besides its static
files. Those come from Maven Central (``org.neo4j.client:neo4j-browser``; 5.24.0 is the newest
published there, later Browsers ship only inside Neo4j's server distribution), fetched once into
the cache and served from this process on 127.0.0.1. Logging in is Neo4j's own: user ``neo4j``
and the managed password, which this module never prints unless asked. That user can write
(``WRITE_RIGHTS``); the managed Neo4j hands the Browser a style that captions nodes with their text
(``manager.browser_style``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from pathlib import Path
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from slowave_graph.config import Settings
from slowave_graph.neo4j_local.manager import Neo4jLocalError

BROWSER_ARTIFACT = "org.neo4j.client:neo4j-browser"
BROWSER_VERSION = "5.24.0"
DEFAULT_PORT = 7474  # Neo4j's own HTTP port: where users look for the Browser
COPY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy"


def browser_dir(settings: Settings) -> Path:
    return settings.cache_dir / "neo4j-browser" / BROWSER_VERSION


def ensure_browser(settings: Settings) -> Path:
    """The Browser's static files (the jar's ``browser/`` folder), fetched and unpacked once."""
    target = browser_dir(settings)
    if (target / ".complete").is_file():
        return target / "browser"
    mvn = shutil.which("mvn")
    if mvn is None:
        raise Neo4jLocalError("Maven (mvn) is needed once to fetch Neo4j Browser from Maven Central")
    staging = target.with_name(target.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    proc = subprocess.run(
        [mvn, "-q", "-B", COPY_PLUGIN, f"-Dartifact={BROWSER_ARTIFACT}:{BROWSER_VERSION}",
         f"-DoutputDirectory={staging}"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    jars = list(staging.glob("neo4j-browser-*.jar"))
    if proc.returncode != 0 or not jars:
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-15:])
        raise Neo4jLocalError(f"Maven could not fetch {BROWSER_ARTIFACT}:{BROWSER_VERSION}:\n{tail}")
    with zipfile.ZipFile(jars[0]) as jar:
        for entry in jar.infolist():
            # only the web app, and never outside the staging directory
            name = Path(entry.filename)
            if name.parts[:1] != ("browser",) or ".." in name.parts or name.is_absolute():
                continue
            jar.extract(entry, staging)
        jars[0].unlink()
    if not (staging / "browser" / "index.html").is_file():
        raise Neo4jLocalError(f"{BROWSER_ARTIFACT}:{BROWSER_VERSION} holds no browser/index.html")
    (staging / ".complete").write_text(BROWSER_VERSION + "\n")
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    return target / "browser"


def browser_url(port: int, bolt_uri: str) -> str:
    """The page to open: the Browser with its connection form preset to our Bolt URI."""
    return f"http://127.0.0.1:{port}/browser/?connectURL={quote(bolt_uri, safe='')}"


def browser_app(static: Path, bolt_uri: str) -> Starlette:
    """The Browser's files under /browser/, and at / the discovery document Neo4j's HTTP root
    serves (the Browser reads its default connection from it) or a redirect for people."""
    discovery = {"bolt_direct": bolt_uri, "bolt_routing": bolt_uri.replace("bolt://", "neo4j://", 1)}

    async def root(request: Request) -> Response:
        if "application/json" in request.headers.get("accept", ""):
            return JSONResponse(discovery)
        return RedirectResponse(f"/browser/?connectURL={quote(bolt_uri, safe='')}")

    return Starlette(
        routes=[
            Route("/", root),
            Mount("/browser", app=StaticFiles(directory=static, html=True), name="browser"),
        ]
    )


def login_hint(settings: Settings, password_file: Path | None) -> str:
    if settings.neo4j_password is not None:
        return "log in as user neo4j with the password in NEO4J_PASSWORD"
    where = f"in {password_file}" if password_file else "of the managed Neo4j"
    return f"log in as user {settings.neo4j_user} with the password {where} (--show-password prints it)"


# Community Edition has one user and no roles, so the Browser's session can write.
WRITE_RIGHTS = (
    "this login can write: Neo4j Community has one user and no read-only role. A statement that "
    "creates, changes or deletes runs as typed, past the services' checks; `slowave-graph cypher "
    "query` is the read-only way in, and `slowave-graph audit` checks the store after a manual change"
)


def describe(url: str, bolt_uri: str, hint: str) -> str:
    return json.dumps({"browser": url, "bolt": bolt_uri, "login": hint, "access": WRITE_RIGHTS}, indent=2)
