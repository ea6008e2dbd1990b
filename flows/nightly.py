"""Prefect flows: `nightly`, `backfill`, and their deployments (`serve`, `prefect.yaml`).

Thin orchestration over `flows/steps/`: a task per step and partition, tasks pass the step
context and staged operations (file lists), never DataFrames; a run publishes once, at the
end (`Warehouse.run`). Tasks are retried only on I/O errors a retry can cure (a network or
file-system hiccup) — a deterministic error fails at once, with one line. Results are not
cached (a cache keyed on inputs would return stale results when a partition's files change).

A flow's parameters say where a run reads and writes — `landing`, `warehouse` and `project`
(the folder whose `pyproject.toml` holds `[tool.duplirank]`) — never a copy of the settings: a
deployment's run loads its settings when it starts (`run_settings`), a command of the CLI
hands its own to the flow it runs (`_run`). The module has no `from __future__ import
annotations`: a served flow reaches its run's process pickled by value, with only the globals
its code names, so its signature's types must be objects, not names to look up.
"""

import contextvars
import dataclasses
import errno
import functools
import json
import os
import uuid
from datetime import date
from pathlib import Path

from flows.allocator import batch_allocator

# a deployment's run process imports this module first: the allocator is set before Polars
os.environ.update(batch_allocator(os.environ))

from prefect import Flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.states import Failed

from flows.artifacts import publish_artifacts
from flows.errors import UserError
from flows.runs import Runner, Summary, backfill_run, ingest_run, nightly_run
from flows.settings import Settings, load_settings
from flows.steps import STEPS, StepContext, ingest_step
from flows.storage.operations import Operation

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
def month_task(ctx: StepContext, competition: str, part: str) -> list[Operation]:
    _where("score-partition")
    return STEPS[competition].month(ctx, part)


@task(name="history", task_run_name="{competition}-from-{first}", **RETRY)
def history_task(ctx: StepContext, competition: str, first: str) -> list[Operation]:
    _where("history")
    return STEPS[competition].history(ctx, first)


@task(name="history-shard", task_run_name="{competition}-shard-{shard}", **RETRY)
def shard_task(ctx: StepContext, competition: str, plan, shard: int) -> list[Operation]:
    """One shard of players of a history (Simultané: their blocks and days)."""
    _where("history-shard")
    return STEPS[competition].sharded.shard(ctx, plan, shard)


@task(name="history-finish", task_run_name="{competition}-finish", **RETRY)
def finish_task(
    ctx: StepContext, competition: str, plan, shard_ops: list[Operation]
) -> list[Operation]:
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
    """A user error ends the flow run as Failed with its one-line message (no traceback), also
    written to the run's log (the Prefect UI shows both)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except UserError as err:
            get_run_logger().error("%s", err)
            return Failed(message=USER_ERROR + str(err))

    return wrapper


class _Flow(Flow):
    """Prefect's flow, its parameters (text, dates) put in JSON here: Prefect's own
    `serialize_parameters` imports FastAPI for its `jsonable_encoder` (~80 ms, every run of a
    process) to give the same JSON; any other value still goes Prefect's way."""

    def serialize_parameters(self, parameters: dict) -> dict:
        if all(isinstance(v, _PLAIN) for v in parameters.values()):
            return {key: _json_value(value) for key, value in parameters.items()}
        return super().serialize_parameters(parameters)

    def with_options(self, **kwargs) -> "_Flow":
        changed = super().with_options(**kwargs)  # (Prefect makes a plain Flow)
        changed.__class__ = type(self)
        return changed


_PLAIN = (date, str, int, float, bool, type(None))


def _json_value(value):
    """The JSON of one of the `_PLAIN` kinds of value, as `jsonable_encoder` gives it."""
    return value.isoformat() if isinstance(value, date) else value


# The settings a command of the CLI built (its flags included) for the flow run it starts in
# this process (`_run`); a deployment's run has none and loads its own (`run_settings`).
_GIVEN: contextvars.ContextVar[Settings | None] = contextvars.ContextVar(
    "duplirank_settings", default=None
)


def run_settings(
    landing: str | None = None, warehouse: str | None = None, project: str | None = None
) -> Settings:
    """The settings of a flow run: those of the command that started it in this process, else
    loaded as every command loads them — `landing` and `warehouse` over the environment of the
    process that runs the flow (`serve`'s, the worker's), over `[tool.duplirank]` in the
    `pyproject.toml` of `project` (default: the working directory). Local folders are made
    absolute in `project`."""
    given = _GIVEN.get()
    if given is not None:
        return given
    if project is None:
        return load_settings(landing=landing, warehouse=warehouse)
    if not os.path.isdir(project):
        raise UserError(f"project folder {project} does not exist")
    from flows.cluster import absolute

    here = os.getcwd()
    os.chdir(project)  # pydantic-settings reads pyproject.toml in the working directory
    try:
        return absolute(load_settings(landing=landing, warehouse=warehouse))
    finally:
        os.chdir(here)


def _log_summary(summary: Summary) -> None:
    """The run's summary in its log (the Prefect UI's page of the flow run shows it)."""
    get_run_logger().info("%s", summary.text())


@functools.partial(_Flow, name="nightly", log_prints=False)
@_user_errors_as_state
def nightly_flow(
    landing: str | None = None,
    warehouse: str | None = None,
    project: str | None = None,
    as_of: date | None = None,
) -> Summary:
    """Ingest what is new in the landing folder, rescore the partitions it touches, publish.

    Args:
        landing: the folder the servers drop logs into, or s3://bucket/prefix (default: the
            setting landing)
        warehouse: the warehouse folder, or s3://bucket/prefix (default: the setting warehouse)
        project: the folder whose pyproject.toml [tool.duplirank] holds the other settings,
            under the DUPLIRANK_… variables of the process running the flow (default: its
            working directory)
        as_of: the date of % actuel and in_window, YYYY-MM-DD (default: the latest data)
    """
    settings = run_settings(landing, warehouse, project)
    summary = nightly_run(settings, as_of, _runner(settings))
    publish_artifacts(summary, settings, "nightly")  # Prefect artifacts (flows/artifacts.py)
    _log_summary(summary)
    return summary


@functools.partial(_Flow, name="backfill", log_prints=False)
@_user_errors_as_state
def backfill_flow(
    first: str,
    last: str,
    warehouse: str | None = None,
    project: str | None = None,
    as_of: date | None = None,
) -> Summary:
    """Recompute months first..last of every competition from bronze (every partition that can
    hold a record published in those months, whatever the settings).

    Args:
        first: the first month, YYYY-MM
        last: the last month, YYYY-MM
        warehouse: the warehouse folder, or s3://bucket/prefix (default: the setting warehouse)
        project: the folder whose pyproject.toml [tool.duplirank] holds the other settings,
            under the DUPLIRANK_… variables of the process running the flow (default: its
            working directory)
        as_of: the date of % actuel and in_window, YYYY-MM-DD (default: the latest data)
    """
    settings = run_settings(None, warehouse, project)
    summary = backfill_run(settings, first, last, as_of, _runner(settings))
    publish_artifacts(summary, settings, "backfill")  # Prefect artifacts (flows/artifacts.py)
    _log_summary(summary)
    return summary


def _location(value) -> str:
    """A run's folder as a parameter: an absolute path, or the URL as it is."""
    return str(value) if "://" in str(value) else str(Path(value).absolute())


def nightly(settings: Settings, as_of: date | None = None) -> Summary:
    where = {"landing": _location(settings.landing), "warehouse": _location(settings.warehouse)}
    return _run(nightly_flow, settings, **where, as_of=as_of)


def backfill(settings: Settings, first: str, last: str, as_of: date | None = None) -> Summary:
    warehouse = _location(settings.warehouse)
    return _run(backfill_flow, settings, first=first, last=last, warehouse=warehouse, as_of=as_of)


def _run(flow_fn, settings: Settings, **parameters):
    """Run a flow with these settings; a user error inside it comes back as a UserError, others
    re-raise. With `cluster.runner = dask` the flow's tasks go to a Dask cluster
    (flows/cluster.py), started after the Prefect server so that its workers report to it."""
    from flows.cluster import absolute, task_runner
    from flows.prefect_server import prefect_api

    if settings.cluster.runner == "dask":
        settings = absolute(settings)
    given = _GIVEN.set(settings)
    try:
        with prefect_api():
            runner = task_runner(settings)
            if runner is not None:
                flow_fn = flow_fn.with_options(task_runner=runner)
            state = flow_fn(**parameters, return_state=True)
    finally:
        _GIVEN.reset(given)
    if state.is_failed() and (state.message or "").startswith(USER_ERROR):
        raise UserError(state.message[len(USER_ERROR) :])
    return state.result()


# --------------------------------------------------------------------------- deployments
DEPLOYMENT = "duplirank-nightly"  # what `duplirank serve` makes: nightly/duplirank-nightly


def deployment_values() -> dict[str, str]:
    """What a deployment of the nightly takes from the settings of the folder and environment
    it is made in: its schedule (`cron`, `timezone`: the settings `nightly_cron` and `timezone`)
    and its parameters (`landing`, `warehouse`: absolute; `project`: the working directory).

    `prefect.yaml` runs it as a build step (id `settings`): its fields read `{{ settings.cron }}`
    and the like; `serve` uses the same values."""
    return _values(load_settings())


def _values(settings: Settings) -> dict[str, str]:
    return {
        "cron": settings.nightly_cron,
        "timezone": settings.timezone,
        "landing": _location(settings.landing),
        "warehouse": _location(settings.warehouse),
        "project": os.getcwd(),
    }


def serve(settings: Settings) -> None:
    """Serve the nightly flow as the deployment nightly/duplirank-nightly on
    `settings.nightly_cron` in the platform time zone: its runs (one at a time, a second one
    waits) run here, each in a process of its own, with this process's environment.

    Prefect's temporary server never runs schedules: this needs a running Prefect server
    (`prefect server start`) and `PREFECT_API_URL` pointing at it (see the README), or use an
    OS timer (cron/systemd) calling `duplirank nightly` instead.
    """
    from flows.prefect_server import running_server

    running_server()
    from prefect.client.schemas.objects import ConcurrencyLimitConfig, ConcurrencyLimitStrategy
    from prefect.schedules import Cron

    # a service's log, not a command's terminal: the runs' INFO lines (Prefect's, the summary)
    # reach the server's UI (flows/prefect_env.py keeps commands at WARNING)
    if os.environ.get("PREFECT_LOGGING_LEVEL", "WARNING").upper() == "WARNING":
        os.environ["PREFECT_LOGGING_LEVEL"] = "INFO"
    values = _values(settings)
    nightly_flow.serve(
        name=DEPLOYMENT,
        schedules=[Cron(values["cron"], timezone=values["timezone"])],
        parameters={key: values[key] for key in ("landing", "warehouse", "project")},
        global_limit=ConcurrencyLimitConfig(
            limit=1, collision_strategy=ConcurrencyLimitStrategy.ENQUEUE
        ),
    )


run_ingest = ingest_run  # `duplirank ingest` needs no Prefect

__all__ = ["Summary", "backfill", "deployment_values", "nightly", "run_ingest", "serve"]
