"""Cypher where analysts work: `slowave-graph cypher query` (any statement, in a read transaction)
and Neo4j Browser for the managed Neo4j, served on loopback and logged into with Neo4j's own
credentials (Chromium through Playwright)."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator

import httpx2
import pytest
from neo4j.exceptions import Neo4jError
from playwright.async_api import Browser

from slowave_graph.app import App
from slowave_graph.neo4j_local import browser as neo4j_browser
from slowave_graph.neo4j_local.manager import browser_style
from slowave_graph.operator.bulk import import_memories
from tests.support.cli import run_cli
from tests.support.neo4j import Neo4jTarget
from tests.support.servers import serve_in_process

pytestmark = pytest.mark.neo4j


async def test_cypher_query_reads_with_parameters(
    app: App, cli_env: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    statement = "UNWIND range(1, $n) AS i RETURN i, i * i AS square, $label AS label"
    argv = ["cypher", "query", statement, "-p", "n=3", "-p", "label=x' RETURN 1 //", *cli_env]
    assert await run_cli([*argv, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows == [{"i": i, "square": i * i, "label": "x' RETURN 1 //"} for i in (1, 2, 3)]
    assert await run_cli(argv) == 0  # the table form
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["i", "square", "label"] and table[-1] == "(3 rows)"


async def test_cypher_query_refuses_writes(
    app: App, cli_env: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    marker = f"analyst-{uuid.uuid4().hex}"
    for statement in (
        "CREATE (:Memory {id: $id})",
        "MATCH (m:Memory) WITH m LIMIT 1 SET m.touched = $id",
        "CREATE INDEX analyst_probe IF NOT EXISTS FOR (n:Memory) ON (n.touched)",
    ):
        assert await run_cli(["cypher", "query", statement, "-p", f"id={marker}", *cli_env]) == 1
        err = capsys.readouterr().err
        assert "slowave-graph cypher: Neo.ClientError" in err, err
    found = await app.db.driver.execute_query(
        "MATCH (m:Memory) WHERE m.id = $id OR m.touched = $id RETURN count(m) AS n", id=marker,
        database_=app.db.database,
    )  # fmt: skip
    assert found.records[0]["n"] == 0
    indexes = await app.db.driver.execute_query("SHOW INDEXES YIELD name RETURN collect(name) AS names")
    assert "analyst_probe" not in indexes.records[0]["names"]
    assert await run_cli(["cypher", "query", "MATCH (n RETURN n", *cli_env]) == 1  # a syntax error
    assert "SyntaxError" in capsys.readouterr().err


async def test_cypher_query_refuses_what_reads_the_host_or_acts_on_the_server(
    app: App, neo4j: Neo4jTarget, cli_env: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Read-only is not harmless: LOAD CSV reads files and URLs, TERMINATE and some procedures act on
    the server. Each is refused before it runs; reading procedures still run."""
    password_file = (
        "file:///" + str(neo4j.managed.password_file).lstrip("/") if neo4j.managed else "file:///etc/passwd"
    )
    for statement, why in (
        (f"LOAD CSV FROM '{password_file}' AS row RETURN row", "LOAD CSV"),
        ("CALL () { LOAD CSV FROM 'http://127.0.0.1:9/x' AS row RETURN row } RETURN row", "LOAD CSV"),
        ("CALL dbms.killConnections(['bolt-1'])", "dbms.killConnections"),
        ("CALL db.clearQueryCaches()", "db.clearQueryCaches"),
        ("TERMINATE TRANSACTIONS 'neo4j-transaction-1'", "TerminateTransactions"),
    ):
        assert await run_cli(["cypher", "query", statement, *cli_env]) == 1, statement
        err = capsys.readouterr().err
        # (the managed Neo4j refuses file URLs itself, before our check sees the plan)
        assert ("refused" in err and why in err) or "allow_csv_import_from_file_urls" in err, err
        assert "root:" not in err, err
    assert (
        await run_cli(["cypher", "query", "CALL db.labels() YIELD label RETURN count(label) AS n", *cli_env])
        == 0
    )
    assert await run_cli(["cypher", "query", "CALL dbms.components() YIELD name RETURN name", *cli_env]) == 0
    capsys.readouterr()
    if neo4j.managed is not None:  # the managed Neo4j refuses file URLs to every session (the Browser's)
        with pytest.raises(Neo4jError, match="allow_csv_import_from_file_urls"):
            await app.db.driver.execute_query(f"LOAD CSV FROM '{password_file}' AS row RETURN row")


@pytest.fixture(scope="module")
async def served_browser(neo4j: Neo4jTarget, app: App) -> AsyncIterator[str]:
    static = neo4j_browser.ensure_browser(app.settings)  # fetched once from Maven Central
    async with serve_in_process(neo4j_browser.browser_app(static, neo4j.uri)) as base:
        yield base


async def test_neo4j_browser_is_served_on_loopback(served_browser: str, neo4j: Neo4jTarget) -> None:
    assert served_browser.startswith("http://127.0.0.1:")
    async with httpx2.AsyncClient(base_url=served_browser) as http:
        page = await http.get("/browser/")
        assert page.status_code == 200 and "<title>Neo4j Browser</title>" in page.text
        discovery = await http.get("/", headers={"Accept": "application/json"})
        assert discovery.json()["bolt_direct"] == neo4j.uri
        redirect = await http.get("/")
        assert redirect.status_code == 307 and redirect.headers["location"].startswith(
            "/browser/?connectURL="
        )
        assert (await http.get("/browser/../../etc/passwd")).status_code == 404


async def test_neo4j_browser_logs_in_with_neo4j_credentials_only(
    served_browser: str, neo4j: Neo4jTarget, browser: Browser
) -> None:
    """The Browser is behind Neo4j's own authentication: a wrong password gets nowhere, the managed
    one connects over Bolt (WebSocket on the Bolt port)."""
    port = int(served_browser.rsplit(":", 1)[1])
    url = neo4j_browser.browser_url(port, neo4j.uri)
    for password, expected in (
        ("not-the-password", "authentication failure"),
        (neo4j.password, "You are connected as user"),
    ):
        context = await browser.new_context()
        page = await context.new_page()
        await page.goto(url)
        await page.wait_for_selector("[data-testid=password]", timeout=60_000)
        assert await page.input_value("[data-testid=boltaddress]") == neo4j.uri.split("://", 1)[1]
        await page.fill("[data-testid=username]", neo4j.user)
        await page.fill("[data-testid=password]", password)
        await page.click("[data-testid=connect]")
        await page.wait_for_function(
            "text => document.body.innerText.toLowerCase().includes(text.toLowerCase())",
            arg=expected,
            timeout=30_000,
        )
        await context.close()


async def test_neo4j_browser_captions_show_the_memory_words(
    served_browser: str, neo4j: Neo4jTarget, app: App, scope: str, browser: Browser
) -> None:
    """The managed Neo4j hands the Browser a style after it connects (browser.post_connect_cmd): a
    memory's node shows the words of the memory, not an id or an ellipsis."""
    found, _, _ = await app.db.driver.execute_query(
        "CALL dbms.clientConfig() YIELD name, value WHERE name = 'browser.post_connect_cmd' RETURN value",
        database_=app.db.database,
    )
    assert [r["value"] for r in found] == [f"style {browser_style()}"]
    await import_memories(
        app, [{"scope": scope, "content": "Quokkas photograph well at dawn", "type": "fact"}]
    )
    [row], _, _ = await app.db.driver.execute_query(
        "MATCH (m:Memory {scope: $scope}) RETURN m.id AS id", scope=scope, database_=app.db.database
    )
    page = await (await browser.new_context()).new_page()
    await page.goto(neo4j_browser.browser_url(int(served_browser.rsplit(":", 1)[1]), neo4j.uri))
    await page.wait_for_selector("[data-testid=password]", timeout=60_000)
    await page.fill("[data-testid=username]", neo4j.user)
    await page.fill("[data-testid=password]", neo4j.password)
    await page.click("[data-testid=connect]")
    await page.wait_for_function("() => document.body.innerText.includes('You are connected as user')")
    await page.click("[data-testid=activeEditor]")
    await page.keyboard.type(f"MATCH (m:Memory {{id: '{row['id']}'}}) RETURN m")
    await page.click("[data-testid=editor-Run]")
    await page.wait_for_function(
        "() => [...document.querySelectorAll('svg text')].some(t => t.textContent.includes('Quokkas'))",
        timeout=30_000,
    )
