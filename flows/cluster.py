"""The Dask cluster of a run (`--runner dask`, settings `cluster.*`; docs/cluster.md).

`task_runner(settings)` gives the flow its Prefect task runner: None for the default (Prefect's
thread pool in this process), else a `prefect_dask.DaskTaskRunner` — on the scheduler at
`cluster.scheduler_address`, or on a `distributed.LocalCluster` of `cluster.workers` processes
started for the flow run and stopped with it. It is called once `flows/prefect_server.py` has
exported `PREFECT_API_URL`, so the local workers (spawned processes, which inherit the
environment) report their task runs to the run's one Prefect server; tasks sent to workers
started by hand carry the flow's Prefect settings with them (prefect-dask serialises the
client's context), so they report to the same server if they can reach it.

Local workers die with the run: a Dask worker process exits as soon as the process that
started it is gone (distributed's parent-alive pipe), SIGKILL included.
"""

from __future__ import annotations

import os
from pathlib import Path

from flows.errors import UserError
from flows.settings import Settings

WORKER_MODULE = "flows.cluster_worker"  # what a worker loads at start (`dask worker --preload`)


def absolute(settings: Settings) -> Settings:
    """The settings with local warehouse and landing folders made absolute (a worker
    resolves a relative path in its own folder)."""
    update = {
        name: Path(value).absolute()
        for name in ("warehouse", "landing")
        if "://" not in str(value := getattr(settings, name))
    }
    return settings.model_copy(update=update)


def task_runner(settings: Settings):
    """The Prefect task runner of `settings.cluster` (None: Prefect's default)."""
    cluster = settings.cluster
    if cluster.runner != "dask":
        return None
    _check_locations(settings)
    os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "error")  # workers inherit it
    from prefect_dask import DaskTaskRunner

    if cluster.scheduler_address:
        return DaskTaskRunner(address=cluster.scheduler_address)
    return DaskTaskRunner(
        cluster_class="distributed.LocalCluster",
        cluster_kwargs={
            "n_workers": cluster.workers,
            "preload": [WORKER_MODULE],  # the steps imported while the cluster starts
            "threads_per_worker": cluster.threads_per_worker,
            "processes": True,
            "dashboard_address": None,  # no fixed port (another run may hold :8787)
            "scheduler_port": 0,
        },
    )


def parallelism(settings: Settings) -> int:
    """How many tasks the current flow run's task runner runs at once (1 but on Dask)."""
    if settings.cluster.runner != "dask":
        return 1
    from prefect.context import FlowRunContext

    context = FlowRunContext.get()
    client = getattr(getattr(context, "task_runner", None), "client", None)
    if client is None:
        return settings.cluster.workers * settings.cluster.threads_per_worker
    return max(1, sum(client.nthreads().values()))


def batches(settings: Settings, parts: list[str], parallelism: int) -> list[list[str]]:
    """The partitions of one competition cut into the tasks that score them: one task each on
    the default runner (threads of this process, under its budget); on Dask, `parallelism`
    tasks of consecutive partitions (sizes differing by at most one), so that a run pays a
    task's fixed cost — its Prefect task run, its arguments and result sent, the warehouse
    opened and its manifest read — a few times per worker, not once per month."""
    if settings.cluster.runner != "dask" or not parts:
        return [[part] for part in parts]
    count = min(len(parts), max(1, parallelism))
    size, extra = divmod(len(parts), count)
    cut, start = [], 0
    for k in range(count):
        end = start + size + (k < extra)
        cut.append(parts[start:end])
        start = end
    return cut


def score_partitions(ctx, competition: str, parts: list[str]) -> list:
    """The month steps of several partitions of a competition, one after the other in this
    process (one task, one context: the warehouse opened once): their operations in order."""
    from flows.runs import score_partition

    return [op for part in parts for op in score_partition(ctx, competition, part)]


def batch_name() -> str:
    """The task run name of a `score_partitions` task: competition-first..last."""
    from prefect.runtime import task_run

    parameters = task_run.parameters
    parts = parameters["parts"]
    last = f"..{parts[-1]}" if len(parts) > 1 else ""
    return f"{parameters['competition']}-{parts[0]}{last}"


def _check_locations(settings: Settings) -> None:
    """Workers open the warehouse (and read nothing else): a relative local path would be
    resolved in each worker's own folder, so it is made absolute by the caller — refuse a
    relative one here rather than let workers write elsewhere."""
    for name in ("warehouse",):
        value = getattr(settings, name)
        if "://" not in str(value) and not os.path.isabs(str(value)):
            raise UserError(
                f"--runner dask: the {name} {value} must be an absolute path or a URL "
                "(workers resolve relative paths in their own folder)"
            )
