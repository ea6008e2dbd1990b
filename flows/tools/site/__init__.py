"""The results site: static HTML pages of every ranking (issue 12).

    build_site(read_table, out_dir, lang="fr", previous=None) -> SiteReport
    publish_site(read_table, out, lang="fr") -> SiteReport     (staged, then swapped in)
    event_site(standings, board_results, events, out, lang="fr", deals=None)
                                                                   (`score FILE --format html`)

`read_table(name)` returns a published table as a Polars LazyFrame or DataFrame (for a
warehouse: `Warehouse(path).scan`). Modules: `model` (the tables read, fingerprints),
`simultane`, `face_a_face`, `bridge` (each competition's pages: their data, prepared on whole
columns; `deal`: bridge contracts, seats and hand diagrams), `render` (a page from its kind's
Jinja2 template in `templates/`), `tables` and `markup` (the row filler: the rows of the big
tables, one row format over all the rows of a kind), `svg` (charts), `fmt` (values as shown),
`labels` (French and English words), `paths` (where each page lives), `build` (make, write
what changed, swap in).
"""

import importlib

PAGE_INDEX = "_pages.json"  # in the site folder: every page and the digest of its bytes
_NAMES = frozenset({"SiteReport", "build_site", "event_site", "publish_site"})


def __getattr__(name: str):
    """The names of `flows.tools.site.build`, imported when first used (importing the package
    does not load the pages' templates)."""
    if name not in _NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module("flows.tools.site.build"), name)
    globals()[name] = value
    return value


__all__ = ["SiteReport", "build_site", "event_site", "publish_site"]
