"""Prefect flows: `nightly`, `backfill`, and `serve` (the nightly on a cron).

Thin orchestration over `flows/pipeline.py`: a task per step and partition (a month), tasks
pass keys and staged operations (file lists), never DataFrames; one commit publishes the run.
Retries are on I/O steps only. Results are not cached (a cache keyed on inputs would return
stale results when a month's files change).

Runs are serialised by the warehouse lock. A run whose ingest was published but whose rebuild
crashed leaves its months marked dirty in the manifest: the next run rebuilds them.
"""

from __future__ import annotations

import functools
import os
import sys
from datetime import date

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings
from prefect.states import Failed

from flows import pipeline
from flows.settings import Settings
from flows.warehouse import UserError, Warehouse


def _progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


@task(name="ingest", retries=2, retry_delay_seconds=2, cache_policy=NO_CACHE)
def ingest_task(settings: Settings, run_id: str, as_of: date | None = None):
    wh = Warehouse(settings.warehouse)
    return pipeline.ingest_step(wh, run_id, [settings.landing], settings, as_of)


@task(name="score-month", cache_policy=NO_CACHE, task_run_name="{competition}-{month}")
def month_task(settings: Settings, run_id: str, competition: str, month: str) -> list[dict]:
    step = pipeline.STEPS[competition].month
    return step(Warehouse(settings.warehouse), run_id, month, settings)


@task(name="history", cache_policy=NO_CACHE, task_run_name="{competition}-from-{first}")
def history_task(
    settings: Settings,
    run_id: str,
    competition: str,
    first: str,
    as_of: date | None,
    pending: list[dict],
) -> list[dict]:
    step = pipeline.STEPS[competition].history
    return step(Warehouse(settings.warehouse), run_id, first, settings, as_of, pending)


def rebuild(settings: Settings, run_id: str, months: dict[str, list[str]], as_of) -> dict:
    """Rebuild the given months of each competition, then publish in one commit."""
    wh = Warehouse(settings.warehouse)
    tx = wh.transaction(run_id)
    rebuilt: dict[str, list[str]] = {}
    for competition, todo in sorted(months.items()):
        if not todo:
            continue
        steps = pipeline.STEPS[competition]
        _progress(f"{competition}: scoring {len(todo)} month(s): {', '.join(todo)}")
        futures = [month_task.submit(settings, run_id, competition, m) for m in todo]
        ops: list[dict] = []
        for future in futures:
            ops += future.result()
        if steps.history is not None:
            _progress(f"{competition}: rebuilding history from {todo[0]}")
            ops += history_task(settings, run_id, competition, todo[0], as_of, ops)
        tx.extend(ops)
        tx.mark_dirty(competition, todo, clean=True)
        rebuilt[competition] = todo
    if tx.ops:
        tx.commit()
    return rebuilt


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
def nightly_flow(settings: Settings, as_of: date | None = None) -> pipeline.Summary:
    """Ingest what is new in the landing folder, rescore the months it touches, publish."""
    wh = Warehouse(settings.warehouse)
    if not settings.landing.is_dir():
        raise UserError(f"landing folder {settings.landing} does not exist")
    summary = pipeline.Summary(pipeline.new_run_id())
    with wh.lock(settings.lock_wait_s):
        wh.collect_garbage()
        _progress(f"ingesting {settings.landing}")
        summary.ingest = ingest_task(settings, summary.run_id, as_of)
        dirty = wh.manifest()["dirty"]
        summary.rebuilt = rebuild(settings, summary.run_id, dirty, as_of)
    return summary


@flow(name="backfill", log_prints=False)
@_user_errors_as_state
def backfill_flow(settings: Settings, first: str, last: str) -> pipeline.Summary:
    """Recompute the months first..last of every competition from bronze."""
    wh = Warehouse(settings.warehouse)
    summary = pipeline.Summary(pipeline.new_run_id())
    with wh.lock(settings.lock_wait_s):
        wh.collect_garbage()
        months = {}
        for competition, record_types in pipeline.COMPETITIONS.items():
            table = pipeline.bronze_table(record_types[0])
            months[competition] = [m for m in wh.months(table) if first <= m <= last]
        if not any(months.values()):
            raise UserError(f"no bronze data between {first} and {last} in {wh.root}")
        summary.rebuilt = rebuild(settings, summary.run_id, months, None)
    return summary


def nightly(settings: Settings, as_of: date | None = None) -> pipeline.Summary:
    return _run(nightly_flow, settings=settings, as_of=as_of)


def backfill(settings: Settings, first: str, last: str) -> pipeline.Summary:
    return _run(backfill_flow, settings=settings, first=first, last=last)


def _run(flow_fn, **kwargs):
    """Run a flow; a user error inside it comes back as a UserError, others re-raise.

    With Prefect's temporary server (no `PREFECT_API_URL`) the flow-run heartbeat is turned
    off: nothing watches it, and stopping its thread made every run wait up to one second more
    (the thread sleeps in 1 s steps; measured: a run with nothing new took 1.06 s, 0.16 s
    without). With a real server the heartbeat stays (crash detection)."""
    if os.environ.get("PREFECT_API_URL"):
        state = flow_fn(**kwargs, return_state=True)
    else:
        with temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}):
            state = flow_fn(**kwargs, return_state=True)
    if state.is_failed() and (state.message or "").startswith(USER_ERROR):
        raise UserError(state.message[len(USER_ERROR) :])
    return state.result()


def serve(settings: Settings) -> None:
    """Serve the nightly flow on `settings.nightly_cron`.

    Prefect's temporary server never runs schedules: this needs a running Prefect server
    (`prefect server start`) and `PREFECT_API_URL` pointing at it (see the README), or use an
    OS timer (cron/systemd) calling `duplirank nightly` instead.
    """
    if not os.environ.get("PREFECT_API_URL"):
        raise UserError(
            "serve needs a Prefect server: run `.venv/bin/prefect server start` and set "
            "PREFECT_API_URL=http://127.0.0.1:4200/api (or schedule `duplirank nightly` with cron)"
        )
    nightly_flow.serve(
        name="duplirank-nightly",
        cron=settings.nightly_cron,
        parameters={"settings": settings.model_dump(mode="json")},
    )
