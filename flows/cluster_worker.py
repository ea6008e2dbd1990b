"""What a Dask worker of duplirank loads when it starts (`dask worker --preload
flows.cluster_worker`; a local cluster's workers load it too, flows/cluster.py).

A worker process starts with only `distributed` imported: without this, the first task each
worker runs pays for importing the steps (Polars, DuckDB, PyArrow, the storage layer) and
Prefect's task engine, and every worker pays it while the run waits. Loaded at the start,
it is paid while the cluster starts (a cluster started by hand pays it once, before any run).
"""

from __future__ import annotations

from flows.allocator import use_batch_allocator

use_batch_allocator()  # before Polars is imported

import prefect.task_engine  # noqa: E402,F401  (a task's run on the worker)

import flows.runs  # noqa: E402,F401  (the steps, their storage, Polars, DuckDB)
