"""Prefect flows: `nightly`, `backfill`, and `serve` (the nightly on a cron).

Thin orchestration over `flows/steps/`: a task per step and partition, tasks pass the step
context and staged operations (file lists), never DataFrames; a run publishes once, at the
end (`Warehouse.run`). Tasks are retried only on I/O errors a retry can cure (a network or
file-system hiccup) — a deterministic error fails at once, with one line. Results are not
cached (a cache keyed on inputs would return stale results when a partition's files change).
"""

from __future__ import annotations

import dataclasses
import errno
import functools
from datetime import date

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.states import Failed

from flows import progress
from flows.artifacts import publish_artifacts
from flows.errors import UserError
from flows.settings import Settings
from flows.steps import COMPETITIONS, STEPS, StepContext, ingest_step
from flows.steps.plan import backfill_partitions, first_month
from flows.storage.warehouse import Warehouse, new_run_id
from transforms.calendar import month_of

TRANSIENT = {errno.EAGAIN, errno.ETIMEDOUT, errno.ECONNRESET, errno.ECONNREFUSED, errno.EIO,
             errno.EBUSY, errno.EINTR}  # fmt: skip


def io_retry(task, task_run, state) -> bool:
    """Retry only transient I/O errors; a deterministic failure is not retried."""
    try:
        state.result()
    except OSError as err:
        return err.errno in TRANSIENT or isinstance(err, TimeoutError | ConnectionError)
    except Exception:  # noqa: BLE001
        return False
    return False


RETRY = {"retries": 2, "retry_delay_seconds": 2, "retry_condition_fn": io_retry,
         "cache_policy": NO_CACHE}  # fmt: skip


@task(name="ingest", **RETRY)
def ingest_task(ctx: StepContext):
    return ingest_step(ctx, [ctx.settings.landing])


@task(name="score-partition", task_run_name="{competition}-{part}", **RETRY)
def month_task(ctx: StepContext, competition: str, part: str) -> list[dict]:
    return STEPS[competition].month(ctx, part)


@task(name="history", task_run_name="{competition}-from-{first}", **RETRY)
def history_task(ctx: StepContext, competition: str, first: str) -> list[dict]:
    return STEPS[competition].history(ctx, first)


@dataclasses.dataclass
class Summary:
    run_id: str
    ingest: object | None = None  # flows.ingest.IngestResult
    rebuilt: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    published: bool = False

    def text(self) -> str:
        lines = []
        if self.ingest is not None:
            lines.append(self.ingest.summary_line())
        for competition, parts in sorted(self.rebuilt.items()):
            if parts:
                lines.append(f"{competition}: rescored partitions {', '.join(parts)}")
        if not any(self.rebuilt.values()):
            lines.append("no partition to rescore")
        lines.append("published a new version" if self.published else "nothing new to publish")
        return "\n".join(lines)


def rebuild(
    ctx: StepContext, plan: dict[str, list[str]], floor: str | None = None
) -> tuple[list[dict], dict[str, list[str]]]:
    """Rescore the partitions of each competition, then their history tables; returns the
    operations (published by the caller's one commit) and what was rescored."""
    futures = {
        competition: [month_task.submit(ctx, competition, p) for p in parts]
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
                ops += history_task(history_ctx, competition, first)
        rebuilt[competition] = parts
    for competition, parts in rebuilt.items():
        ops.append({"op": "clean", "competition": competition, "months": parts})
    return ops, rebuilt


USER_ERROR = "user error: "


def _user_errors_as_state(fn):
    """A user error ends the flow run as Failed with its one-line message (no traceback)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except UserError as err:
            return Failed(message=USER_ERROR + str(err))

    return wrapper


@flow(name="nightly", log_prints=False)
@_user_errors_as_state
def nightly_flow(settings: Settings, as_of: date | None = None) -> Summary:
    """Ingest what is new in the landing folder, rescore the partitions it touches, publish."""
    landing = settings.landing
    if landing.is_file():
        raise UserError(f"landing {landing} is a file; give the folder the servers drop logs into")
    if not landing.is_dir():
        raise UserError(f"landing folder {landing} does not exist")
    summary = Summary(new_run_id())
    wh = Warehouse(settings.warehouse)
    with wh.run(summary.run_id, settings.lock_wait_s, settings.retention_days) as tx:
        ctx = StepContext(settings, summary.run_id, as_of)
        with progress.stage("ingest", unit="files") as bar:
            summary.ingest, ops = ingest_task(ctx)
            progress.count_ingest(bar, summary.ingest)
        tx.extend(ops)
        dirty = wh.manifest(tx.ops)["dirty"]
        plan = {c: dirty.get(c, []) for c in COMPETITIONS}
        ops, summary.rebuilt = rebuild(ctx.with_pending(tx.ops), plan)
        tx.extend(ops)
        if as_of is not None and not summary.rebuilt.get("simultane"):
            # % actuel and in_window move with the date even without new data
            first = month_of(as_of, settings.timezone)
            tx.extend(history_task(ctx.with_pending(tx.ops), "simultane", first))
        summary.published = bool(tx.ops)
    publish_artifacts(summary, settings, "nightly")  # Prefect artifacts (flows/artifacts.py)
    return summary


@flow(name="backfill", log_prints=False)
@_user_errors_as_state
def backfill_flow(settings: Settings, first: str, last: str, as_of: date | None = None) -> Summary:
    """Recompute months first..last of every competition from bronze (every partition that can
    hold a record published in those months, whatever the settings)."""
    summary = Summary(new_run_id())
    wh = Warehouse(settings.warehouse)
    with wh.run(summary.run_id, settings.lock_wait_s, settings.retention_days) as tx:
        ctx = StepContext(settings, summary.run_id, as_of)
        plan = backfill_partitions(ctx, first, last)
        if not any(plan.values()):
            raise UserError(f"no bronze data between {first} and {last} in {wh.store.url}")
        ops, summary.rebuilt = rebuild(ctx, plan, floor=first)
        tx.extend(ops)
        summary.published = bool(tx.ops)
    publish_artifacts(summary, settings, "backfill")  # Prefect artifacts (flows/artifacts.py)
    return summary


def nightly(settings: Settings, as_of: date | None = None) -> Summary:
    return _run(nightly_flow, settings=settings, as_of=as_of)


def backfill(settings: Settings, first: str, last: str, as_of: date | None = None) -> Summary:
    return _run(backfill_flow, settings=settings, first=first, last=last, as_of=as_of)


def _run(flow_fn, **kwargs):
    """Run a flow; a user error inside it comes back as a UserError, others re-raise."""
    from flows.prefect_server import prefect_api

    with prefect_api():
        state = flow_fn(**kwargs, return_state=True)
    if state.is_failed() and (state.message or "").startswith(USER_ERROR):
        raise UserError(state.message[len(USER_ERROR) :])
    return state.result()


def run_ingest(settings: Settings, paths, run_id: str | None = None) -> Summary:
    """`duplirank ingest`: validate and load files into bronze, publish, mark partitions dirty
    (the next nightly rebuilds them)."""
    summary = Summary(run_id or new_run_id())
    wh = Warehouse(settings.warehouse)
    with wh.run(summary.run_id, settings.lock_wait_s, settings.retention_days) as tx:
        summary.ingest, ops = ingest_step(StepContext(settings, summary.run_id), list(paths))
        tx.extend(ops)
        summary.published = bool(tx.ops)
    return summary


def serve(settings: Settings) -> None:
    """Serve the nightly flow on `settings.nightly_cron`, in the platform time zone.

    Prefect's temporary server never runs schedules: this needs a running Prefect server
    (`prefect server start`) and `PREFECT_API_URL` pointing at it (see the README), or use an
    OS timer (cron/systemd) calling `duplirank nightly` instead.
    """
    import os

    if not os.environ.get("PREFECT_API_URL"):
        raise UserError(
            "serve needs a Prefect server: run `.venv/bin/prefect server start` and set "
            "PREFECT_API_URL=http://127.0.0.1:4200/api (or schedule `duplirank nightly` with cron)"
        )
    from prefect.schedules import Cron

    nightly_flow.serve(
        name="duplirank-nightly",
        schedules=[Cron(settings.nightly_cron, timezone=settings.timezone)],
        parameters={"settings": settings.model_dump(mode="json")},
    )


__all__ = ["Summary", "backfill", "nightly", "run_ingest", "serve"]
