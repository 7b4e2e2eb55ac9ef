"""A person's corrections on the dashboard (SLOWAVE_DASHBOARD_ACTIONS): suppress, restore and
supersede from a memory's page in Chromium, each recorded with the token's principal as actor;
refused without the page's form token (or with another memory's), from another site, without
the bearer token, and on a dashboard that only reads. The HTTP app with a bearer token on a real port, real Neo4j."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx2
import pytest
from mcp import Client
from playwright.async_api import Browser
from pydantic import SecretStr

from slowave_graph.app import App
from slowave_graph.commands.dashboard import standalone_site
from slowave_graph.commands.serve import site
from slowave_graph.dashboard import build_dashboard, data
from slowave_graph.dashboard.web import _within_grants
from slowave_graph.mcp.server import build_server
from slowave_graph.operator import corrections, maintenance
from tests.integration.browser.test_dashboard import TOKEN, _follow, _page
from tests.support.mcp_helpers import activate, remember
from tests.support.servers import CLIENT_INFO, serve_in_process

pytestmark = pytest.mark.neo4j

WRONG = "The nightly export job writes its files to /srv/exports on the batch host"
RIGHT = "The nightly export job writes its files to s3://acme-exports since the migration"


@pytest.fixture(scope="module")
async def corrective(app: App) -> AsyncIterator[str]:
    """The HTTP app with a bearer token and dashboard corrections on, on a real port."""
    settings = app.settings.model_copy(update={"auth_token": SecretStr(TOKEN), "dashboard_actions": True})
    with_actions = dataclasses.replace(app, settings=settings)
    async with serve_in_process(site(with_actions, build_server(with_actions))) as base:
        yield base


@pytest.fixture(scope="module")
async def read_only(app: App) -> AsyncIterator[str]:
    settings = app.settings.model_copy(update={"auth_token": SecretStr(TOKEN)})
    plain = dataclasses.replace(app, settings=settings)
    async with serve_in_process(site(plain, build_server(plain))) as base:
        yield base


async def _memory(app: App, scope: str, content: str = WRONG) -> str:
    async with Client(build_server(app), client_info=CLIENT_INFO) as client:
        session = (await activate(client, scope, "Note the export facts"))["session_id"]
        return str((await remember(client, scope, session, content))["memory_id"])


async def _status(app: App, memory_id: str) -> str:
    found = await corrections.show(app.db, memory_id)
    assert found is not None
    return str(found["status"])


async def test_suppress_restore_and_supersede_from_the_memory_page(
    app: App, scope: str, corrective: str, browser: Browser
) -> None:
    memory = await _memory(app, scope)
    page = await _page(browser, token=TOKEN)
    await page.goto(f"{corrective}/ui/memory/{memory}")
    await page.fill("form.correct[action$='/suppress'] input[name=reason]", "points at the old host")
    await _follow(page, "form.correct[action$='/suppress'] button")
    assert page.url == f"{corrective}/ui/memory/{memory}", await page.content()
    assert await page.locator("h1 .badge").inner_text() == "suppressed"
    assert await _status(app, memory) == "suppressed"
    history = page.locator("#corrections tbody tr")
    assert await history.count() == 1
    assert "dashboard:" in await history.first.inner_text()
    assert "points at the old host" in await history.first.inner_text()
    assert await page.locator("form.correct[action$='/supersede']").count() == 0  # only an active one

    await _follow(page, "form.correct[action$='/restore'] button")
    assert await _status(app, memory) == "active"

    await page.fill("form.correct[action$='/supersede'] textarea[name=text]", RIGHT)
    await _follow(page, "form.correct[action$='/supersede'] button")
    newer = re.search(r"/ui/memory/(sch_\d+)$", page.url)
    assert newer is not None and newer.group(1) != memory  # the new memory's page
    assert RIGHT in await page.locator("blockquote.claim").inner_text()
    assert await _status(app, memory) == "stale"
    found = await corrections.show(app.db, memory)
    assert found is not None
    assert [c["action"] for c in found["corrections"]] == ["suppress", "restore", "supersede"]
    assert {c["actor"] for c in found["corrections"]} == {"dashboard:default"}


async def test_cross_site_and_tokenless_posts_change_nothing(
    app: App, scope: str, corrective: str, read_only: str, browser: Browser
) -> None:
    memory = await _memory(app, scope)
    page = await _page(browser, token=TOKEN)
    await page.goto(f"{corrective}/ui/memory/{memory}")
    token = await page.locator("form.correct[action$='/suppress'] input[name=token]").get_attribute("value")
    assert token
    url = f"{corrective}/ui/memory/{memory}/suppress"
    form = {"token": token, "reason": "x"}
    auth = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx2.AsyncClient(headers=auth) as http:
        assert (await http.post(url, data={"reason": "x"})).status_code == 403  # no form token
        other = await _memory(app, scope, "The export job runs at 02:00 UTC")
        stolen = await http.post(f"{corrective}/ui/memory/{other}/suppress", data=form)
        assert stolen.status_code == 403  # a token is for one memory and one action
        cross = await http.post(url, data=form, headers={"Sec-Fetch-Site": "cross-site"})
        assert cross.status_code == 403
        foreign = await http.post(url, data=form, headers={"Origin": "http://evil.example"})
        assert foreign.status_code == 403
        assert (await http.post(f"{read_only}/ui/memory/{memory}/suppress", data=form)).status_code in (
            404,
            405,
        )
        assert await _status(app, memory) == "active" and await _status(app, other) == "active"
        done = await http.post(url, data=form, headers={"Sec-Fetch-Site": "same-origin"})
        assert done.status_code == 303 and await _status(app, memory) == "suppressed"
    async with httpx2.AsyncClient() as http:
        assert (await http.post(url, data=form)).status_code == 401  # the bearer token first


async def test_read_only_dashboard_has_no_forms(
    app: App, scope: str, read_only: str, browser: Browser
) -> None:
    memory = await _memory(app, scope)
    page = await _page(browser, token=TOKEN)
    await page.goto(f"{read_only}/ui/memory/{memory}")
    assert await page.locator("#corrections").count() == 1
    assert await page.locator("form.correct").count() == 0


async def test_the_maintenance_page_lists_passes(app: App, scope: str, read_only: str) -> None:
    await _memory(app, scope)
    run = await maintenance.run_pass(app, actor="dashboard-test", scope=scope)
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        page = await http.get(f"{read_only}/ui/maintenance")
    assert page.status_code == 200
    row = re.search(rf"<tr>(?:(?!</tr>).)*{re.escape(scope)}(?:(?!</tr>).)*</tr>", page.text, re.S)
    assert row is not None and "dashboard-test" in row.group(0) and run.status in row.group(0)


async def test_page_numbers_other_than_a_few_ascii_digits_are_refused(scope: str, read_only: str) -> None:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        for listing in ("memories", "retrievals", "sessions"):
            for page in ("%C2%B2", "1" * 4401, "-1", "1e3", "100001"):
                got = await http.get(f"{read_only}/ui/{listing}?scope={scope}&page={page}")
                assert got.status_code == 400, (listing, page[:12], got.status_code)
            assert (await http.get(f"{read_only}/ui/{listing}?scope={scope}&page=2")).status_code == 200


async def test_the_standalone_dashboard_answers_only_loopback_names(app: App, scope: str) -> None:
    memory = await _memory(app, scope)
    standalone = standalone_site(build_dashboard(app.db, app), app.settings.http_max_body)
    async with serve_in_process(standalone) as base, httpx2.AsyncClient() as http:
        page = await http.get(f"{base}/ui/memory/{memory}")
        assert page.status_code == 200
        token = re.search(r'name="token" value="([0-9a-f]+)"', page.text)
        assert token is not None
        port = base.rsplit(":", 1)[1]
        # a page that rebound evil.example to 127.0.0.1: its requests name its own host
        rebound = {"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"}
        assert (await http.get(f"{base}/ui/memory/{memory}", headers=rebound)).status_code == 421
        posted = await http.post(
            f"{base}/ui/memory/{memory}/suppress",
            data={"token": token.group(1), "reason": "x"},
            headers={**rebound, "Sec-Fetch-Site": "same-origin"},
        )
        assert posted.status_code == 421
    assert await _status(app, memory) == "active"


async def test_pages_show_a_token_nothing_of_scopes_it_is_not_granted(app: App, scope: str) -> None:
    """A lesson of scope A shown in scope B: B's retrieval page hides its text from a token granted B
    only, and A's memory page hides B's questions from a token granted A only."""
    here, there = f"{scope}-a", f"{scope}-b"
    lesson = await _memory(app, here)
    async with Client(build_server(app), client_info=CLIENT_INFO) as client:
        shown = await activate(client, there, "Note the export facts")
    retrieval = str(shown["retrieval_id"])
    # what a travelling lesson leaves: B's retrieval exposed it and assessed it
    await app.db.driver.execute_query(
        "MATCH (r:Retrieval {id: $r}), (m:Memory {id: $m}) "
        "CREATE (r)-[:EXPOSED {rank: 1, pathway: 'direct', page: 1}]->(m), "
        "(r)-[:ASSESSED {event_id: 'fbe_0', seq: 0, status: 'accepted', assessment: 'used', reason: 'secret B reason'}]->(m)",
        r=retrieval, m=lesson, database_=app.db.database,
    )  # fmt: skip
    try:
        both = _page_data("retrieval", await data.retrieval(app.db, retrieval), lambda s: s in (here, there))
        only_b = _page_data("retrieval", await data.retrieval(app.db, retrieval), lambda s: s == there)
        assert [x["target_id"] for x in both["exposures"]] == [lesson]
        assert only_b["exposures"] == []
        seen = await data.memory(app.db, lesson)
        assert seen is not None and "secret B reason" in str(seen["ledger"])
        only_a = _page_data("memory", seen, lambda s: s == here)
        assert "secret B reason" not in str(only_a["ledger"])
    finally:
        await app.db.driver.execute_query(
            "MATCH (:Retrieval {id: $r})-[x:EXPOSED|ASSESSED]->(:Memory {id: $m}) DELETE x",
            r=retrieval, m=lesson, database_=app.db.database,
        )  # fmt: skip


def _page_data(
    key: str, found: dict[str, Any] | None, granted: Callable[[str | None], bool]
) -> dict[str, Any]:
    assert found is not None
    _within_grants(key, found, granted)
    return found
