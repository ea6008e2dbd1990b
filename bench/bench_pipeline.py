"""Nightly incremental run vs full backfill (quality.md: incremental ≤ 10 % of the backfill).

Generates `--days` days of logs (all competitions, `duplirank generate`'s generator), then in
one process (one Prefect temporary server, started before timing):
  1. history: nightly over the first days-1 days (ingest + score everything);  T_history
  2. incremental: the last day is delivered, nightly again;                    T_incremental
  3. full backfill of every month from bronze;                                 T_backfill
and reports T_incremental / T_backfill, plus the peak RSS of the process.

    .venv/bin/python bench/bench_pipeline.py --days 365 --players 100
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
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

from flows.nightly import backfill, nightly  # noqa: E402
from flows.query import run_sql  # noqa: E402
from flows.settings import Settings  # noqa: E402
from flows.synthetic import generate  # noqa: E402


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - start, out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--players", type=int, default=100)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--work", type=Path, default=ROOT / "bench" / "data" / "pipeline")
    args = parser.parse_args()

    work = args.work
    logs = work / f"logs-{args.days}d-{args.players}p-s{args.seed}"
    if not logs.exists():
        print(f"generating {args.days} days for {args.players} players…", flush=True)
        generate(
            logs, players=args.players, days=args.days, seed=args.seed, start=date(2025, 12, 1)
        )
    files = sorted(logs.iterdir(), key=lambda p: (p.name.split("-", 1)[1], p.name))
    last_day = files[-1].name.split("-", 1)[1].split(".")[0]
    history = [f for f in files if last_day not in f.name]
    new = [f for f in files if last_day in f.name]

    landing = work / "landing"
    warehouse = work / "warehouse"
    shutil.rmtree(landing, ignore_errors=True)
    shutil.rmtree(warehouse, ignore_errors=True)
    landing.mkdir(parents=True)
    for f in history:
        shutil.copy(f, landing / f.name)
    settings = Settings(warehouse=warehouse, landing=landing)

    # warm-up: start Prefect's temporary server outside the timings
    warm = work / "warm"
    shutil.rmtree(warm, ignore_errors=True)
    warm.mkdir()
    nightly(Settings(warehouse=work / "warm-wh", landing=warm))

    t_history, _ = timed(nightly, settings)
    for f in new:
        shutil.copy(f, landing / f.name)
    t_incremental, summary = timed(nightly, settings)
    months = run_sql(
        warehouse, "select min(month) a, max(month) b from simultane_deal_results"
    )
    first, last = months.row(0)
    t_backfill, _ = timed(backfill, settings, first, last)
    rows = run_sql(warehouse, "select count(*) n from simultane_deal")["n"][0]
    peak_gib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20

    result = {
        "days": args.days,
        "players": args.players,
        "simultane_deal_rows": int(rows),
        "months": f"{first}..{last}",
        "new_files": [f.name for f in new],
        "rebuilt_by_incremental": summary.rebuilt,
        "t_history_s": round(t_history, 2),
        "t_incremental_s": round(t_incremental, 2),
        "t_backfill_s": round(t_backfill, 2),
        "incremental_over_backfill": round(t_incremental / t_backfill, 3),
        "goal": "<= 0.10",
        "peak_rss_gib": round(peak_gib, 2),
    }
    name = (
        "pipeline"
        if (args.days, args.players) == (365, 100)
        else (f"pipeline_{args.days}d_{args.players}p")
    )
    out = ROOT / "bench" / "results" / f"{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
