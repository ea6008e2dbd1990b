"""The nightly on a Dask cluster (`--runner dask`): a LocalCluster of 2 worker processes gives
the tables of the default runner, every task run is recorded by the flow's Prefect server, and
the partition and history tasks really ran in the workers."""

from __future__ import annotations

import functools
import json
import os
import uuid
from pathlib import Path

from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

from flows import nightly as flows_nightly
from flows.nightly import nightly, nightly_run
from flows.prefect_server import prefect_api
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
    assert {"ingest", "score-partition", "history-shard", "history-finish"} <= names

    # the ingest runs in the flow's process (it reads this machine's landing); the partition
    # tasks and the history shards in the worker processes
    here = os.getpid()
    ingest = [r for r in records if r["task"] == "ingest"]
    assert [r["pid"] for r in ingest] == [here]
    remote = [r for r in records if r["task"] in ("score-partition", "history-shard")]
    assert remote and here not in {r["pid"] for r in remote}
    assert all(r["worker"] for r in remote)  # a Dask worker's address
    shards = [r for r in records if r["task"] == "history-shard"]
    assert len({r["run"] for r in shards}) >= 2  # the history is sharded over both workers
