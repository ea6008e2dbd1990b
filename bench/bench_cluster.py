"""A 12-month backfill on the default runner, on Dask local clusters of 1, 2 and 4 workers,
and with the warehouse on S3 (moto's server, in a process of its own) vs a local folder.

Generates `--days` days of logs (`duplirank generate`'s generator), publishes them once with a
nightly per warehouse (not timed), then times `backfill first..last` over every month. One
Prefect temporary server serves every run (started before timing); a Dask run's time includes
starting its LocalCluster (the workers import the project), which is reported on its own.

    .venv/bin/python bench/bench_cluster.py --days 365 --players 40
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from flows.allocator import use_batch_allocator  # noqa: E402
from flows.prefect_env import use_prefect_defaults  # noqa: E402

use_batch_allocator()  # the product's runtime, as a run sets it: before Polars and Prefect
use_prefect_defaults()

from flows.cluster_options import ClusterOptions  # noqa: E402
from flows.nightly import backfill, nightly  # noqa: E402
from flows.prefect_server import prefect_api  # noqa: E402
from flows.settings import Settings, SiteOptions  # noqa: E402
from flows.tools.query import run_sql  # noqa: E402
from flows.tools.synthetic import generate  # noqa: E402

MOTO = """
import logging, sys, time
logging.getLogger("werkzeug").setLevel(logging.ERROR)
from moto.server import ThreadedMotoServer
server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
server.start()
print(server.get_host_and_port()[1], flush=True)
sys.stdin.read()  # until the bench closes the pipe
"""


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return round(time.perf_counter() - start, 2), out


def cluster_start(workers: int) -> float:
    """Seconds to start (and stop) a LocalCluster like the runner's, for the record."""
    from distributed import Client, LocalCluster

    start = time.perf_counter()
    with LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        scheduler_port=0,
    ) as cluster:
        with Client(cluster) as client:
            client.run(lambda: __import__("flows.steps"))  # what a task's first call imports
    return round(time.perf_counter() - start, 2)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--players", type=int, default=40)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--work", type=Path, default=ROOT / "bench" / "data" / "cluster")
    args = parser.parse_args()

    work = args.work
    landing = work / f"logs-{args.days}d-{args.players}p-s{args.seed}"
    if not landing.exists():
        print(f"generating {args.days} days for {args.players} players…", flush=True)
        generate(
            landing, players=args.players, days=args.days, seed=args.seed, start=date(2025, 12, 1)
        )
    off = SiteOptions(enabled=False)
    results: dict = {
        "days": args.days,
        "players": args.players,
        "cores": os.cpu_count(),
        "load_average_before": os.getloadavg(),
        "python": platform.python_version(),
    }

    moto = subprocess.Popen(
        [sys.executable, "-c", MOTO], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        port = int(moto.stdout.readline())
        os.environ.update(
            {
                "AWS_ACCESS_KEY_ID": "bench",
                "AWS_SECRET_ACCESS_KEY": "bench",
                "AWS_REGION": "us-east-1",
                "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
            }
        )
        import s3fs

        s3fs.S3FileSystem(
            endpoint_url=f"http://127.0.0.1:{port}", key="bench", secret="bench"
        ).mkdir("bench")
        with prefect_api():
            local = work / "warehouse"
            shutil.rmtree(local, ignore_errors=True)
            t_nightly, _ = timed(nightly, Settings(warehouse=local, landing=landing, site=off))
            first, last = run_sql(
                local, "select min(month) a, max(month) b from simultane_deal_results"
            ).row(0)
            results.update(months=f"{first}..{last}", nightly_local_s=t_nightly)
            print(f"months {first}..{last}; first nightly {t_nightly} s", flush=True)

            runs = {}
            t, _ = timed(
                backfill, Settings(warehouse=local, landing=landing, site=off), first, last
            )
            runs["local_runner"] = t
            print(f"backfill, default runner: {t} s", flush=True)
            for n in [int(w) for w in args.workers.split(",")]:
                options = ClusterOptions(runner="dask", workers=n)
                t, _ = timed(
                    backfill,
                    Settings(warehouse=local, landing=landing, site=off, cluster=options),
                    first,
                    last,
                )
                runs[f"dask_{n}_workers"] = t
                runs[f"dask_{n}_workers_cluster_start"] = cluster_start(n)
                print(f"backfill, dask {n} workers: {t} s", flush=True)

            remote = "s3://bench/warehouse"
            t_s3_nightly, _ = timed(nightly, Settings(warehouse=remote, landing=landing, site=off))
            t, _ = timed(
                backfill, Settings(warehouse=remote, landing=landing, site=off), first, last
            )
            runs["s3_moto_local_runner"] = t
            results["nightly_s3_moto_s"] = t_s3_nightly
            print(f"backfill on S3 (moto), default runner: {t} s", flush=True)
            results["backfill_s"] = runs
    finally:
        moto.stdin.close()
        moto.wait(10)
    results["load_average_after"] = os.getloadavg()
    out = ROOT / "bench" / "results" / "cluster.json"
    out.write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
