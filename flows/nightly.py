"""Prefect flows: `nightly`, `backfill`, and their deployments (`serve`, `prefect.yaml`).

The body of each flow is the run, step by step — `nightly_flow`: ingest → plan → score
partitions → histories → publish → site → artifacts; `backfill_flow`: the same from its plan of
months — each step a task (`Step`) around a plain function of `flows/runs.py`. Outside a flow
run the same bodies call those functions as they are (`nightly_run`, `backfill_run`: tests,
scripts). Tasks pass the step context and staged operations (file lists), never DataFrames;
a run publishes once (`publish`: the pointer swap) and builds the site under the same lock.
Tasks are retried only on I/O errors a retry can cure (a network or file-system hiccup) — a
deterministic error fails at once, with one line. Results are not cached (a cache keyed on
inputs would return stale results when a partition's files change).

A flow's parameters say where a run reads and writes — `landing`, `warehouse` and `project`
(the folder whose `pyproject.toml` holds `[tool.duplirank]`) — never a copy of the settings: a
deployment's run loads its settings when it starts (`run_settings`), a command of the CLI
hands its own to the flow it runs (`_run`). The module has no `from __future__ import
annotations`: a served flow reaches its run's process pickled by value, with only the globals
its code names, so its signature's types must be objects, not names to look up.
"""

import contextvars
import errno
import functools
import os
from datetime import date
from pathlib import Path

from flows.allocator import batch_allocator

# a deployment's run process imports this module first: the allocator is set before Polars
os.environ.update(batch_allocator(os.environ))

from prefect import Flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.context import FlowRunContext
from prefect.states import Failed

from flows import cluster, progress, runs
from flows.artifacts import publish_artifacts
from flows.errors import UserError
from flows.runs import Run, Summary, check_landing, open_run
from flows.settings import Settings, load_settings
from flows.steps import STEPS
from flows.steps.plan import first_changed_month, first_month
from flows.storage.operations import Operation
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


RETRY = {"retries": 2, "retry_delay_seconds": 2, "retry_condition_fn": io_retry}


def in_flow_run() -> bool:
    return FlowRunContext.get() is not None


class Done:
    """The result of a call already made (a step's `submit` outside a flow run)."""

    def __init__(self, value):
        self.value = value

    def result(self):
        return self.value


class Step:
    """A step of the flows: inside a flow run a Prefect task (a task run, retries, sent to the
    task runner by `submit`); outside one — tests, scripts, `duplirank repair`'s clean run —
    the plain function of `flows/runs.py`, so both run the same flow bodies. `plain=False`:
    a step that only has a meaning in a flow run (Prefect artifacts)."""

    def __init__(self, fn, name: str, plain: bool = True, **options):
        self.fn, self.plain = fn, plain
        self.task = task(fn, name=name, cache_policy=NO_CACHE, **options)

    def __call__(self, *args):
        if in_flow_run():
            return self.task(*args)
        return self.fn(*args) if self.plain else None

    def submit(self, *args):
        """Run anywhere (a thread, a Dask worker): a future whose `result()` waits for it."""
        if in_flow_run():
            return self.task.submit(*args)
        return Done(self.fn(*args))


def _site(run: Run) -> str | None:
    """The results site (a tool, flows/tools/site) of the publication the run just made
    (staged, then swapped), or, with nothing published, the site served checked and rebuilt if
    it is not the current publication's. Called under the run's lock: no other run publishes
    meanwhile, so a site never replaces that of a newer publication."""
    from flows.tools.site.served import refresh_site, repair_site

    build = refresh_site if run.summary.published else repair_site
    run.summary.site = build(run.wh, run.settings) or run.summary.site
    return run.summary.site


def _artifacts(summary: Summary, settings: Settings, flow: str) -> tuple:
    """The run's Prefect artifacts (flows/artifacts.py) and its summary in its log; returns
    what they read (`Summary.reasons`, `Summary.rankings`: a task receives a copy of the
    summary, the flow keeps them in its own, `shown`)."""
    publish_artifacts(summary, settings, flow)
    get_run_logger().info("%s", summary.text())
    return summary.reasons, summary.rankings


def shown(summary: Summary, read: tuple | None) -> Summary:
    """The run's summary with what its artifacts read (nothing outside a flow run)."""
    if read is not None:
        summary.reasons, summary.rankings = read
    return summary


# the ingest reads this machine's landing, the plan and the publication are the run's own:
# they run in the flow's process; the partitions and histories are submitted (on a Dask task
# runner to the cluster's workers, on the default one to threads here)
ingest = Step(runs.ingest, "ingest", **RETRY)
plan_nightly = Step(runs.plan_nightly, "plan", **RETRY)
plan_backfill = Step(runs.plan_backfill, "plan", **RETRY)
score_partition = Step(
    runs.score_partition, "score-partition", task_run_name="{competition}-{part}", **RETRY
)
# on a Dask cluster, several partitions per task (flows/cluster.py: `batches`)
score_partitions = Step(
    cluster.score_partitions, "score-partitions", task_run_name=cluster.batch_name, **RETRY
)
history = Step(runs.history, "history", task_run_name="{competition}-from-{first}", **RETRY)
history_shard = Step(
    runs.history_shard, "history-shard", task_run_name="{competition}-shard-{shard}", **RETRY
)
history_finish = Step(
    runs.history_finish, "history-finish", task_run_name="{competition}-finish", **RETRY
)
publish = Step(runs.publish, "publish")
site = Step(_site, "site")
changes_announced = Step(runs.changes_announced, "changes-announced")
artifacts = Step(_artifacts, "artifacts", plain=False)


def rescore(run: Run, plan: dict[str, list[str]], floor: str | None = None) -> None:
    """Score every partition of the plan — all submitted at once — then, as each
    competition's are scored, its history tables from the first month they change (a
    backfill, from `floor` on, recomputed from their first record)."""
    ctx = run.context()
    workers = cluster.parallelism(run.settings) if in_flow_run() else 1
    scoring = {
        competition: [(batch, _score(ctx, competition, batch)) for batch in cut]
        for competition, parts in sorted(plan.items())
        if (cut := cluster.batches(run.settings, parts, workers))
    }
    for competition, futures in scoring.items():
        parts = plan[competition]
        with progress.stage(f"score {competition}", total=len(parts), unit="partitions") as bar:
            for batch, future in futures:
                bar.update(detail=batch[0])
                run.stage(future.result())
                bar.advance(len(batch))
            bar.update(detail="")
        if STEPS[competition].history is not None:
            if floor is None:  # a nightly: from the first month its rescore changed
                first = first_changed_month(run.context(), competition, parts)
            else:
                first = first_month(parts, floor)
            with progress.stage(f"history {competition}") as bar:
                bar.update(detail=f"from {first}")
                run.stage(histories(run, competition, first, from_scratch=floor is not None))
    run.rescored(plan)


def _score(ctx, competition: str, batch: list[str]):
    """A future of the operations of one batch of partitions (one task)."""
    if len(batch) == 1:
        return score_partition.submit(ctx, competition, batch[0])
    return score_partitions.submit(ctx, competition, batch)


def histories(
    run: Run, competition: str, first: str, from_scratch: bool = False
) -> list[Operation]:
    """A competition's history tables from month `first`: one task, or shards of players
    submitted all at once (at least as many as the task runner runs at once) and one task
    that finishes."""
    from flows.cluster import parallelism

    ctx = run.context(from_scratch)
    workers = parallelism(run.settings) if in_flow_run() else 1
    plan = runs.history_plan(ctx, competition, first, workers)
    if plan is None:
        return history.submit(ctx, competition, first).result()
    shards = [history_shard.submit(ctx, competition, plan, k) for k in range(plan.shards)]
    shard_ops = [op for future in shards for op in future.result()]
    return history_finish.submit(ctx, competition, plan, shard_ops).result()


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
    check_landing(settings)
    with open_run(settings, "nightly", as_of) as run:
        run.summary.ingest, ops = ingest(run.context(), [settings.landing])
        run.stage(ops)
        plan = plan_nightly(run.context())
        rescore(run, plan)  # score partitions, then history tables
        if as_of is not None and not plan["simultane"]:
            # % actuel and in_window move with the date even without new data
            run.stage(histories(run, "simultane", month_of(as_of, settings.timezone)))
        publish(run)
        site(run)
    return shown(run.summary, artifacts(run.summary, settings, "nightly"))


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
    with open_run(settings, "backfill", as_of) as run:
        plan = plan_backfill(run.context(), first, last)
        rescore(run, plan, floor=first)  # score partitions, then history tables
        publish(run)
        site(run)
    changes_announced(run)
    return shown(run.summary, artifacts(run.summary, settings, "backfill"))


def nightly_run(settings: Settings, as_of: date | None = None) -> Summary:
    """The nightly flow's steps in this process, without Prefect (tests, scripts)."""
    return _plain(nightly_flow, settings, as_of=as_of)


def backfill_run(settings: Settings, first: str, last: str, as_of: date | None = None) -> Summary:
    """The backfill flow's steps in this process, without Prefect (tests, scripts)."""
    return _plain(backfill_flow, settings, first=first, last=last, as_of=as_of)


def _plain(flow_fn, settings: Settings, **parameters):
    """A flow's body called as a function with these settings: its steps run as plain
    functions (no flow run), a user error is raised as it is."""
    given = _GIVEN.set(settings)
    try:
        return flow_fn.fn.__wrapped__(**parameters)
    finally:
        _GIVEN.reset(given)


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
    if not os.environ.get("PREFECT_API_URL"):  # `duplirank serve` checks it answers first
        raise UserError(
            "serve needs a Prefect server: run `.venv/bin/prefect server start` and set "
            "PREFECT_API_URL=http://127.0.0.1:4200/api (or schedule `duplirank nightly` with cron)"
        )
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


__all__ = [
    "Summary",
    "backfill",
    "backfill_run",
    "deployment_values",
    "nightly",
    "nightly_run",
    "serve",
]
