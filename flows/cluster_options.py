"""Settings of where a run's tasks execute (section `cluster`; flags `--runner`, `--scheduler`,
`--workers` of `nightly` and `backfill`).

- `runner = "local"` (default): Prefect's thread pool in the run's own process.
- `runner = "dask"`: the partition tasks and the history shards run as Prefect tasks on a Dask
  cluster (`prefect-dask`): the cluster at `scheduler_address` (`tcp://host:8786`, started by
  hand with `dask scheduler` / `dask worker`), else a local cluster of `workers` processes
  started for the run and stopped with it.
"""

from __future__ import annotations

from dataclasses import dataclass

from transforms.option_checks import OptionError

RUNNERS = ("local", "dask")


@dataclass(frozen=True)
class ClusterOptions:
    runner: str = "local"  # local | dask
    scheduler_address: str | None = None  # a running Dask scheduler; else a local cluster
    workers: int = 2  # worker processes of the local cluster
    threads_per_worker: int = 1  # a task uses Polars' own threads: one task per process
    # shards of the per-player history (Simultané blocks and days); 0 = as many as the
    # cluster has workers (and never fewer than batch_rows needs for memory)
    history_shards: int = 0

    def __post_init__(self) -> None:
        if self.runner not in RUNNERS:
            raise OptionError("runner", f"must be one of {', '.join(RUNNERS)}, not {self.runner!r}")
        if self.workers < 1:
            raise OptionError("workers", f"must be at least 1, not {self.workers}")
        if self.threads_per_worker < 1:
            raise OptionError(
                "threads_per_worker", f"must be at least 1, not {self.threads_per_worker}"
            )
        if self.history_shards < 0:
            raise OptionError(
                "history_shards", f"must be >= 0 (0: auto), not {self.history_shards}"
            )
        address = self.scheduler_address
        if address is not None and "://" not in address:
            raise OptionError("scheduler_address", f"{address!r} is not tcp://host:port")
