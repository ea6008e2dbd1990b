"""Peak memory of backfilling one month of `--rows` Simultané deal rows (quality.md: 100 million
rows under 8 GiB).

Writes the month's bronze straight to a warehouse (chunks from bench_simultane's numpy
generator, distinct tournament ids per chunk), then runs the real command
`duplirank backfill --from M --to M` in a child process and reads its peak RSS.

    .venv/bin/python bench/bench_memory.py --rows 100_000_000
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

# isort: off
from flows.allocator import use_batch_allocator  # noqa: E402
from flows.prefect_env import use_prefect_defaults  # noqa: E402

use_batch_allocator()  # the product's runtime, as a run sets it: before Polars and Prefect
use_prefect_defaults()

import polars as pl  # noqa: E402
# isort: on

from bench_simultane import MONTH_START, generate  # noqa: E402

from flows.storage.warehouse import Warehouse  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000_000)
    parser.add_argument("--chunk", type=int, default=10_000_000)
    parser.add_argument("--players", type=int, default=50_000)
    parser.add_argument("--work", type=Path, default=ROOT / "bench" / "data" / "memory")
    parser.add_argument("--keep", action="store_true", help="keep the warehouse")
    args = parser.parse_args()

    warehouse = args.work / f"wh-{args.rows}"
    month = MONTH_START.strftime("%Y-%m")
    shutil.rmtree(warehouse, ignore_errors=True)
    wh = Warehouse(warehouse)
    tx = wh.transaction("bench")
    written = 0
    for k in range(-(-args.rows // args.chunk)):
        tmp = args.work / "chunk.parquet"
        generate(tmp, min(args.chunk, args.rows - written), args.players, 30, seed=k)
        chunk = pl.read_parquet(tmp).with_columns(
            (pl.lit(f"C{k:02d}") + pl.col("tournament_id")).alias("tournament_id")
        )
        if "month" in chunk.columns:  # bronze holds its storage partition, not a month
            chunk = chunk.rename({"month": "raw_month"})
        tx.add("bronze", "simultane_deal", f"raw_month={month}", chunk)
        written += chunk.height
        print(f"bronze: {written:,} rows", flush=True)
        del chunk
    tx.mark_dirty("simultane", [month])
    tx.commit()

    start = time.perf_counter()
    subprocess.run(
        [
            str(ROOT / ".venv" / "bin" / "duplirank"),
            "backfill",
            "--from",
            month,
            "--to",
            month,
            "--warehouse",
            str(warehouse),
        ],
        check=True,
    )
    elapsed = time.perf_counter() - start
    peak_gib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20
    result = {
        "deal_rows_in_month": written,
        "batch_rows": 5_000_000,
        "backfill_s": round(elapsed, 1),
        "peak_rss_gib": round(peak_gib, 2),
        "goal_gib": 8,
    }
    out = ROOT / "bench" / "results" / f"memory_{args.rows}.json"
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))
    if not args.keep:
        shutil.rmtree(warehouse, ignore_errors=True)


if __name__ == "__main__":
    main()
