"""What a run did, as Prefect artifacts (shown on the flow run's page of the Prefect UI).

`publish_artifacts` is called at the end of the nightly and backfill flows: one markdown
artifact with the run's summary (files, lines, quarantine reasons, months rebuilt, time of each
stage) and one table artifact per ranking with its top rows (the rankings `duplirank nightly`
prints, `flows/tools/report.py`). Keys are stable (`duplirank-run-summary`, `<table>-top`), so the
Prefect UI also shows each one's history across runs.

`quarantine_reasons` counts the lines a run quarantined by reason (standalone numbers in a
reason are replaced by `N`, so `duplicate of line 3` and `duplicate of line 9` count together);
the CLI's final summary shows the same counts.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from flows import progress
from flows.errors import UserError

if TYPE_CHECKING:  # Polars is loaded for the ranking tables only
    import polars as pl

SUMMARY_KEY = "duplirank-run-summary"
MAX_REASONS = 12

logger = logging.getLogger("duplirank")


def _run_shas(summary) -> list[str]:
    ingest = getattr(summary, "ingest", None)
    if ingest is None:
        return []
    # files not read (unknown suffix, not a regular file, a refused symlink) have no sha256
    return sorted({f.sha256 for f in ingest.files if f.sha256 and f.status != "already_ingested"})


def quarantine_reasons(warehouse: Path, summary, session=None) -> dict[str, int]:
    """Lines quarantined by this run's files, by reason (most frequent first); `session`: a
    `flows.tools.query.Session` of the warehouse to run the query on."""
    from flows.tools.query import run_sql

    shas = _run_shas(summary)
    if not shas or not sum(f.rows_quarantined for f in summary.ingest.files):
        return {}
    query = session.run if session is not None else functools.partial(run_sql, warehouse)
    try:
        frame = query(
            r"""
            select regexp_replace(reason, '(^|[\s.(=])[0-9]+', '\1N', 'g') as reason,
                   sum(coalesce(line_count, 1))::bigint as n
            -- a row stands for line_count lines (a column older quarantine files lack: 1)
            from (select null::bigint as line_count where false
                  union all by name select * from quarantine)
            where list_contains($shas, sha256)
            group by 1
            order by n desc, reason
            """,
            {"shas": shas},
        )
    except UserError:  # no quarantine table published (nothing was ever quarantined)
        return {}
    counts = dict(zip(frame["reason"].to_list(), frame["n"].to_list(), strict=True))
    if len(counts) > MAX_REASONS:
        kept = dict(list(counts.items())[: MAX_REASONS - 1])
        kept["(other reasons)"] = sum(counts.values()) - sum(kept.values())
        counts = kept
    return counts


def _duration(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 60 else f"{seconds / 60:.1f} min"


def summary_markdown(summary, reasons: dict[str, int], flow: str) -> str:
    """The markdown of the run-summary artifact."""
    lines = [f"# duplirank {flow} — run {summary.run_id}", ""]
    lines += [f"    {line}" for line in summary.text().splitlines()]
    ingest = getattr(summary, "ingest", None)
    if ingest is not None and ingest.files:
        files = ingest.files
        lines += [
            "",
            "| files | already ingested | unreadable | lines read | rows accepted | quarantined |",
            "|---:|---:|---:|---:|---:|---:|",
            f"| {len(files)} | {sum(f.status == 'already_ingested' for f in files)} "
            f"| {sum(f.status == 'unreadable' for f in files)} "
            f"| {sum(f.lines_read for f in files):,} | {sum(f.rows_accepted for f in files):,} "
            f"| {sum(f.rows_quarantined for f in files):,} |",
        ]
    if reasons:
        lines += ["", "## Quarantined lines by reason", "", "| reason | lines |", "|---|---:|"]
        lines += [f"| {reason} | {n:,} |" for reason, n in reasons.items()]
    rebuilt = {c: m for c, m in sorted(summary.rebuilt.items()) if m}
    lines += ["", "## Months rebuilt", ""]
    lines += [f"- **{c}**: {', '.join(m)}" for c, m in rebuilt.items()] or ["- none"]
    changes = getattr(summary, "announced_changes", None)
    if changes is not None:  # a backfill: what it changed of the announced rankings
        lines += ["", "## Published months changed", ""]
        lines += [
            f"- **{m}**: "
            + (
                "rows not compared (the previous file was damaged)"
                if n is None
                else f"{n} rows added, removed or changed"
            )
            for m, n in changes.items()
        ]
        lines += [] if changes else ["- none"]
    timings = progress.reporter().timings()
    if timings:
        lines += ["", "## Stages", "", "| stage | time | done |", "|---|---:|---|"]
        lines += [f"| {name} | {_duration(s)} | {done} |" for name, s, done in timings]
    return "\n".join(lines) + "\n"


def _jsonable(frame: pl.DataFrame) -> list[dict]:
    """Rows of a frame with dates, times and decimals as JSON-friendly values."""
    import polars as pl

    return frame.with_columns(
        pl.col(pl.Date, pl.Datetime, pl.Time, pl.Duration).cast(pl.String),
        pl.col(pl.Decimal).cast(pl.Float64),
    ).to_dicts()


class _Reader:
    """Queries of duplirank's own (`.run(query, params)`, as a `flows.tools.query.Session`'s)
    on a publication's views database, attached read-only. The run that just published
    built or checked that database: what `duplirank sql` adds for a user's query (its bytes
    hashed against the manifest, every listed file resolved, paths and settings locked) is
    left out."""

    def __init__(self, con):
        self.con = con

    def run(self, query: str, params: dict | None = None) -> pl.DataFrame:
        import duckdb

        try:
            return self.con.sql(query, params=params or None).pl()
        except duckdb.Error as err:
            raise UserError(" ".join(str(err).split())[:500]) from None

    def __enter__(self) -> _Reader:
        return self

    def __exit__(self, *exc) -> None:
        self.con.close()


def published_reader(settings):
    """A reader of the current publication of `settings.warehouse` (None: nothing published):
    its views database attached as it is when its bytes are those of its manifest, else (a
    database the run did not build or check) the checked session of `duplirank sql`."""
    import duckdb

    from flows.runs import open_warehouse
    from flows.storage.published import DATABASE
    from flows.storage.served import database_intact
    from flows.tools.query import Session

    try:
        wh = open_warehouse(settings)
        publication = wh.publication()
        if publication is None or not wh.store.has(f"{publication}/{DATABASE}"):
            return None
        wh = wh.at(publication)
        database = wh.store.fetch(f"{publication}/{DATABASE}")
        if database_intact(wh, publication, database) is True:
            con = duckdb.connect()
            try:
                wh.store.prepare_duckdb(con)
                con.execute("attach $path as duplirank (read_only)", {"path": str(database)})
                con.execute("use duplirank")
            except BaseException:
                con.close()
                raise
            return _Reader(con)
        return Session(wh)
    except UserError:  # no warehouse, or a damaged publication: no tables to show
        return None


def publish_artifacts(summary, settings, flow: str, top: int = 10) -> list:
    """Create the run's artifacts (inside a flow run); returns their ids.

    A failure here is logged, never fails the run: the tables are already published. What it
    reads is kept in the summary (`reasons`, `rankings`): the command that ran the flow shows
    them without reading them again.
    """
    from prefect.artifacts import create_markdown_artifact, create_table_artifact

    from flows.tools.report import top_rows

    ids = []
    try:
        session = published_reader(settings)  # None: nothing published yet
        with session or contextlib.nullcontext():
            reasons = quarantine_reasons(settings.warehouse, summary, session)
            summary.reasons = reasons
            ids.append(
                create_markdown_artifact(
                    key=SUMMARY_KEY,
                    markdown=summary_markdown(summary, reasons, flow),
                    description=f"what this {flow} run did",
                )
            )
            rankings = list(top_rows(session, top)) if session else []
            if session:
                summary.rankings = rankings
            for title, table, frame in rankings:
                if isinstance(frame, UserError):
                    logger.warning("artifact %s not published: %s", table, frame)
                    continue
                ids.append(
                    create_table_artifact(
                        key=f"{table.replace('_', '-')}-top",
                        table=_jsonable(frame),
                        description=title,
                    )
                )
    except Exception:  # noqa: BLE001  (reported in the run's log, the run has succeeded)
        logger.warning("could not publish the run's Prefect artifacts", exc_info=True)
    return ids
