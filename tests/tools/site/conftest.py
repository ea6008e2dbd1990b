"""Fixtures of the site tests: the sample warehouse built by the real nightly (once per
session), its site, a KOPS oracle event's pages, and a headless Chromium.

Browser tests need the system's Chromium (`/usr/bin/chromium`; `.ci/run` installs it with apt
when missing). Without it they are skipped and the session ends with one line saying why.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from site_support import CHROMIUM, CHROMIUM_ARGS, KOPS_EVENT, SKIP_BROWSER, oracle_dir

from flows import cli
from flows.nightly import nightly
from flows.settings import Settings
from flows.storage.warehouse import Warehouse
from flows.tools.site import build_site
from tests_support import SAMPLE

SKIPPED = "browser tests skipped"


def pytest_collection_modifyitems(config, items):
    if SKIP_BROWSER is None:
        return
    marker = pytest.mark.skip(reason=f"{SKIPPED}: {SKIP_BROWSER}")
    for item in items:
        if "browser" in item.fixturenames:
            item.add_marker(marker)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """One line for the browser tests skipped (counted from the reports: with pytest-xdist the
    tests are collected by the workers, the summary is written by the controller)."""
    reports = terminalreporter.stats.get("skipped", [])
    count = sum(1 for r in reports if SKIPPED in str(getattr(r, "longrepr", "")))
    if count:
        terminalreporter.write_line(f"{count} {SKIPPED}: {SKIP_BROWSER}", yellow=True)


@pytest.fixture(scope="session")
def site_warehouse(harness, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("site-wh")
    nightly(Settings(warehouse=root, landing=SAMPLE))
    return root


@pytest.fixture(scope="session")
def sample_site(site_warehouse, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site") / "site"
    build_site(Warehouse(site_warehouse).scan, out)
    return out


@pytest.fixture(scope="session")
def kops_site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("kops") / "pages"
    source = oracle_dir(KOPS_EVENT) / "results.jsonl"
    assert cli.main(["score", str(source), "--format", "html", "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def chromium(site_warehouse):
    """Chromium for a module of browser tests. Playwright's sync API runs an event loop in this
    thread while it is open, and a Prefect flow called in a thread with a running loop returns
    a coroutine: the sample warehouse is built before it starts, and it stops with its module,
    before another module's flows run in this worker."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def browser(chromium):
    """A fresh page whose every request is recorded; any request not to file:// is aborted
    (and recorded, so a test can assert there was none)."""
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    outside: list[str] = []

    def route(route):
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.outside_requests = outside
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.js_errors = errors
    yield page
    context.close()


def copy_site(site: Path, to: Path) -> Path:
    shutil.copytree(site, to)
    return to
