"""Peak memory of `duplirank sql` printing a whole published table (issue 9: results stream).

Publishes one table of `--rows` rows (integers, text, a double, a list and a struct) into a
warehouse, then runs the real command `duplirank sql "select * from big" --format F` in a child
process per format, stdout to /dev/null, and reads its peak RSS (`wait4`) and wall time; the
same at a tenth of the rows shows that memory does not grow with the rows.

    .venv/bin/python bench/bench_sql.py --rows 10_000_000
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# isort: off
from flows.allocator import use_batch_allocator  # noqa: E402
from flows.prefect_env import use_prefect_defaults  # noqa: E402

use_batch_allocator()  # the product's runtime, as a run sets it: before Polars and Prefect
use_prefect_defaults()

import polars as pl  # noqa: E402
# isort: on

from flows.storage.warehouse import Warehouse  # noqa: E402


def publish(root: Path, rows: int) -> None:
    shutil.rmtree(root, ignore_errors=True)
    wh = Warehouse(root)
    tx = wh.transaction("bench")
    i = pl.int_range(rows, eager=True).alias("i")
    frame = pl.DataFrame(i).with_columns(
        pl.format("P{}", pl.col("i") % 50_000).alias("player_id"),
        (pl.col("i") / 7).alias("pct"),
        pl.concat_list(pl.col("i"), pl.col("i") + 1).alias("l"),
        pl.struct(a=pl.col("i") % 13, b=pl.lit("x")).alias("s"),
    )
    tx.put("gold", "big", "all", frame)
    tx.commit()


# Linux counts in a child's ru_maxrss the memory of its parent before `exec`: the command is
# started by a small launcher (~10 MB) so that the figure is the command's own.
LAUNCHER = (
    "import os, subprocess, sys\n"
    "p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
    "_, status, usage = os.wait4(p.pid, 0)\n"
    "print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)\n"
)


def run(root: Path, rows: int, fmt: str) -> dict:
    env = {**os.environ, "DUPLIRANK_SQL__TIMEOUT_S": "0"}
    argv = [sys.executable, "-m", "flows.cli", "sql", "select * from big", "--format", fmt]
    start = time.perf_counter()
    launched = subprocess.run(
        [sys.executable, "-S", "-c", LAUNCHER, *argv, "--warehouse", str(root)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    code, rss_kib = map(int, launched.stdout.split())
    assert code == 0, launched.stderr
    return {
        "rows": rows,
        "format": fmt,
        "wall_s": round(time.perf_counter() - start, 1),
        "peak_rss_mib": round(rss_kib / 1024),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--work", type=Path, default=ROOT / "bench" / "data" / "sql")
    parser.add_argument("--publish", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.publish:  # in a child process, so that this one stays small
        publish(args.work / f"wh-{args.publish}", args.publish)
        return
    results = []
    for rows in (args.rows // 10, args.rows):
        root = args.work / f"wh-{rows}"
        child = [sys.executable, __file__, "--publish", str(rows), "--work", str(args.work)]
        subprocess.run(child, check=True)
        for fmt in ("csv", "jsonl", "json", "table"):
            results.append(run(root, rows, fmt))
            print(results[-1], flush=True)
        shutil.rmtree(root)
    out = (
        ROOT
        / "bench"
        / "results"
        / ("sql_stream.json" if args.rows == 10_000_000 else f"sql_stream_{args.rows}.json")
    )
    out.write_text(
        json.dumps({"results": results, "load_average": os.getloadavg()[0]}, indent=1) + "\n"
    )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
