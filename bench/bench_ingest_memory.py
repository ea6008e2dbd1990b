"""Peak memory of ingesting files of very many short lines (quality.md: memory is bounded by a
chunk whatever its lines; issue 28: 50 M empty lines in a small gzip under 1 GiB).

Each case writes one gzip file (empty lines, or lines of `x`), runs the real command
`python -m flows.cli ingest FILE --warehouse W` of this checkout in a child process, reads the
child's peak RSS (`wait4`: the whole process, every thread and library), then checks that every
line is accounted for: `ingest_log` says lines_read = rows_quarantined = the file's lines and the
quarantine rows stand for exactly those lines (the sum of `line_count`, runs that neither
overlap nor leave a gap).

    .venv/bin/python bench/bench_ingest_memory.py                # 50 M empty, 2 M `x`
    .venv/bin/python bench/bench_ingest_memory.py --empty 1_000_000 --x 100_000
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from flows.storage.warehouse import Warehouse  # noqa: E402

GOAL_GIB = 1.0
BLOCK_LINES = 1 << 20


def write_lines(path: Path, line: bytes, count: int) -> int:
    """A gzip file of `count` copies of `line` (each with its `\\n`); its size in bytes."""
    with gzip.open(path, "wb", compresslevel=9) as out:
        block = line * BLOCK_LINES
        for _ in range(count // BLOCK_LINES):
            out.write(block)
        out.write(line * (count % BLOCK_LINES))
    return path.stat().st_size


def run_ingest(path: Path, warehouse: Path, work: Path) -> tuple[float, float, int]:
    """(seconds, peak RSS in GiB, exit code) of one ingest in a child process."""
    env = os.environ | {"XDG_STATE_HOME": str(work / "state")}
    start = time.perf_counter()
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "flows.cli",
            "ingest",
            str(path),
            "--warehouse",
            str(warehouse),
            "--quiet",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - start, usage.ru_maxrss / 2**20, child.returncode


def accounted(warehouse: Path, lines: int) -> dict:
    """What the warehouse says of the file's lines (asserting each is accounted once)."""
    wh = Warehouse(warehouse)
    log = pl.read_parquet(wh.files("ingest_log")).row(0, named=True)
    rows = pl.read_parquet(wh.files("quarantine")).sort("line_no")
    assert log["lines_read"] == lines == log["rows_accepted"] + log["rows_quarantined"], log
    assert rows["line_count"].sum() == lines, rows["line_count"].sum()
    assert (rows["last_line_no"] - rows["line_no"] + 1 == rows["line_count"]).all()
    assert rows["line_no"][0] == 1 and rows["last_line_no"][-1] == lines
    assert (rows["line_no"][1:] == rows["last_line_no"][:-1] + 1).all(), "a gap or an overlap"
    return {
        "lines_read": log["lines_read"],
        "rows_quarantined": log["rows_quarantined"],
        "quarantine_rows": rows.height,
        "reasons": sorted(set(rows["reason"])),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--empty", type=int, default=50_000_000, help="empty lines")
    parser.add_argument("--x", type=int, default=2_000_000, help="lines of `x`")
    parser.add_argument("--work", type=Path, default=ROOT / "bench" / "data" / "ingest_memory")
    parser.add_argument(
        "--out", type=Path, default=ROOT / "bench" / "results" / "ingest_memory.json"
    )
    args = parser.parse_args()

    cases = []
    for name, line, count in (("empty lines", b"\n", args.empty), ("lines of x", b"x\n", args.x)):
        if not count:
            continue
        shutil.rmtree(args.work, ignore_errors=True)
        (args.work / "landing").mkdir(parents=True)
        path = args.work / "landing" / "night.jsonl.gz"
        size = write_lines(path, line, count)
        seconds, peak, code = run_ingest(path, args.work / "wh", args.work)
        assert code == 0, f"ingest exit code {code}"
        case = {
            "case": name,
            "lines": count,
            "gzip_bytes": size,
            "ingest_s": round(seconds, 1),
            "peak_rss_gib": round(peak, 3),
            "goal_gib": GOAL_GIB,
            "within_goal": peak <= GOAL_GIB,
        } | accounted(args.work / "wh", count)
        print(json.dumps(case), flush=True)
        cases.append(case)
    shutil.rmtree(args.work, ignore_errors=True)
    result = {
        "command": "python -m flows.cli ingest FILE --warehouse W --quiet (child process)",
        "peak": "ru_maxrss of the child (wait4): the whole process",
        "load_before": os.getloadavg(),
        "cases": cases,
    }
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
