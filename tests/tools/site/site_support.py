"""Helpers of the site tests (a module of its own: `tests/tools/site` is not a package, `site` being
a module of Python's standard library)."""

from __future__ import annotations

import os
from pathlib import Path

from tests_support import ORACLES

ROOT = Path(__file__).resolve().parents[3]
CHROMIUM = Path(os.environ.get("DUPLIRANK_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
KOPS_EVENT = "kops_PCH1003_matchpoints"


def oracle_dir(name: str) -> Path:
    """An oracle's folder: the repository's copy when there is one, else `shared/oracles`."""
    for base in (ROOT / "tests" / "data" / "oracles", ORACLES):
        if (base / name).is_dir():
            return base / name
    raise FileNotFoundError(f"oracle {name} not found in tests/data/oracles nor in {ORACLES}")


def _browser_missing() -> str | None:
    if not CHROMIUM.exists():
        return f"Chromium not found at {CHROMIUM} (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (make test installs requirements.lock)"
    return None


SKIP_BROWSER = _browser_missing()
