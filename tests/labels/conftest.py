"""Label-app fixtures: headless Debian Chromium through Playwright."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from labels.helpers import CHROMIUM, CHROMIUM_ARGS


@pytest.fixture(scope="module")
def _chromium() -> Iterator[Any]:
    """One headless Debian Chromium driven by Playwright per test module (and process: the
    browser tests are one xdist group), launched with a fresh temporary user-data dir; its
    start costs ~1.5 s of CPU. Skips when playwright or chromium is missing."""
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="needs the playwright package (pip install playwright)"
    )
    executable = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")
    if executable is None:
        pytest.skip("needs Debian chromium at /usr/bin/chromium (.ci/run installs it)")
    with sync_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def browser(_chromium: Any) -> Iterator[Any]:
    """The module's Chromium for one test: each ``browser.new_context()`` (and each
    ``new_page()``, which makes its own) is an independent annotator, with its own cookies
    and storage; every context the test opened is closed after it."""
    yield _chromium
    for context in list(_chromium.contexts):
        context.close()
