"""Screenshots of the main pages of a built site, at desktop and phone widths, into
docs/screenshots/ (for the README). Uses the system's Chromium through Playwright.

    .venv/bin/duplirank nightly --landing data/sample --warehouse /tmp/wh
    .venv/bin/duplirank site --warehouse /tmp/wh --out /tmp/site
    .venv/bin/python docs/screenshots.py /tmp/site

It also writes the pages of two bridge event files with `duplirank score FILE --format html`
(a USEBIO Mitchell with the players' names, the KOPS oracle's PBN with its deals) and takes
their standings and a board (`bridge-file-*`). `--bridge-only` takes those alone.
"""

from __future__ import annotations

import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

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
# bridge event files -> (name, page) of the pages `score --format html` writes for each
BRIDGE_FILES = {
    "tests/bridge/data/mitchell.xml": [
        ("bridge-file-mitchell-standings", "index.html"),
        ("bridge-file-mitchell-board", "donne-1.html"),
    ],
    "tests/data/oracles/kops_PCH1003_matchpoints/PCH1003.pbn": [
        ("bridge-file-kops-board", "donne-1.html"),
    ],
}
WIDTHS = {"desktop": (1280, 860), "phone": (390, 844)}
ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update",
        "--disable-sync"]  # fmt: skip


def bridge_pages(folder: Path) -> dict[str, Path]:
    """The pages of `BRIDGE_FILES`, written into `folder`: {screenshot name: page}."""
    from flows.tools.score import score_file

    shots = {}
    for i, (source, pages) in enumerate(BRIDGE_FILES.items()):
        out = folder / f"event-{i}"
        score_file(ROOT / source, None, [], False, "html", out)
        shots |= {name: out / page for name, page in pages}
    return shots


def main(site: Path | None, out: Path, scratch: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    files = bridge_pages(scratch)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        for width_name, (width, height) in WIDTHS.items():
            page = browser.new_page(viewport={"width": width, "height": height})
            for name, path in files.items():
                page.goto(path.as_uri())
                page.screenshot(path=out / f"{name}-{width_name}.png", full_page=True)
                print(out / f"{name}-{width_name}.png")
            for name, path in PAGES.items() if site is not None else ():
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
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        site = None if sys.argv[1] == "--bridge-only" else Path(sys.argv[1]).resolve()
        main(site, Path(__file__).resolve().parent / "screenshots", Path(scratch))
