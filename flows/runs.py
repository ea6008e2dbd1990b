"""What a run does — nightly, backfill, ingest — as plain functions, with or without Prefect.

The order of the work lives here once; how each piece runs is given by a `Runner`: `PLAIN`
calls the steps in this process (tests, scripts, no Prefect), `flows/nightly.py` gives Prefect
tasks (task runs, retries on I/O, a Dask cluster). A run stages everything into one
transaction and publishes once, at the end (`Warehouse.run`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import shutil
from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path
from typing import Any, Protocol

from flows import progress
from flows.errors import UserError
from flows.nothing_new import SITE_MARK, site_leftovers, site_problem
from flows.settings import Settings
from flows.steps import COMPETITIONS, STEPS, StepContext, ingest_step, replay_step
from flows.steps.plan import backfill_partitions, first_month
from flows.storage.store import LOCK, is_url
from flows.storage.warehouse import DamagedFile, Warehouse, new_run_id
from transforms.calendar import month_of


class Future(Protocol):
    def result(self) -> Any: ...


@dataclasses.dataclass(frozen=True)
class Runner:
    """How the pieces of a run are executed: `ingest(ctx)` and `history(ctx, competition,
    first)` return their result; `month(ctx, competition, part)` returns a future (all the
    partitions are submitted before any is awaited, so a pool or a cluster runs them at once).
    A sharded history (Simultané: per player) submits `shard(ctx, competition, plan, k)` for
    every shard, then calls `finish(ctx, competition, plan, shard_ops)`; `parallelism` is how
    many tasks can run at once (the cluster's worker threads), the least number of shards.
    """

    ingest: Callable[[StepContext], tuple]
    month: Callable[[StepContext, str, str], Future]
    history: Callable[[StepContext, str, str], list[dict]]
    shard: Callable[[StepContext, str, Any, int], Future]
    finish: Callable[[StepContext, str, Any, list[dict]], list[dict]]
    parallelism: int = 1


class Done:
    """The result of a call already made (the plain runner's future)."""

    def __init__(self, value):
        self.value = value

    def result(self):
        return self.value


PLAIN = Runner(
    ingest=lambda ctx: ingest_step(ctx, [ctx.settings.landing]),
    month=lambda ctx, competition, part: Done(STEPS[competition].month(ctx, part)),
    history=lambda ctx, competition, first: STEPS[competition].history(ctx, first),
    shard=lambda ctx, c, plan, k: Done(STEPS[c].sharded.shard(ctx, plan, k)),
    finish=lambda ctx, c, plan, ops: STEPS[c].sharded.finish(ctx, plan, ops),
)


def history(ctx: StepContext, competition: str, first: str, runner: Runner) -> list[dict]:
    """The operations of a competition's history tables from month `first`: one task, or
    shards of players submitted all at once and one task that finishes."""
    sharded = STEPS[competition].sharded
    if sharded is None:
        return runner.history(ctx, competition, first)
    plan = sharded.plan(ctx, first, runner.parallelism)
    futures = [runner.shard(ctx, competition, plan, k) for k in range(plan.shards)]
    shard_ops = [op for future in futures for op in future.result()]
    return runner.finish(ctx, competition, plan, shard_ops)


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


def rebuild(
    ctx: StepContext, plan: dict[str, list[str]], runner: Runner, floor: str | None = None
) -> tuple[list[dict], dict[str, list[str]]]:
    """Rescore the partitions of each competition, then their history tables; returns the
    operations (published by the caller's one commit) and what was rescored."""
    futures = {
        competition: [runner.month(ctx, competition, p) for p in parts]
        for competition, parts in sorted(plan.items())
        if parts
    }  # every partition of every competition may run at once (a Dask cluster, threads)
    ops: list[dict] = []
    rebuilt: dict[str, list[str]] = {}
    for competition, submitted in futures.items():
        parts = plan[competition]
        month_ops: list[dict] = []
        with progress.stage(f"score {competition}", total=len(parts), unit="partitions") as bar:
            for part, future in zip(parts, submitted, strict=True):
                bar.update(detail=part)
                month_ops += future.result()
                bar.advance()
            bar.update(detail="")
        ops += month_ops
        if STEPS[competition].history is not None:
            first = first_month(parts, floor)
            with progress.stage(f"history {competition}") as bar:
                bar.update(detail=f"from {first}")
                history_ctx = ctx.with_pending([*ctx.pending, *month_ops])
                # a backfill recomputes histories from their start (it rebuilds their state)
                history_ctx = dataclasses.replace(history_ctx, from_scratch=floor is not None)
                ops += history(history_ctx, competition, first, runner)
        rebuilt[competition] = parts
    for competition, parts in rebuilt.items():
        ops.append({"op": "clean", "competition": competition, "months": parts})
    return ops, rebuilt


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


def retention_policy(settings: Settings):
    """The retention of publications the settings give (`retention_days`, `retention.*`)."""
    from flows.storage.retention import RetentionPolicy

    return RetentionPolicy(
        settings.retention_days, settings.retention.keep_official, settings.timezone
    )


def run_context(settings: Settings, tx, as_of: date | None = None) -> StepContext:
    """The steps' context of a run: they read the publication the run builds on."""
    return StepContext(settings, tx.run_id, as_of, base=tx.base, pinned=True)


def nightly_run(settings: Settings, as_of: date | None = None, runner: Runner = PLAIN) -> Summary:
    """Ingest what is new in the landing folder, rescore the partitions it touches, publish."""
    landing = settings.landing
    if not is_url(landing):
        if landing.is_file():
            raise UserError(
                f"landing {landing} is a file; give the folder the servers drop logs into"
            )
        if not landing.is_dir():
            raise UserError(f"landing folder {landing} does not exist")
    summary = Summary(new_run_id())
    wh = open_warehouse(settings)
    site = functools.partial(publish_site, wh, settings, summary)
    with (
        _no_warehouse_left_if_failed(settings),
        wh.run(
            summary.run_id,
            settings.lock_wait_s,
            after_publish=site,
            command="nightly",
            retention=retention_policy(settings),
            unchanged=functools.partial(repair_site, wh, settings, summary),
        ) as tx,
    ):
        ctx = run_context(settings, tx, as_of)
        with progress.stage("ingest", unit="files") as bar:
            summary.ingest, ops = runner.ingest(ctx)
            progress.count_ingest(bar, summary.ingest)
        tx.extend(ops)
        dirty = wh.manifest(tx.ops)["dirty"]
        plan = {c: dirty.get(c, []) for c in COMPETITIONS}
        ops, summary.rebuilt = rebuild(ctx.with_pending(tx.ops), plan, runner)
        tx.extend(ops)
        if as_of is not None and not summary.rebuilt.get("simultane"):
            # % actuel and in_window move with the date even without new data
            first = month_of(as_of, settings.timezone)
            tx.extend(history(ctx.with_pending(tx.ops), "simultane", first, runner))
        summary.published = bool(tx.ops)
    return summary


def backfill_run(
    settings: Settings, first: str, last: str, as_of: date | None = None, runner: Runner = PLAIN
) -> Summary:
    """Recompute months first..last of every competition from bronze (every partition that can
    hold a record published in those months, whatever the settings)."""
    summary = Summary(new_run_id())
    wh = open_warehouse(settings)
    site = functools.partial(publish_site, wh, settings, summary)
    with wh.run(summary.run_id, settings.lock_wait_s, after_publish=site, command="backfill",
                retention=retention_policy(settings),
                unchanged=functools.partial(repair_site, wh, settings, summary)) as tx:  # fmt: skip
        ctx = run_context(settings, tx, as_of)
        base = tx.base
        plan = backfill_partitions(ctx, first, last)
        if not any(plan.values()):
            raise UserError(f"no bronze data between {first} and {last} in {wh.store.url}")
        ops, summary.rebuilt = rebuild(ctx, plan, runner, floor=first)
        tx.extend(ops)
        summary.published = bool(tx.ops)
    summary.announced_changes = announced_changes(wh, base, settings.timezone)
    return summary


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


def publish_site(wh: Warehouse, settings: Settings, summary: Summary) -> None:
    """Rebuild `<warehouse>/site/` from the new publication (staged, then swapped; only the
    pages whose data changed are rewritten). A failure is reported, never unpublishes the
    tables: the next run rebuilds the site."""
    if not settings.site.enabled:
        return
    try:
        with progress.stage("site"):
            summary.site = site_in_warehouse(wh, settings.site.lang, settings)
    except Exception as err:  # noqa: BLE001 — the tables are published; the site waits
        from flows import runlog

        runlog.logger.exception("the results site was not rebuilt")
        summary.site = f"results site not rebuilt: {type(err).__name__}: {err}"
        progress.note(summary.site)


def repair_site(wh: Warehouse, settings: Settings, summary: Summary) -> None:
    """Rebuild the results site if `site_problem` finds it is not what the current publication
    serves (a run killed during its rebuild, a damaged page index). The caller holds the lock."""
    problem = site_problem(wh, settings)
    if problem is not None:
        publish_site(wh, settings, summary)
        if summary.site:
            summary.site = f"results site repaired ({problem}): {summary.site}"


def site_in_warehouse(wh: Warehouse, lang: str, settings: Settings) -> str:
    """Rebuild `<warehouse>/site/` from the current publication; returns what it did.

    On a local folder the site is built beside it and swapped in (flows/tools/site). On object
    storage it is built in a local cache folder kept between runs (so unchanged pages are
    reused), then mirrored object by object: only the pages whose bytes changed are uploaded,
    the page index last, and pages that no longer exist are deleted. Each page is replaced
    whole, but the site as a whole is not swapped atomically (S3 has no rename): during the
    upload a reader may see some pages of the new site beside pages of the old one."""
    from flows.tools.site import publish_site as build
    from flows.tools.site.build import PAGE_INDEX

    def make(out) -> object:
        return build(
            wh.scan, out, lang, timezone=settings.timezone,
            window_results=settings.simultane.window_results,
        )  # fmt: skip

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
        digest = hashlib.sha256((report.out / PAGE_INDEX).read_bytes()).hexdigest()
        wh.store.write_bytes(f"{pointer}/{SITE_MARK}", digest.encode())
    return text


def ingest_run(
    settings: Settings, paths: list[Path], run_id: str | None = None, progress=None
) -> Summary:
    """`duplirank ingest`: validate and load files into bronze, publish, mark partitions dirty
    (the next nightly rescores them). `progress(files done, lines read)`."""
    summary = Summary(run_id or new_run_id(), rescoring=False)
    wh = open_warehouse(settings)
    with (
        _no_warehouse_left_if_failed(settings),
        wh.run(
            summary.run_id,
            settings.lock_wait_s,
            command="ingest",
            retention=retention_policy(settings),
        ) as tx,
    ):
        ctx = run_context(settings, tx)
        summary.ingest, ops = ingest_step(ctx, list(paths), progress)
        tx.extend(ops)
        summary.published = bool(tx.ops)
    return summary


def replay_run(settings: Settings, reason: str | None = None) -> Summary:
    """`duplirank ingest --replay-quarantine [--reason TEXT]`: quarantined lines that now pass
    go to bronze (the next nightly rescores their partitions)."""
    summary = Summary(new_run_id(), rescoring=False)
    wh = open_warehouse(settings)
    with wh.run(summary.run_id, settings.lock_wait_s, command="replay",
                retention=retention_policy(settings)) as tx:  # fmt: skip
        summary.ingest, ops = replay_step(run_context(settings, tx), reason)
        tx.extend(ops)
        summary.published = bool(tx.ops)
    return summary
