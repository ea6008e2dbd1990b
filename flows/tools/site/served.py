"""The results site a warehouse serves (`<warehouse>/site/`, or `site/` objects on S3): built
from the current publication and recorded in its manifest (its fingerprint), checked cheaply,
repaired when it is not the current publication's. Importing this module loads no Polars nor
the pages' templates (the nightly's nothing-new check uses `site_problem`)."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from flows.tools.site import PAGE_INDEX

if TYPE_CHECKING:
    from flows.settings import Settings
    from flows.storage.published import Published


def refresh_site(wh: Published, settings: Settings) -> str | None:
    """Rebuild `<warehouse>/site/` from the new publication (staged, then swapped; only the
    pages whose data changed are rewritten); returns what it did. A failure is reported, never
    unpublishes the tables: the next run rebuilds the site."""
    if not settings.site.enabled:
        return None
    from flows import progress, runlog

    try:
        with progress.stage("site"):
            return site_in_warehouse(wh, settings.site.lang, settings)
    except Exception as err:  # noqa: BLE001 — the tables are published; the site waits
        runlog.logger.exception("the results site was not rebuilt")
        text = f"results site not rebuilt: {type(err).__name__}: {err}"
        progress.note(text)
        return text


def repair_site(wh: Published, settings: Settings) -> str | None:
    """Rebuild the results site if `site_problem` finds it is not what the current publication
    serves (a run killed during its rebuild, a damaged page index); returns what it did. The
    caller holds the lock."""
    problem = site_problem(wh, settings)
    if problem is None:
        return None
    text = refresh_site(wh, settings)
    return f"results site repaired ({problem}): {text}" if text else text


def rebuild_site(wh: Published, lang: str, settings: Settings, out: Path | None = None) -> str:
    """The site of the warehouse's current publication, built under the warehouse's lock (one
    published state for every table read): `<warehouse>/site/`, recorded as the one served
    (`site_in_warehouse`), or the folder `out`; returns what it did."""
    with wh.store.lock(settings.lock_wait_s):
        if out is None:
            return site_in_warehouse(wh, lang, settings)
        return _build(wh, out, lang, settings).text()


def _build(wh: Published, out: Path, lang: str, settings: Settings):
    """The site of the publication `wh` reads, written to the folder `out`; its report."""
    from flows.tools.site.build import publish_site

    return publish_site(
        wh.scan,
        out,
        lang,
        timezone=settings.timezone,
        window_results=settings.simultane.window_results,
    )


def site_in_warehouse(wh: Published, lang: str, settings: Settings) -> str:
    """Rebuild `<warehouse>/site/` from the current publication; returns what it did.

    On a local folder the site is built beside it and swapped in (flows/tools/site). On object
    storage it is built in a local cache folder kept between runs (so unchanged pages are
    reused), then mirrored object by object: only the pages whose bytes changed are uploaded,
    the page index last, and pages that no longer exist are deleted. Each page is replaced
    whole, but the site as a whole is not swapped atomically (S3 has no rename): during the
    upload a reader may see some pages of the new site beside pages of the old one."""

    def make(out) -> object:
        return _build(wh, out, lang, settings)

    pointer = wh.publication()
    if wh.root is not None:
        for leftover in site_leftovers(wh.root):  # of a run killed while it rebuilt the site
            shutil.rmtree(leftover, ignore_errors=True)
        report = make(wh.root / "site")
        text = report.text()
    else:
        report = make(wh.store.cache_folder("site") / "site")
        uploaded, deleted = wh.store.mirror(report.out, "site")
        text = (
            f"site: {report.pages} pages in {wh.store.uri('site')} ({uploaded} uploaded, "
            f"{deleted} deleted, the others unchanged) in {report.seconds:.1f} s"
        )
    if pointer is not None:  # the site now served is this publication's
        from flows.storage.served import record_site

        digest = hashlib.sha256((report.out / PAGE_INDEX).read_bytes()).hexdigest()
        record_site(wh, pointer, digest)
    return text


def site_problem(wh: Published, settings: Settings) -> str | None:
    """What is wrong with the results site as served (None: it is the current publication's,
    unchanged since built, with no staging folder left beside it, or there is no site). A
    cheap check: the fingerprint the publication's manifest records against the site's page
    index, which holds the digest of every page."""
    if not settings.site.enabled:
        return None
    pointer = wh.publication()
    if pointer is None:
        return None
    if wh.root is not None and site_leftovers(wh.root):
        return "a staging folder of an interrupted rebuild is left"
    try:
        index = wh.store.read_bytes(f"site/{PAGE_INDEX}")
    except FileNotFoundError:
        return None  # no site is served (never built: the setting was off)
    recorded = wh.manifest().get("site")  # the fingerprint of the site built from it
    if recorded is None:
        return "not built from the current publication"
    if hashlib.sha256(index).hexdigest() != recorded:
        return "changed since it was built"
    return None


def site_leftovers(root: Path) -> list[Path]:
    return [*root.glob(".site.staging-*"), *root.glob(".site.old-*")]
