"""The steps of a run, as plain functions of (warehouse, keys) → staged operations.

Each step reads what it needs from the warehouse (published state + the run's `pending`
operations), calls the pure transforms, writes its output files and returns the operations that
publish them. Prefect tasks in `flows/nightly.py` wrap these one-to-one; nothing here knows about
Prefect, so the same steps run in tests, in a plain script, or on a distributed task runner.

What depends on what (why a month's rebuild reaches later months):
- deal/match/board level results of month M depend only on bronze of month M;
- a player's 20-deal blocks and % actuel run over their whole history: new deals of month M
  change blocks ending in M or later, never earlier ones (a month's deals start in that month);
- Elo runs over all matches in order of end: a change in month M changes ratings from M on;
- so a rebuild of months {M…} recomputes deal-level results of those months, and the
  history-level tables (blocks, monthly, daily, Elo, FF ranking) of every month ≥ min(M…).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import polars as pl

from flows.ingest import IngestResult, Progress, bronze_table, ingest, replay
from flows.settings import Settings
from flows.warehouse import Transaction, Warehouse
from transforms.calendar import month_of
from transforms.deliveries import latest_delivery
from transforms.issues import DATA_ISSUES_SCHEMA
from transforms.record_types import RECORD_TYPES

COMPETITIONS = {
    "simultane": ("simultane.deal",),
    "face_a_face": ("ff.match", "ff.deal", "ff.disconnect"),
    "bridge": ("bridge.event", "bridge.result", "bridge.penalty"),
}


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")


def resolved(frame: pl.LazyFrame, record_type: str) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """(current rows, superseded-record issues), materialised together in one pass.

    Collecting the two halves of `latest_delivery` separately re-enters its cached scan, which
    makes Polars 2.1 panic on multi-file string columns; one `collect_all` avoids it.
    """
    current, superseded = pl.collect_all(list(latest_delivery(frame, record_type)))
    return current.lazy(), superseded.lazy()


def bronze(
    wh: Warehouse, record_type: str, months: list[str], pending=None
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Current bronze rows of some months (re-deliveries resolved) and the superseded ones."""
    table = bronze_table(record_type)
    frame = wh.scan(
        table, [f"month={m}" for m in months], RECORD_TYPES[record_type].schema(), pending
    )
    return resolved(frame, record_type)


def compact_bronze(tx: Transaction, competition: str, month: str) -> None:
    """One file per bronze month instead of one per delivery (faster scans and views)."""
    for record_type in COMPETITIONS[competition]:
        tx.compact("bronze", bronze_table(record_type), f"month={month}")


def later_months(wh: Warehouse, table: str, first: str, pending=None) -> list[str]:
    return [m for m in wh.months(table, pending) if m >= first]


@dataclasses.dataclass
class Summary:
    run_id: str
    ingest: IngestResult | None = None
    rebuilt: dict[str, list[str]] = dataclasses.field(default_factory=dict)

    def text(self) -> str:
        lines = []
        if self.ingest is not None:
            lines.append(self.ingest.text())
        for competition, months in sorted(self.rebuilt.items()):
            if months:
                lines.append(f"{competition}: rebuilt {', '.join(months)}")
        if not any(self.rebuilt.values()):
            lines.append("no month to rebuild")
        return "\n".join(lines)

    def rankings(self, settings: Settings, top: int = 10) -> str:
        from flows.report import rankings_text

        return rankings_text(settings.warehouse, top)


# --------------------------------------------------------------------------- ingest
def run_ingest(
    settings: Settings,
    paths: list[Path],
    run_id: str | None = None,
    progress: Progress | None = None,
) -> Summary:
    """`duplirank ingest`: validate and load files into bronze, publish, mark months dirty."""
    wh = Warehouse(settings.warehouse)
    summary = Summary(run_id or new_run_id())
    with wh.lock(settings.lock_wait_s):
        wh.collect_garbage()
        summary.ingest = ingest_step(wh, summary.run_id, paths, settings, progress=progress)
    return summary


def ingest_step(
    wh: Warehouse,
    run_id: str,
    paths: list[Path],
    settings: Settings,
    as_of: date | None = None,
    progress: Progress | None = None,
) -> IngestResult:
    """Ingest files and publish; a run with nothing new publishes nothing."""
    tx = wh.transaction(run_id)
    result = ingest(
        wh, tx, paths, settings.timezone, settings.ingest, as_of,
        settings.face_a_face_options(), progress,
    )  # fmt: skip
    _publish_ingest(tx, result)
    return result


def run_replay(settings: Settings, reason: str | None = None) -> Summary:
    """`duplirank ingest --replay-quarantine`: quarantined lines that now pass go to bronze."""
    wh = Warehouse(settings.warehouse)
    summary = Summary(new_run_id())
    with wh.lock(settings.lock_wait_s):
        wh.collect_garbage()
        tx = wh.transaction(summary.run_id)
        summary.ingest = replay(
            wh, tx, settings.timezone, reason, settings.ingest, None,
            settings.face_a_face_options(),
        )  # fmt: skip
        _publish_ingest(tx, summary.ingest)
    return summary


def _publish_ingest(tx: Transaction, result: IngestResult) -> None:
    for competition, record_types in COMPETITIONS.items():
        tx.mark_dirty(competition, result.touched(*record_types))
    if tx.ops:
        tx.commit()


# --------------------------------------------------------------------------- simultané
def buckets(rows: int, batch_rows: int) -> int:
    """How many hash buckets keep each batch under `batch_rows` rows."""
    return max(1, -(-rows // batch_rows))


def in_bucket(column: str, bucket: int, count: int) -> pl.Expr:
    """Rows whose key falls in one of `count` stable hash buckets (all rows when count = 1)."""
    if count == 1:
        return pl.lit(True)
    return pl.col(column).hash(seed=0) % count == bucket


def simultane_month(wh: Warehouse, run_id: str, month: str, settings: Settings) -> list[dict]:
    """Deal and tournament results of one month, in tournament batches of ≤ batch_rows."""
    from transforms.simultane.scoring import deal_issues, score_deals
    from transforms.simultane.tournaments import tournament_results

    opts = settings.simultane_options()
    tx = wh.transaction(run_id)
    raw = wh.scan("simultane_deal", [f"month={month}"], RECORD_TYPES["simultane.deal"].schema())
    count = buckets(raw.select(pl.len()).collect().item(), settings.batch_rows)

    key = f"month={month}"
    issue_parts = []
    for bucket in range(count):
        rows = raw.filter(in_bucket("tournament_id", bucket, count))
        deals, superseded = resolved(rows, "simultane.deal")  # deduplicated once, used twice
        deal_results = score_deals(deals, opts).collect()
        tournaments = tournament_results(deal_results.lazy(), opts).collect()
        issue_parts.append(pl.concat([superseded, deal_issues(deals, opts)]).collect())
        # written batch by batch: a month never sits in memory whole
        write = tx.put if bucket == 0 else tx.add
        write("silver", "simultane_deal_results", key, deal_results)
        write("silver", "simultane_tournament_results", key, tournaments)
        if bucket == 0:
            tx.put_schema("silver", "simultane_deal_results", deal_results)
            tx.put_schema("silver", "simultane_tournament_results", tournaments)
        del deals, deal_results, tournaments
    compact_bronze(tx, "simultane", month)
    issues = pl.concat(issue_parts).select(*DATA_ISSUES_SCHEMA)
    tx.put_months("gold", "data_issues", issues, [month], "simultane")
    return tx.ops


def simultane_history(
    wh: Warehouse, run_id: str, first: str, settings: Settings, as_of: date | None, pending
) -> list[dict]:
    """Blocks, % actuel, monthly and daily tables of every month ≥ `first`.

    Blocks run over each player's whole history, in player batches of ≤ batch_rows deals.
    """
    from transforms.simultane.blocks import blocks
    from transforms.simultane.monthly import daily, monthly

    opts = settings.simultane_options()
    tx = wh.transaction(run_id)
    columns = ["player_id", "is_bot", "scored", "played_at", "tournament_id", "deal_no", "pct"]
    history = wh.scan("simultane_deal_results", pending=pending).select(columns)
    count = buckets(history.select(pl.len()).collect().item(), settings.batch_rows)
    as_of_ts = _end_of_day(as_of, settings.timezone) if as_of else None
    latest = as_of_ts or history.select(pl.col("played_at").max()).collect().item()
    block_rows = pl.concat(
        [
            blocks(history.filter(in_bucket("player_id", b, count)), opts, latest).collect()
            for b in range(count)
        ]
    )
    months = later_months(wh, "simultane_tournament_results", first, pending)
    # `in_window` moves with time: blocks of the last window_days may change month too.
    first_block_month = first
    if latest is not None:
        window_start = latest - timedelta(days=opts.window_days)
        first_block_month = min(first, month_of(window_start, opts.timezone))
    block_months = sorted(set(months) | set(block_rows["month"].unique().to_list()))
    block_months = [m for m in block_months if m >= first_block_month]
    tournaments = wh.scan(
        "simultane_tournament_results", [f"month={m}" for m in months], pending=pending
    )
    monthly_rows = monthly(tournaments, block_rows.lazy(), opts, as_of_ts).collect()
    # daily compares each player's days with their results of the month (days x results rows
    # per player): bucket players so that product stays under batch_rows per batch
    expansion = (
        tournaments.group_by("month", "player_id")
        .agg((pl.len() * pl.col("tournament_start").dt.date().n_unique()).alias("rows"))
        .select(pl.col("rows").sum())
        .collect()
        .item()
    )
    daily_count = buckets(expansion or 0, settings.batch_rows)
    daily_rows = pl.concat(
        [
            daily(tournaments.filter(in_bucket("player_id", b, daily_count)), opts).collect()
            for b in range(daily_count)
        ]
    ).sort("month", "player_id", "date")
    tx.put_months("gold", "simultane_blocks", block_rows, block_months)
    tx.put_months("gold", "simultane_monthly", monthly_rows, months)
    tx.put_months("gold", "simultane_daily", daily_rows, months)
    return tx.ops


def _end_of_day(day: date, timezone: str) -> datetime:
    from zoneinfo import ZoneInfo

    local = datetime(day.year, day.month, day.day, 23, 59, 59, 999999, tzinfo=ZoneInfo(timezone))
    return local.astimezone(UTC)


# --------------------------------------------------------------------------- Face-à-Face
def face_a_face_month(wh: Warehouse, run_id: str, month: str, settings: Settings) -> list[dict]:
    """Deal results and scored matches (before Elo) of one month."""
    from transforms.face_a_face.matches import score_matches

    opts = settings.face_a_face_options()
    tx = wh.transaction(run_id)
    matches, superseded_m = bronze(wh, "ff.match", [month])
    deals, superseded_d = bronze(wh, "ff.deal", [month])
    disconnects, superseded_x = bronze(wh, "ff.disconnect", [month])
    scores = score_matches(matches, deals, disconnects, opts)
    issues = pl.concat([superseded_m, superseded_d, superseded_x, scores.issues]).collect()
    compact_bronze(tx, "face_a_face", month)
    tx.put_months("silver", "ff_deal_results", scores.deal_results.collect(), [month])
    tx.put_months("silver", "ff_match_scores", scores.matches.collect(), [month])
    tx.put_months("gold", "data_issues", issues.select(*DATA_ISSUES_SCHEMA), [month], "face_a_face")
    return tx.ops


def face_a_face_history(
    wh: Warehouse, run_id: str, first: str, settings: Settings, as_of: date | None, pending
) -> list[dict]:
    """Elo over all matches in order of end, then ff_matches, ff_elo, ranking of months ≥ first."""
    from transforms.face_a_face.elo import elo_history, with_elo
    from transforms.face_a_face.ranking import monthly_ranking

    opts = settings.face_a_face_options()
    tx = wh.transaction(run_id)
    scored = wh.scan("ff_match_scores", pending=pending)
    elo = elo_history(scored, opts).collect()
    months = later_months(wh, "ff_match_scores", first, pending)
    matches = with_elo(scored.filter(pl.col("month") >= first), elo.lazy(), opts).collect()
    ranking = monthly_ranking(matches.lazy(), elo.lazy(), opts).collect()
    tx.put_months("gold", "ff_matches", matches, months)
    tx.put_months("gold", "ff_elo", elo, sorted(set(months) | set(elo["month"].unique())))
    tx.put_months("gold", "ff_monthly_ranking", ranking, months)
    return tx.ops


# --------------------------------------------------------------------------- bridge
def bridge_month(wh: Warehouse, run_id: str, month: str, settings: Settings) -> list[dict]:
    """Board results and standings of the events dated in one month."""
    from transforms.bridge.event import score_events

    tx = wh.transaction(run_id)
    events, superseded_e = bronze(wh, "bridge.event", [month])
    results, superseded_r = bronze(wh, "bridge.result", [month])
    penalties, superseded_p = bronze(wh, "bridge.penalty", [month])
    scores = score_events(events.collect(), results, penalties)
    month_col = pl.lit(month).alias("month")
    boards = scores.board_results.with_columns(month_col).collect()
    standings = scores.standings.with_columns(month_col).collect()
    issues = pl.concat(
        [superseded_e, superseded_r, superseded_p, scores.issues.with_columns(month_col)],
        how="diagonal_relaxed",
    ).collect()
    compact_bronze(tx, "bridge", month)
    tx.put_months("silver", "bridge_board_results", boards, [month])
    tx.put_months("gold", "bridge_standings", standings, [month])
    tx.put_months("gold", "data_issues", issues.select(*DATA_ISSUES_SCHEMA), [month], "bridge")
    return tx.ops


MonthStep = Callable[[Warehouse, str, str, Settings], list[dict]]
HistoryStep = Callable[[Warehouse, str, str, Settings, date | None, list[dict]], list[dict]]


@dataclasses.dataclass(frozen=True)
class Steps:
    month: MonthStep  # (warehouse, run_id, month, settings) -> staged operations
    history: HistoryStep | None  # (…, first month, settings, as_of, pending ops) -> operations


STEPS: dict[str, Steps] = {
    "simultane": Steps(simultane_month, simultane_history),
    "face_a_face": Steps(face_a_face_month, face_a_face_history),
    "bridge": Steps(bridge_month, None),
}
