"""Browser fixtures: Debian's Chromium driven by Playwright (a dev dependency), loaded only by the
tests in this folder, which also have the integration fixtures (../conftest.py)."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, async_playwright

CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def chromium() -> str:
    """Debian's Chromium (the project never downloads a browser; `make test` installs it)."""
    found = shutil.which("chromium") or (CHROMIUM if Path(CHROMIUM).exists() else None)
    assert found, "the browser tests need Debian's Chromium: scripts/chromium installs it (make test runs it)"
    return found


@pytest.fixture(scope="module")
async def browser(chromium: str) -> AsyncIterator[Browser]:
    """Chromium driven by Playwright, one per test module."""
    async with async_playwright() as p:
        launched = await p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            await launched.close()
