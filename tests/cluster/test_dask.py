"""The nightly on a Dask cluster (`--runner dask`): a LocalCluster of 2 worker processes gives
the tables of the default runner, every task run is recorded by the flow's Prefect server, and
the partition and history tasks really ran in the workers."""

from __future__ import annotations

import functools
import json
import os
import shutil
import uuid
from datetime import date
from pathlib import Path

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

from flows import nightly as flows_nightly
from flows.cluster import WORKER_MODULE, batches
from flows.cluster_options import ClusterOptions
from flows.nightly import backfill, backfill_run, nightly, nightly_run
from flows.prefect_server import prefect_api
from flows.tools.synthetic import generate
from tests.storage.conftest import same, snapshot_all
from tests_support import SAMPLE

from .conftest import dask_settings, settings


def where_it_ran(fn, name: str, folder: Path):
    """`fn`, recording where each of its task runs ran (a file per run: the task's name, its
    task run and flow run, the process id, the Dask worker)."""

    @functools.wraps(fn)
    def recording(*args, **kwargs):
        from prefect.runtime import flow_run, task_run

        try:
            from distributed import get_worker

            worker = get_worker().address
        except (ImportError, ValueError):
            worker = None
        record = {
            "task": name,
            "run": task_run.get_name(),
            "id": task_run.get_id(),
            "flow_run": flow_run.get_id(),
            "pid": os.getpid(),
            "worker": worker,
        }
        (folder / f"{uuid.uuid4().hex}.json").write_text(json.dumps(record))
        return fn(*args, **kwargs)

    return recording


def test_a_nightly_on_a_local_dask_cluster_gives_the_tables_of_the_default_runner(
    tmp_path, monkeypatch
):
    log = tmp_path / "task-log"
    log.mkdir()
    for step in vars(flows_nightly).values():  # the tasks sent to workers carry the recorder
        if isinstance(step, flows_nightly.Step):
            monkeypatch.setattr(step.task, "fn", where_it_ran(step.task.fn, step.task.name, log))
    reference, clustered = tmp_path / "reference", tmp_path / "clustered"
    nightly_run(settings(reference, SAMPLE))

    with prefect_api():  # the run's server (or the session's): still up for the queries
        summary = nightly(dask_settings(clustered, SAMPLE, workers=2))
        records = [json.loads(p.read_text()) for p in log.iterdir()]
        flow_runs = {r["flow_run"] for r in records}
        assert len(flow_runs) == 1
        with get_client(sync_client=True) as client:
            task_runs = client.read_task_runs(
                flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[uuid.UUID(*flow_runs)]))
            )
    assert summary.published
    assert same(snapshot_all(clustered), snapshot_all(reference))

    # every task run of the flow run is known to Prefect and completed
    recorded = {r["id"] for r in records}
    known = {str(t.id): t for t in task_runs}
    assert recorded <= set(known)
    assert all(known[i].state.is_completed() for i in recorded)
    names = {r["task"] for r in records}
    assert {"ingest", "history-shard", "history-finish"} <= names
    assert names & {"score-partition", "score-partitions"}

    # the ingest runs in the flow's process (it reads this machine's landing); the partition
    # tasks and the history shards in the worker processes
    here = os.getpid()
    ingest = [r for r in records if r["task"] == "ingest"]
    assert [r["pid"] for r in ingest] == [here]
    remote = [r for r in records if r["task"].startswith(("score-partition", "history-shard"))]
    assert remote and here not in {r["pid"] for r in remote}
    assert all(r["worker"] for r in remote)  # a Dask worker's address
    shards = [r for r in records if r["task"] == "history-shard"]
    assert len({r["run"] for r in shards}) >= 2  # the history is sharded over both workers


def test_on_dask_the_months_of_a_competition_go_in_one_task_per_worker():
    months = [f"2026-{m:02d}" for m in range(1, 13)]
    assert batches(dask_settings("/w", "/l"), months, 2) == [months[:6], months[6:]]
    assert batches(dask_settings("/w", "/l"), months[:5], 2) == [months[:3], months[3:5]]
    assert batches(dask_settings("/w", "/l"), months[:2], 8) == [[months[0]], [months[1]]]
    assert batches(dask_settings("/w", "/l"), [], 2) == []
    # the default runner keeps one task per partition (threads under the process's budget)
    assert batches(settings("/w", "/l"), months[:3], 2) == [[m] for m in months[:3]]


@pytest.fixture(scope="module")
def running_cluster():
    """A cluster started before the runs (as `dask scheduler` / `dask worker --preload
    flows.cluster_worker` start one), shared by the runs that name its scheduler."""
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        scheduler_port=0,
        preload=[WORKER_MODULE],
    ) as cluster:
        yield cluster.scheduler_address


def test_a_backfill_on_a_running_cluster_batches_months_and_gives_the_default_runners_tables(
    tmp_path, monkeypatch, running_cluster
):
    landing = tmp_path / "logs"
    generate(landing, players=4, days=80, seed=5, start=date(2026, 8, 10))  # 2026-08..2026-10
    log = tmp_path / "task-log"
    log.mkdir()
    for step in vars(flows_nightly).values():
        if isinstance(step, flows_nightly.Step):
            monkeypatch.setattr(step.task, "fn", where_it_ran(step.task.fn, step.task.name, log))
    reference, clustered = tmp_path / "reference", tmp_path / "clustered"
    nightly_run(settings(reference, landing))
    shutil.copytree(reference, clustered, symlinks=True)
    backfill_run(settings(reference, landing), "2026-08", "2026-10")

    on_cluster = ClusterOptions(runner="dask", scheduler_address=running_cluster)
    with prefect_api():
        summary = backfill(settings(clustered, landing, cluster=on_cluster), "2026-08", "2026-10")
    assert summary.published
    assert same(snapshot_all(clustered), snapshot_all(reference))

    records = [json.loads(p.read_text()) for p in log.iterdir()]
    scored = [r for r in records if r["task"].startswith("score-partition")]
    assert all(r["worker"] for r in scored)
    # three months of three competitions: one task of months per worker and competition
    assert len(scored) == 3 * 2
    assert {r["run"] for r in scored} == {
        f"{competition}-{months}"
        for competition in ("bridge", "face_a_face", "simultane")
        for months in ("2026-08..2026-09", "2026-10")
    }
