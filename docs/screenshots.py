"""Screenshots of the main pages of a built site, at desktop and phone widths, into
docs/screenshots/ (for the README). Uses the system's Chromium through Playwright.

    .venv/bin/duplirank nightly --landing data/sample --warehouse /tmp/wh
    .venv/bin/duplirank site --warehouse /tmp/wh --out /tmp/site
    .venv/bin/python docs/screenshots.py /tmp/site
"""

from __future__ import annotations

import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

PAGES = {
    "index": "index.html",
    "simultane-month": "simultane/2026-11/index.html",
    "simultane-player": "simultane/joueurs/P0025.html",
    "simultane-tournament": "simultane/tournois/SIM-20261030-1000.html",
    "face-a-face-matches": "face-a-face/2026-10/matches.html",
    "face-a-face-match": "face-a-face/matches/2026-10-31.html#m-F20261030-0009",  # a section
    "bridge-event": "bridge/tournois/BR1-20261031-0001/index.html",
    "bridge-traveller": "bridge/tournois/BR1-20261031-0001/donne-7.html",
}
WIDTHS = {"desktop": (1280, 860), "phone": (390, 844)}
ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update",
        "--disable-sync"]  # fmt: skip


def main(site: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        for width_name, (width, height) in WIDTHS.items():
            page = browser.new_page(viewport={"width": width, "height": height})
            for name, path in PAGES.items():
                page_path, _, anchor = path.partition("#")
                page.goto((site / page_path).as_uri() + (f"#{anchor}" if anchor else ""))
                if name == "face-a-face-matches":  # show the sort by Joueur 1
                    page.locator("#matches thead th").nth(3).locator("button").click()
                if name == "simultane-tournament":  # the deal-by-deal grid
                    page.locator("table.grid").scroll_into_view_if_needed()
                if name == "simultane-player":  # the curve
                    page.locator("svg.chart").scroll_into_view_if_needed()
                page.screenshot(path=out / f"{name}-{width_name}.png")
                print(out / f"{name}-{width_name}.png")
        browser.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve(), Path(__file__).resolve().parent / "screenshots")
