"""The steps of a run, as plain functions: `flows/nightly.py`'s flows call them in their order,
each as a Prefect task (and, outside a flow run, as they are: tests, scripts, `duplirank
repair`); `duplirank ingest` calls them without Prefect.

A run holds the warehouse's lock and one transaction (`open_run`): each step stages its files
and returns their operations, which the run stages (`Run.stage`); `publish` commits them (the
pointer swap, `Warehouse.run`), then `site` builds the results site from that publication,
still under the lock. Nothing is visible before the swap.
"""

from __future__ import annotations

import contextlib
import dataclasses
import shutil
from collections.abc import Iterator
from datetime import date
from pathlib import Path

from flows import progress
from flows.errors import UserError
from flows.settings import Settings
from flows.steps import COMPETITIONS, STEPS, StepContext, ingest_step, replay_step
from flows.steps.plan import backfill_partitions
from flows.storage.operations import Operation
from flows.storage.published import DamagedFile
from flows.storage.store import LOCK, is_url
from flows.storage.warehouse import Transaction, Warehouse, new_run_id


@dataclasses.dataclass
class Summary:
    run_id: str
    ingest: object | None = None  # flows.ingest.IngestResult
    rebuilt: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    published: bool = False
    rescoring: bool = True  # False for `duplirank ingest` (the next nightly rescores)
    site: str | None = None  # what the results site rebuild did
    # a backfill: rows of the gold tables added, removed or changed per month already
    # announced (ended)
    # (None for a month whose rows could not be compared: a file of the previous publication
    # was damaged, which is what the backfill repaired)
    announced_changes: dict[str, int | None] | None = None
    # what the run's Prefect artifacts counted and read once published (flows/artifacts.py),
    # shown again by the command that ran it: quarantined lines by reason, the rankings' top
    # rows as `flows.tools.report.top_rows` gives them (None: not read)
    reasons: dict[str, int] | None = None
    rankings: list | None = None

    def text(self) -> str:
        lines = []
        if self.ingest is not None:
            lines.append(self.ingest.text())
        for competition, parts in sorted(self.rebuilt.items()):
            if parts:
                lines.append(f"{competition}: rescored partitions {', '.join(parts)}")
        if self.rescoring and not any(self.rebuilt.values()):
            lines.append("no partition to rescore")
        lines.append("published a new version" if self.published else "nothing new to publish")
        if self.announced_changes:
            months = ", ".join(
                f"{m} ({'rows not compared' if n is None else f'{n} rows'})"
                for m, n in self.announced_changes.items()
            )
            lines.append(f"changed published months: {months}")
        elif self.announced_changes is not None:
            lines.append("changed no published month")
        if self.site:
            lines.append(self.site)
        return "\n".join(lines)


def open_warehouse(settings: Settings) -> Warehouse:
    """The warehouse of the settings (a local folder or `s3://…`, with `storage.*`)."""
    return Warehouse(settings.warehouse, settings.storage)


@contextlib.contextmanager
def _no_warehouse_left_if_failed(settings: Settings) -> Iterator[None]:
    """A local warehouse folder a run creates is removed again when the run fails with nothing
    in it but its lock file and empty folders: a failed first run leaves no warehouse."""
    root = None if is_url(settings.warehouse) else Path(settings.warehouse)
    new = root is not None and not root.exists()
    try:
        yield
    except BaseException:
        if new and root.is_dir():
            try:
                kept = [p for p in root.rglob("*") if not p.is_dir() and p != root / LOCK]
            except OSError:
                kept = [root]
            if not kept:
                shutil.rmtree(root, ignore_errors=True)
        raise


class Run:
    """A run in progress: its settings, its summary, the warehouse whose lock it holds and its
    one transaction (a plain object, handed to the steps that run in the flow's process)."""

    def __init__(
        self,
        settings: Settings,
        summary: Summary,
        wh: Warehouse,
        tx: Transaction,
        as_of: date | None = None,
    ):
        self.settings, self.summary, self.wh, self.tx, self.as_of = settings, summary, wh, tx, as_of
        self.base = tx.base  # the publication the run builds on (what its steps read)

    def context(self, from_scratch: bool = False) -> StepContext:
        """What the steps receive (plain data, sent to workers): the publication the run
        builds on and every operation staged so far. `from_scratch`: histories recomputed
        from their first record (a backfill)."""
        tx = self.tx
        return StepContext(
            self.settings,
            tx.run_id,
            self.as_of,
            tuple(tx.ops),
            base=self.base,
            pinned=True,
            from_scratch=from_scratch,
        )

    def stage(self, ops: list[Operation]) -> None:
        """Stage a step's operations in the run's transaction (published by `publish`)."""
        self.tx.extend(ops)

    def rescored(self, plan: dict[str, list[str]]) -> None:
        """The partitions rescored (in the summary); their dirty marks cleared."""
        self.summary.rebuilt = {c: parts for c, parts in sorted(plan.items()) if parts}
        for competition, parts in self.summary.rebuilt.items():
            self.tx.mark_dirty(competition, parts, clean=True)


@contextlib.contextmanager
def open_run(settings: Settings, command: str, as_of: date | None = None) -> Iterator[Run]:
    """Take the warehouse's lock and open the run's transaction (`Warehouse.run`): what the
    body has not published when it ends is published then. A local warehouse the run creates
    is removed again if the run fails before it writes anything."""
    summary = Summary(new_run_id(), rescoring=command in ("nightly", "backfill", "repair"))
    wh = open_warehouse(settings)
    with (
        _no_warehouse_left_if_failed(settings),
        wh.run(
            summary.run_id,
            settings.lock_wait_s,
            command=command,
            retention=settings.retention_policy(),
        ) as tx,
    ):
        yield Run(settings, summary, wh, tx, as_of)


# --------------------------------------------------------------------------- the steps
def check_landing(settings: Settings) -> None:
    """The landing folder is a folder that exists (or a URL)."""
    landing = settings.landing
    if not is_url(landing):
        if landing.is_file():
            raise UserError(
                f"landing {landing} is a file; give the folder the servers drop logs into"
            )
        if not landing.is_dir():
            raise UserError(f"landing folder {landing} does not exist")


def ingest(ctx: StepContext, paths: list) -> tuple:
    """Validate and stage the files of `paths` (the landing folder): (IngestResult, ops)."""
    with progress.stage("ingest", unit="files") as bar:
        result, ops = ingest_step(ctx, paths)
        progress.count_ingest(bar, result)
    return result, ops


def plan_nightly(ctx: StepContext) -> dict[str, list[str]]:
    """Per competition, the bronze partitions to rescore: those marked dirty, by this run's
    ingest or by an earlier `duplirank ingest`."""
    dirty = ctx.wh.manifest(list(ctx.pending))["dirty"]
    return {competition: dirty.get(competition, []) for competition in COMPETITIONS}


def plan_backfill(ctx: StepContext, first: str, last: str) -> dict[str, list[str]]:
    """Per competition, every bronze partition that can hold a record published in months
    first..last, whatever the settings (flows/steps/plan.py)."""
    plan = backfill_partitions(ctx, first, last)
    if not any(plan.values()):
        raise UserError(f"no bronze data between {first} and {last} in {ctx.wh.store.url}")
    return plan


def score_partition(ctx: StepContext, competition: str, part: str) -> list[Operation]:
    """The month step of one bronze partition of a competition: its silver and gold rows."""
    return STEPS[competition].month(ctx, part)


def history(ctx: StepContext, competition: str, first: str) -> list[Operation]:
    """A competition's history tables from month `first`, in one piece."""
    return STEPS[competition].history(ctx, first)


def history_plan(ctx: StepContext, competition: str, first: str, parallelism: int):
    """How a sharded history (Simultané: per player) is cut, or None for one piece."""
    sharded = STEPS[competition].sharded
    return None if sharded is None else sharded.plan(ctx, first, parallelism)


def history_shard(ctx: StepContext, competition: str, plan, shard: int) -> list[Operation]:
    """One shard of players of a history (Simultané: their blocks and days)."""
    return STEPS[competition].sharded.shard(ctx, plan, shard)


def history_finish(
    ctx: StepContext, competition: str, plan, shard_ops: list[Operation]
) -> list[Operation]:
    """The shards' files published together, then what needs every player (ranks)."""
    return STEPS[competition].sharded.finish(ctx, plan, shard_ops)


def publish(run: Run) -> bool:
    """Publish what the run staged in one commit — publication N+1, the pointer swapped —
    then collect old files; with nothing staged, check (and repair) what is served."""
    with progress.stage("publish") if run.tx.ops else contextlib.nullcontext():
        run.summary.published = run.tx.publish()
    return run.summary.published


def changes_announced(run: Run) -> dict[str, int | None]:
    """What a backfill changed of the months whose ranking was announced (in the summary)."""
    changes = announced_changes(run.wh, run.base, run.settings.timezone)
    run.summary.announced_changes = changes
    return run.summary.announced_changes


def announced_changes(wh: Warehouse, base: str | None, timezone: str) -> dict[str, int | None]:
    """Rows of the gold tables (the rankings and results players see; the silver ones are
    not read: they can be large) added, removed or changed from publication `base` to the
    current one, per month that had ended (its ranking announced) — what a backfill changed
    of what was published.
    When a file of `base` cannot be read (damaged or missing: the backfill repaired it), the
    months whose files changed are given without a count (None)."""
    from datetime import UTC, datetime

    from flows.storage.diff import diff, published_months
    from flows.storage.publications import month_end

    current = wh.publication()
    if base is None or current is None or current == base:
        return {}
    from flows.storage import catalog

    now = datetime.now(UTC)
    gold = [name for name, table in catalog.tables().items() if table.layer == "gold"]
    try:
        months: dict[str, int | None] = published_months(diff(wh, base, current, gold))
    except (DamagedFile, OSError, polars_errors()) as err:
        from flows import runlog
        from flows.storage import manifest as mf
        from flows.storage.warehouse import Warehouse as Pinned

        runlog.logger.warning("backfill: rows not compared with %s: %s", base, err)
        location = wh.store.url if wh.root is None else wh.root
        storage = getattr(wh.store, "options", None)
        before = Pinned(location, storage, pinned=base).manifest()
        changed = mf.changed_partitions(before, wh.manifest())
        keys = [k for table in gold for k in changed.get(table, [])]
        months = {m: None for k in keys if (m := mf.partition_month(k))}
    return {m: n for m, n in sorted(months.items()) if month_end(m, timezone) <= now}


def polars_errors() -> type[Exception]:
    import polars as pl

    return pl.exceptions.PolarsError


def ingest_run(settings: Settings, paths: list[Path]) -> Summary:
    """`duplirank ingest`: validate and load files into bronze, publish, mark partitions dirty
    (the next nightly rescores them)."""
    with open_run(settings, "ingest") as run:
        run.summary.ingest, ops = ingest_step(run.context(), list(paths))
        run.stage(ops)
        publish(run)
    return run.summary


def replay_run(settings: Settings, reason: str | None = None) -> Summary:
    """`duplirank ingest --replay-quarantine [--reason TEXT]`: quarantined lines that now pass
    go to bronze (the next nightly rescores their partitions)."""
    with open_run(settings, "replay") as run:
        run.summary.ingest, ops = replay_step(run.context(), reason)
        run.stage(ops)
        publish(run)
    return run.summary
