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
import json
import os
import uuid
from datetime import date

from flows.allocator import batch_allocator

# a deployment's run process imports this module first: the allocator is set before Polars
os.environ.update(batch_allocator(os.environ))

import pydantic
from prefect import Flow, task
from prefect.cache_policies import NO_CACHE
from prefect.states import Failed

from flows.artifacts import publish_artifacts
from flows.errors import UserError
from flows.runs import Runner, Summary, backfill_run, ingest_run, nightly_run
from flows.settings import Settings, load_settings
from flows.steps import STEPS, StepContext, ingest_step
from flows.storage.options import StorageOptions

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


def _where(name: str) -> None:
    """For the cluster tests: `_DUPLIRANK_TASK_LOG=<folder>` records which process ran each
    task run (a file per task run: its name and the process id)."""
    folder = os.environ.get("_DUPLIRANK_TASK_LOG")
    if folder:
        from prefect.runtime import flow_run, task_run

        try:
            from distributed import get_worker

            worker = get_worker().address
        except (ImportError, ValueError):
            worker = None
        record = {"task": name, "run": task_run.get_name(), "id": task_run.get_id(),
                  "flow_run": flow_run.get_id(), "pid": os.getpid(),
                  "worker": worker}  # fmt: skip
        with open(os.path.join(folder, f"{uuid.uuid4().hex}.json"), "w") as handle:
            json.dump(record, handle)


@task(name="ingest", **RETRY)
def ingest_task(ctx: StepContext):
    _where("ingest")
    return ingest_step(ctx, [ctx.settings.landing])


@task(name="score-partition", task_run_name="{competition}-{part}", **RETRY)
def month_task(ctx: StepContext, competition: str, part: str) -> list[dict]:
    _where("score-partition")
    return STEPS[competition].month(ctx, part)


@task(name="history", task_run_name="{competition}-from-{first}", **RETRY)
def history_task(ctx: StepContext, competition: str, first: str) -> list[dict]:
    _where("history")
    return STEPS[competition].history(ctx, first)


@task(name="history-shard", task_run_name="{competition}-shard-{shard}", **RETRY)
def shard_task(ctx: StepContext, competition: str, plan, shard: int) -> list[dict]:
    """One shard of players of a history (Simultané: their blocks and days)."""
    _where("history-shard")
    return STEPS[competition].sharded.shard(ctx, plan, shard)


@task(name="history-finish", task_run_name="{competition}-finish", **RETRY)
def finish_task(ctx: StepContext, competition: str, plan, shard_ops: list[dict]) -> list[dict]:
    """The shards' files published together, then what needs every player (ranks)."""
    _where("history-finish")
    return STEPS[competition].sharded.finish(ctx, plan, shard_ops)


# every task but the ingest (which reads the landing of this machine) is submitted: on a
# Dask task runner they run on the cluster's workers, on the default one in threads here
PREFECT = Runner(
    ingest=ingest_task,
    month=lambda ctx, competition, part: month_task.submit(ctx, competition, part),
    history=lambda ctx, competition, first: history_task.submit(ctx, competition, first).result(),
    shard=lambda ctx, competition, plan, k: shard_task.submit(ctx, competition, plan, k),
    finish=lambda ctx, competition, plan, ops: finish_task.submit(
        ctx, competition, plan, ops
    ).result(),
)


def _runner(settings: Settings) -> Runner:
    """The Prefect runner of this flow run, with the parallelism of its task runner."""
    from flows.cluster import parallelism

    return dataclasses.replace(PREFECT, parallelism=parallelism(settings))


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


class _Flow(Flow):
    """Prefect's flow, its parameters (settings, dates) put in JSON by pydantic: Prefect's own
    `serialize_parameters` imports FastAPI for its `jsonable_encoder` (~80 ms, every run of a
    process) to give the same JSON; any other value still goes Prefect's way. The object
    store's secrets are masked: the parameters a run records are shown by Prefect's UI and
    API (the run itself gets the settings as they are)."""

    def serialize_parameters(self, parameters: dict) -> dict:
        if all(isinstance(v, _PLAIN) for v in parameters.values()):
            return _masked({key: _json_value(value) for key, value in parameters.items()})
        return _masked(super().serialize_parameters(parameters))

    def with_options(self, **kwargs) -> _Flow:
        changed = super().with_options(**kwargs)  # (Prefect makes a plain Flow)
        changed.__class__ = type(self)
        return changed


_PLAIN = (pydantic.BaseModel, date, str, int, float, bool, type(None))


def _json_value(value):
    """The JSON of one of the `_PLAIN` kinds of value, as `jsonable_encoder` gives it."""
    if isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode="json")
    return value.isoformat() if isinstance(value, date) else value


# the storage settings kept out of its repr (the secret key, the session token)
SECRETS = frozenset(f.name for f in dataclasses.fields(StorageOptions) if not f.repr)
MASK = "**********"


def _masked(value):
    """`value` (JSON) with every secret of the object store that is set replaced by MASK."""
    if isinstance(value, dict):
        return {k: MASK if k in SECRETS and v is not None else _masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


@functools.partial(_Flow, name="nightly", log_prints=False)
@_user_errors_as_state
def nightly_flow(settings: Settings | None = None, as_of: date | None = None) -> Summary:
    """Ingest what is new in the landing folder, rescore the partitions it touches, publish.
    With no `settings` (a deployment), they come from the environment (`DUPLIRANK_…`)."""
    settings = settings or load_settings()
    summary = nightly_run(settings, as_of, _runner(settings))
    publish_artifacts(summary, settings, "nightly")  # Prefect artifacts (flows/artifacts.py)
    return summary


@functools.partial(_Flow, name="backfill", log_prints=False)
@_user_errors_as_state
def backfill_flow(
    first: str, last: str, settings: Settings | None = None, as_of: date | None = None
) -> Summary:
    """Recompute months first..last of every competition from bronze (every partition that can
    hold a record published in those months, whatever the settings)."""
    settings = settings or load_settings()
    summary = backfill_run(settings, first, last, as_of, _runner(settings))
    publish_artifacts(summary, settings, "backfill")  # Prefect artifacts (flows/artifacts.py)
    return summary


def nightly(settings: Settings, as_of: date | None = None) -> Summary:
    return _run(nightly_flow, settings=settings, as_of=as_of)


def backfill(settings: Settings, first: str, last: str, as_of: date | None = None) -> Summary:
    return _run(backfill_flow, settings=settings, first=first, last=last, as_of=as_of)


def _run(flow_fn, **kwargs):
    """Run a flow; a user error inside it comes back as a UserError, others re-raise. With
    `cluster.runner = dask` the flow's tasks go to a Dask cluster (flows/cluster.py), started
    after the Prefect server so that its workers report to it."""
    from flows.cluster import absolute, task_runner
    from flows.prefect_server import prefect_api

    if kwargs["settings"].cluster.runner == "dask":
        kwargs["settings"] = absolute(kwargs["settings"])
    with prefect_api():
        runner = task_runner(kwargs["settings"])
        if runner is not None:
            flow_fn = flow_fn.with_options(task_runner=runner)
        state = flow_fn(**kwargs, return_state=True)
    if state.is_failed() and (state.message or "").startswith(USER_ERROR):
        raise UserError(state.message[len(USER_ERROR) :])
    return state.result()


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


run_ingest = ingest_run  # `duplirank ingest` needs no Prefect

__all__ = ["Summary", "backfill", "nightly", "run_ingest", "serve"]
