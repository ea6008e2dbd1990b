"""The results site: static HTML pages of every ranking (issue 12).

    build_site(read_table, out_dir, lang="fr", previous=None) -> SiteReport
    publish_site(read_table, out, lang="fr") -> SiteReport     (staged, then swapped in)
    event_site(standings, board_results, events, out, lang="fr")   (`score FILE --format html`)

`read_table(name)` returns a published table as a Polars LazyFrame or DataFrame (for a
warehouse: `Warehouse(path).scan`). Modules: `model` (the tables read, a page), `simultane`,
`face_a_face`, `bridge` (the pages of each competition), `tables` and `svg` (HTML tables and
charts built on whole columns), `fmt` (values as shown), `labels` (French and English words),
`paths` (where each page lives), `build` (render, write what changed, swap in).
"""

from flows.site.build import SiteReport, build_site, event_site, publish_site

__all__ = ["SiteReport", "build_site", "event_site", "publish_site"]
