"""The dashboard end to end: a scope seeded through the real MCP tools over HTTP (the suite's server
process), the same HTTP app with a bearer token on a real port, and Debian's Chromium driven by
Playwright.

Chromium must be installed (`make test` installs Debian's when it can, scripts/chromium): without it
these tests fail, they never skip. Screenshots go to pytest's temporary directory, never the repository.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from playwright.async_api import Browser, Page
from pydantic import SecretStr

from slowave_graph.app import App
from slowave_graph.commands.serve import site as serve_site
from slowave_graph.mcp.server import build_server
from tests.support.mcp_helpers import activate, call, commit, ok, recall
from tests.support.servers import CLIENT_INFO, serve_in_process

pytestmark = pytest.mark.neo4j

TOKEN = "dashboard-test-token"
XSS = '<script>alert("xss")</script><img src=x onerror=alert(1)> Checkout serves its admin UI on port 8443.'
CLAIMS = [
    "Checkout retries failed payment webhooks three times with exponential backoff.",
    "The payments team keeps the checkout webhook signing secrets in Vault under secret/payments.",
    "Checkout deploys must pin STRIPE_API_VERSION to 2024-06-20.",
    XSS,
]
CORRECTION = "Checkout deploys must pin STRIPE_API_VERSION to 2025-01-15 since the January upgrade."


async def _assess(client: Client, result: dict[str, Any], used: set[str], **stale: Any) -> None:
    """Feedback on everything a retrieval showed: `used` for ``used``, stale for ``stale['id']``."""
    entries = []
    for m in result["memories"]:
        if m["memory_id"] == stale.get("id"):
            entries.append(
                {"memory_id": m["memory_id"], "assessment": "stale", "stale_reason": "superseded",
                 "reason": "The API version was upgraded in January.",
                 "replacement_memory_id": stale["replacement"]}
            )  # fmt: skip
        elif m["memory_id"] in used:
            entries.append({"memory_id": m["memory_id"], "assessment": "used", "effect": "helped"})
        else:
            entries.append({"memory_id": m["memory_id"], "assessment": "not_used"})
    procedures = [
        {"procedure_id": p["procedure_id"], "use": "used", "effect": "helped",
         "contribution": "Followed its steps to re-check the webhook retries."}
        for p in result["procedures"]
    ]  # fmt: skip
    data = ok(
        await call(
            client,
            "slowave_feedback",
            {"retrieval_id": result["retrieval_id"], "memory_feedback": entries,
             "procedure_feedback": procedures, "coverage": "complete"},
        )
    )  # fmt: skip
    assert data["rejected"] == [] and data["coverage"] == "complete", data


async def seed(client: Client, scope: str) -> dict[str, Any]:
    """Two tasks: memories, co-use, a correction chain, a procedure that later helps."""
    first = await activate(client, scope, "Harden the checkout payment webhooks")
    session = first["session_id"]
    await _assess(client, first, set())
    stored = ok(
        await call(
            client,
            "slowave_remember",
            {"scope": scope, "session_id": session,
             "memories": [{"content": c, "type": "fact"} for c in CLAIMS]},
        )
    )  # fmt: skip
    ids = [r["data"]["memory_id"] for r in stored["results"]]
    retries, secrets, pinned, xss = ids
    webhooks = await recall(
        client, scope, session, "How does checkout handle webhook retries and signing secrets?"
    )
    shown = {m["memory_id"] for m in webhooks["memories"]}
    assert {retries, secrets} <= shown, webhooks
    await _assess(client, webhooks, {retries, secrets})
    correction = ok(
        await call(
            client,
            "slowave_remember",
            {"scope": scope, "session_id": session, "content": CORRECTION, "type": "fact"},
        )
    )["memory_id"]
    versions = await recall(client, scope, session, "Which STRIPE_API_VERSION must checkout deploys pin?")
    assert pinned in {m["memory_id"] for m in versions["memories"]}, versions
    await _assess(client, versions, {correction}, id=pinned, replacement=correction)
    await commit(
        client,
        session,
        procedure={
            "summary": "Harden webhook handling in checkout",
            "context": {"service": "checkout"},
            "steps": [{"summary": "Check the retry policy"}, {"summary": "Rotate the Vault secret"}],
            "caveats": ["Staging uses a different Vault path"],
        },
        trajectory=[{"kind": "action", "summary": "Read the webhook handler", "status": "succeeded"}],
    )
    second = await activate(client, scope, "Fix checkout webhook retries after the outage")
    assert second["procedures"], second
    await _assess(client, second, {m["memory_id"] for m in second["memories"]})
    await commit(client, second["session_id"], outcome="partial")
    return {"retries": retries, "secrets": secrets, "pinned": pinned, "xss": xss, "correction": correction,
            "recall": webhooks["retrieval_id"], "session": session}  # fmt: skip


@pytest.fixture(scope="module")
async def site(http_url: str) -> dict[str, Any]:
    """A scope seeded through the MCP endpoint of the suite's server process (no token)."""
    scope = f"test:dash{uuid.uuid4().hex[:10]}"
    async with Client(streamable_http_client(http_url), client_info=CLIENT_INFO) as client:
        ids = await seed(client, scope)
    return {"base": http_url.removesuffix("/mcp"), "scope": scope, **ids}


@pytest.fixture(scope="module")
async def guarded(app: App) -> AsyncIterator[str]:
    """The same HTTP app with SLOWAVE_AUTH_TOKEN set, served on a real port (in this process)."""
    settings = app.settings.model_copy(update={"auth_token": SecretStr(TOKEN)})
    with_token = dataclasses.replace(app, settings=settings)
    async with serve_in_process(serve_site(with_token, build_server(with_token))) as base:
        yield base


async def _page(browser: Browser, token: str | None = None) -> Page:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    context = await browser.new_context(extra_http_headers=headers, viewport={"width": 1280, "height": 900})
    page = await context.new_page()
    page.on("dialog", lambda dialog: pytest.fail(f"a script ran in the page: {dialog.message}"))
    return page


async def _follow(page: Page, selector: str) -> None:
    """Click a link or submit button and wait for the page it loads: a bare click returns before the
    navigation finishes, so the next locator could read the old page."""
    async with page.expect_navigation():
        await page.click(selector)


async def test_dashboard_requires_the_bearer_token(
    site: dict[str, Any], guarded: str, browser: Browser
) -> None:
    anonymous = await (await _page(browser, token=None)).goto(f"{guarded}/ui/")
    assert anonymous is not None and anonymous.status == 401
    wrong = await (await _page(browser, token="wrong")).goto(f"{guarded}/ui/memories?scope={site['scope']}")
    assert wrong is not None and wrong.status == 401
    page = await _page(browser, token=TOKEN)
    allowed = await page.goto(f"{guarded}/ui/memories?scope={site['scope']}")
    assert allowed is not None and allowed.status == 200
    assert await page.locator("table.memories tbody tr").count() == 4
    home = await page.goto(f"{guarded}/")  # the server's address leads to the dashboard
    assert home is not None and home.status == 200 and page.url == f"{guarded}/ui/"
    async with httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {TOKEN}"}
    ) as http:  # served on this loop
        assert (await http.post(f"{guarded}/ui/")).status_code == 405  # read-only: GET only


async def test_memories_search_and_filters(site: dict[str, Any], browser: Browser, tmp_path: Path) -> None:
    page = await _page(browser)
    response = await page.goto(f"{site['base']}/ui/")
    assert response is not None and response.status == 200
    assert "script-src" not in (response.headers.get("content-security-policy") or "")  # no scripts at all
    # the index lists the fullest scopes; the test's own is found by name, as in a large store
    await page.goto(f"{site['base']}/ui/?find={site['scope'].split(':', 1)[1]}")
    await _follow(page, f"text={site['scope']}")
    rows = page.locator("table.memories tbody tr")
    assert await rows.count() == 4  # five memories, of which the superseded one is stale
    # Stored text is shown as text: the XSS claim appears literally and nothing executed.
    assert await page.locator("td.content", has_text='<script>alert("xss")</script>').count() == 1
    assert await page.evaluate("document.querySelectorAll('script, img').length") == 0
    await page.screenshot(path=str(tmp_path / "memories.png"), full_page=True)

    await page.fill("input[name=q]", "Vault signing secrets")
    await _follow(page, "button[type=submit]")
    found = page.locator("table.memories tbody tr")
    assert await found.count() == 1  # no other memory holds any of these words
    assert await found.first.locator("td").first.inner_text() == site["secrets"]
    assert "Vault signing secrets" in await page.locator("#result-note").inner_text()
    await page.screenshot(path=str(tmp_path / "search.png"), full_page=True)

    await page.select_option("select[name=status]", "stale")
    await page.fill("input[name=q]", "")
    await _follow(page, "button[type=submit]")
    stale = page.locator("table.memories tbody tr")
    assert await stale.count() == 1
    assert await stale.first.locator("td").first.inner_text() == site["pinned"]

    await page.fill("input[name=q]", "the of and")  # only stopwords: nothing to search for
    await _follow(page, "button[type=submit]")
    assert await page.locator("p.empty").count() == 1


async def test_memory_detail_graph_provenance_chain_and_ledger(
    site: dict[str, Any], browser: Browser, tmp_path: Path
) -> None:
    page = await _page(browser)
    await page.goto(f"{site['base']}/ui/memory/{site['secrets']}")
    nodes = page.locator("svg.graph circle.node")
    ids = {await n.get_attribute("data-id") for n in await nodes.all()}
    # itself; co-used and remembered next to the retry claim; the pinned claim remembered after it;
    # one hop further, the correction that superseded the pinned claim
    assert {site["secrets"], site["retries"], site["pinned"], site["correction"]} <= ids, ids
    for kind in ("associated", "next", "supersedes"):
        assert await page.locator(f"svg.graph path.edge.{kind}").count() >= 1, kind
    assert await page.locator("#provenance tbody tr").count() >= 1
    # what the memory is about, each concept leading to the scope's memories that name it
    concepts = {await c.inner_text() for c in await page.locator("#concepts a.concept").all()}
    assert any(c.startswith("Vault") for c in concepts), concepts
    await _follow(page, "#concepts a.concept.entity >> text=Vault")
    assert site["secrets"] in await page.locator("table.memories").inner_text()
    await page.goto(f"{site['base']}/ui/memory/{site['secrets']}")
    ledger = page.locator("#ledger tbody tr")
    assert await ledger.count() >= 1 and "used" in await ledger.first.inner_text()
    await page.screenshot(path=str(tmp_path / "memory.png"), full_page=True)

    await page.goto(f"{site['base']}/ui/memory/{site['pinned']}")
    chain = await page.locator("#supersession tbody").inner_text()
    assert site["correction"] in chain and site["pinned"] in chain and "stale" in chain
    assert "stale" in await page.locator("#ledger tbody").inner_text()
    await page.screenshot(path=str(tmp_path / "stale.png"), full_page=True)

    missing = await page.goto(f"{site['base']}/ui/memory/sch_999999999")
    assert missing is not None and missing.status == 404


async def test_retrievals_procedures_and_sessions(
    site: dict[str, Any], browser: Browser, tmp_path: Path
) -> None:
    page = await _page(browser)
    await page.goto(f"{site['base']}/ui/retrievals?scope={site['scope']}")
    assert await page.locator("tbody tr").count() == 4  # two activations, two recalls
    await _follow(page, f"text={site['recall']}")
    exposures = page.locator("table.exposures tbody tr")
    assert await exposures.count() >= 2
    text = await page.locator("table.exposures").inner_text()
    assert "used" in text and "not assessed" not in text
    await page.screenshot(path=str(tmp_path / "retrieval.png"), full_page=True)

    await page.goto(f"{site['base']}/ui/procedures?scope={site['scope']}")
    procedure = page.locator("article.procedure")
    assert await procedure.count() == 1
    assert "helped 1" in await procedure.locator(".tallies").inner_text()
    await page.screenshot(path=str(tmp_path / "procedures.png"), full_page=True)

    await page.goto(f"{site['base']}/ui/sessions?scope={site['scope']}")
    sessions = page.locator("ol.timeline li.session")
    assert await sessions.count() == 2
    assert "partial" in await sessions.first.inner_text()  # newest first
    await page.screenshot(path=str(tmp_path / "sessions.png"), full_page=True)
    await _follow(page, f"text={site['session']}")
    timeline = await page.locator("ol.timeline").inner_text()
    assert site["recall"] in timeline and "Read the webhook handler" in timeline
    await page.screenshot(path=str(tmp_path / "session.png"), full_page=True)
