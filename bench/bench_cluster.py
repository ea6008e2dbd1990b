"""A 12-month backfill in process against the same backfill on a local 2-worker Dask cluster,
whole CLI processes alternating, and the fixed costs of the cluster measured on their own.

Generates `--days` days of logs (`duplirank generate`'s generator) and publishes them once
with a nightly (not timed against anything). One Prefect server serves every run (started
before timing, as production keeps one running). Then:

- the cluster started by hand, as docs/cluster.md says (`dask scheduler`, 2 × `dask worker
  --nthreads 1 --preload flows.cluster_worker`): its start is timed on its own (until both
  workers have loaded the project);
- the cost of one task: a Prefect task that does nothing, sent to that cluster (one at a
  time: the round trip; all at once: the throughput of 2 workers), the same on Prefect's
  default runner (threads of one process), and a plain Dask task;
- `--rounds` rounds of `duplirank backfill first..last` in turn: in process (`--runner
  local`), on the running cluster (`--scheduler ADDRESS`), and on a local cluster started and
  stopped by the run itself (`--workers 2`: the start included);
- the stages of each run (its run summary) and what N workers would give by these measures
  (docs/cluster.md).

    .venv/bin/python bench/bench_cluster.py --days 365 --players 30 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from process import (  # noqa: E402
    command,
    environment,
    fresh,
    load,
    prepare,
    stage_times,
    start_prefect_server,
    timed,
)

START = date(2025, 12, 1)
KINDS = ("in_process", "dask_running_cluster", "dask_cluster_per_run")
# the stages whose tasks all run at once on the workers (the partition tasks): the rest of a
# run — its start, the plan, the histories (the Elo chain is one task; Simultané's shards
# end in one task), the publication — is counted as fixed (conservative)
PARALLEL = ("score ",)


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def months(days: int) -> tuple[str, str]:
    last = START + timedelta(days=days - 1)
    return f"{START:%Y-%m}", f"{last:%Y-%m}"


class HandStartedCluster:
    """`dask scheduler` and `dask worker` processes, as an operator starts them."""

    def __init__(self, workers: int, work: Path) -> None:
        self.workers, self.work, self.processes = workers, work, []

    def start(self) -> tuple[str, float]:
        dask = str(Path(sys.executable).with_name("dask"))
        env = environment(PYTHONPATH=str(ROOT), DASK_LOGGING__DISTRIBUTED="error")
        file = self.work / "scheduler.json"
        file.unlink(missing_ok=True)
        log = open(self.work / "cluster.log", "ab")  # noqa: SIM115 (open while they run)
        started = time.perf_counter()
        self.processes.append(
            subprocess.Popen(
                [dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                 "--scheduler-file", str(file)],
                cwd=ROOT, env=env, stdout=log, stderr=log,
            )
        )  # fmt: skip
        for _ in range(self.workers):
            self.processes.append(
                subprocess.Popen(
                    [dask, "worker", "--scheduler-file", str(file), "--nthreads", "1",
                     "--preload", "flows.cluster_worker", "--no-dashboard"],
                    cwd=ROOT, env=env, stdout=log, stderr=log,
                )
            )  # fmt: skip
        wait = (
            "import sys; from distributed import Client; "
            "c = Client(scheduler_file=sys.argv[1], timeout=300); "
            "c.wait_for_workers(int(sys.argv[2]), timeout=300); "
            "print(c.scheduler.address)"
        )
        for _ in range(600):
            if file.exists() and file.stat().st_size:
                break
            time.sleep(0.1)
        address = subprocess.run(
            [sys.executable, "-c", wait, str(file), str(self.workers)],
            capture_output=True, text=True, check=True, env=env,
        ).stdout.strip()  # fmt: skip
        return address, round(time.perf_counter() - started, 2)

    def stop(self) -> None:
        for process in reversed(self.processes):
            process.terminate()
        for process in self.processes:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()


# The cost of one task, measured in a process of its own (Prefect and Dask imported there).
OVERHEAD = r"""
import json, os, sys, time
sys.path.insert(0, os.getcwd())
from flows.prefect_env import use_prefect_defaults
use_prefect_defaults()
from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect_dask import DaskTaskRunner

@task(cache_policy=NO_CACHE)
def nothing(x):
    return x

K = int(sys.argv[2])

def measure():
    nothing.submit(-1).result()  # the first task of a run (the worker's client, its context)
    start = time.perf_counter()
    for i in range(K):
        nothing.submit(i).result()
    one = (time.perf_counter() - start) / K
    start = time.perf_counter()
    for future in [nothing.submit(i) for i in range(K)]:
        future.result()
    return {"round_trip_s": round(one, 4),
            "all_at_once_s_per_task": round((time.perf_counter() - start) / K, 4)}

on_cluster = flow(task_runner=DaskTaskRunner(address=sys.argv[1]))(measure)
in_process = flow(measure)

def plain():
    from distributed import Client
    with Client(sys.argv[1]) as client:
        client.submit(int, -1, pure=False).result()
        start = time.perf_counter()
        for i in range(K):
            client.submit(int, i, pure=False).result()
        return {"round_trip_s": round((time.perf_counter() - start) / K, 4)}

if __name__ == "__main__":
    print(json.dumps({"prefect_task_on_dask": on_cluster(), "prefect_task_in_process":
                      in_process(), "plain_dask_task": plain(), "tasks": K}))
"""


def estimate(stages: dict[str, float], whole: float, workers: int) -> dict:
    """What N workers give a run measured on `workers` workers: its parallel stages divide by
    N / workers, the rest (start, plan, publication, cluster overhead) stays."""
    parallel = sum(v for k, v in stages.items() if k.startswith(PARALLEL))
    fixed = whole - parallel
    times = {n: fixed + parallel * workers / n for n in (1, 2, 4, 8, 16, 32)}
    return {
        "parallel_s": round(parallel, 2),
        "fixed_s": round(fixed, 2),
        "seconds_by_workers": {n: round(t, 2) for n, t in times.items()},
        "speed_up_vs_1_worker": {n: round(times[1] / t, 2) for n, t in times.items()},
        "limit_speed_up": round(times[1] / fixed, 2) if fixed > 0 else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--players", type=int, default=30)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--work", type=Path, default=ROOT / "bench" / "data" / "cluster")
    args = parser.parse_args()

    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    prepare()
    landing = work / f"logs-{args.days}d-{args.players}p-s{args.seed}"
    if not landing.exists():
        print(f"generating {args.days} days for {args.players} players…", flush=True)
        subprocess.run(
            command("generate", "--out", str(landing), "--players", str(args.players),
                    "--days", str(args.days), "--seed", str(args.seed), "--start", str(START)),
            cwd=ROOT, env=environment(), check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
    first, last = months(args.days)
    results: dict = {
        "command": "bench/bench_cluster.py " + " ".join(sys.argv[1:]),
        "days": args.days,
        "players": args.players,
        "months": f"{first}..{last}",
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "uptime_before": uptime(),
    }
    server, server_s = start_prefect_server(work)
    env = environment(DUPLIRANK_SITE__ENABLED="false", PYTHONPATH=str(ROOT))
    cluster = HandStartedCluster(args.workers, work)
    try:
        warehouse = fresh(work / "warehouse")
        nightly = timed(
            command("nightly", "--landing", str(landing), "--warehouse", str(warehouse), "-q"),
            env,
        )
        results["first_nightly_s"] = round(nightly["wall_s"], 2)
        print(f"months {first}..{last}; first nightly {nightly['wall_s']:.1f} s", flush=True)

        address, started = cluster.start()
        results["cluster_start_s"] = started
        print(f"cluster started by hand ({args.workers} workers): {started} s", flush=True)
        overhead = subprocess.run(
            [sys.executable, "-c", OVERHEAD, address, "20"],
            cwd=ROOT, env=env, capture_output=True, text=True, check=True,
        )  # fmt: skip
        results["task_overhead"] = json.loads(overhead.stdout.strip().splitlines()[-1])
        print(f"one task: {results['task_overhead']}", flush=True)

        backfill = ("backfill", "--warehouse", str(warehouse), "--from", first, "--to", last)
        flags = {
            "in_process": ("--runner", "local"),
            "dask_running_cluster": ("--scheduler", address),
            "dask_cluster_per_run": ("--workers", str(args.workers)),
        }
        rounds = []
        for number in range(args.rounds):
            row: dict = {"load": load()}
            for kind in KINDS:
                run = timed(command(*backfill, *flags[kind]), env)
                row[kind] = {
                    "wall_s": round(run["wall_s"], 2),
                    "cpu_s": round(run["cpu_s"], 2),
                    "stages": {k: round(v, 2) for k, v in stage_times(run["stderr"]).items()},
                }
                print(f"round {number + 1}: {kind} {run['wall_s']:.2f} s", flush=True)
            rows = {k: row[k]["wall_s"] for k in KINDS}
            print(f"round {number + 1}: {rows} (load {row['load']})", flush=True)
            rounds.append(row)
    finally:
        cluster.stop()
        server.stop()
    results["rounds"] = rounds
    median = {k: statistics.median(r[k]["wall_s"] for r in rounds) for k in KINDS}
    results["median_s"] = median
    results["ratio_running_cluster_vs_in_process"] = round(
        median["dask_running_cluster"] / median["in_process"], 2
    )
    results["ratio_cluster_per_run_vs_in_process"] = round(
        median["dask_cluster_per_run"] / median["in_process"], 2
    )
    # each round's two runs share its load: the median of the rounds' ratios
    for kind in KINDS[1:]:
        ratios = [r[kind]["wall_s"] / r["in_process"]["wall_s"] for r in rounds]
        results[f"round_ratios_{kind}"] = [round(x, 2) for x in ratios]
        results[f"median_round_ratio_{kind}"] = round(statistics.median(ratios), 2)
    best = min(rounds, key=lambda r: r["dask_running_cluster"]["wall_s"])["dask_running_cluster"]
    results["estimate_from_running_cluster"] = estimate(
        best["stages"], best["wall_s"], args.workers
    )
    results["uptime_after"] = uptime()
    results["prefect_server_start_s"] = round(server_s, 2)
    out = ROOT / "bench" / "results" / "cluster.json"
    out.write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps({k: v for k, v in results.items() if k != "rounds"}, indent=1))


if __name__ == "__main__":
    main()
