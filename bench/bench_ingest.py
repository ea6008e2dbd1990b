"""Ingest vs DuckDB `read_json` → Parquet (quality.md: ≤ 2× its time, peak RSS ≤ 1 GiB, the
same peak at 4× the lines).

Generates Simultané logs with the project's generator (`flows.synthetic.simultane`, 0.1 % of
the lines corrupted), one JSON Lines file per day, cached under `bench/data/ingest/`. Then,
each in a fresh subprocess (so peak RSS is the job's own, `ru_maxrss`), alternating, `--repeat`
times:
  - floor: DuckDB `copy (select * from read_json([files], ignore_errors = true)) to '….parquet'`;
  - ingest: `duplirank ingest` of the same files into an empty warehouse (`run_ingest`:
    validation, bronze, quarantine, log, publication).
Times are measured inside the subprocess around the job only (not the interpreter start nor
the imports). Medians are reported, with the CPU seconds and the machine's load average
(other processes share it). Then the ingest once more on 4× the lines for its peak RSS, and
both on a landing of many small files (`--small-files` files of 50 lines cut from the first
day: one file per tournament or per match is how some servers deliver).

    .venv/bin/python bench/bench_ingest.py                 # ~1 M lines, then ~4 M
    .venv/bin/python bench/bench_ingest.py --lines 100000 --big 0   # a smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LINES_PER_PLAYER_DAY = 21.4  # measured on the generator: lines ≈ 21.4 × players × days
DAYS = 5

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {root!r})
import flows  # the product's runtime settings (allocator), as every command has them
kind, files, out = sys.argv[1], json.loads(open(sys.argv[2]).read()), sys.argv[3]
if kind == "duckdb":
    import duckdb
    con = duckdb.connect()
    t0, c0 = time.perf_counter(), time.process_time()
    con.execute(
        "copy (select * from read_json($files, ignore_errors = true)) to '" + out + "' "
        "(format parquet)",
        {{"files": files}},
    )
    rows = con.execute("select count(*) from read_parquet($p)", {{"p": out}}).fetchone()[0]
else:
    from pathlib import Path
    from flows.runs import ingest_run as run_ingest
    from flows.settings import Settings
    t0, c0 = time.perf_counter(), time.process_time()
    summary = run_ingest(Settings(warehouse=Path(out)), [Path(f) for f in files])
    rows = sum(f.rows_accepted for f in summary.ingest.files)
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({{"wall_s": wall, "cpu_s": cpu, "peak_rss_bytes": peak, "rows": rows}}))
"""
# A small process starts the job and reads its peak RSS (`RUSAGE_CHILDREN`): a child forked
# from this script would report this script's own memory as its peak (Linux keeps the
# high-water mark across exec).
LAUNCHER = r"""
import json, resource, subprocess, sys
done = subprocess.run(sys.argv[1:], check=True, capture_output=True, text=True)
result = json.loads(done.stdout.strip().splitlines()[-1])
result["peak_rss_bytes"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
print(json.dumps(result))
"""


GENERATE = r"""
import sys
sys.path.insert(0, {root!r})
from datetime import date
from pathlib import Path
from flows.synthetic.files import _write
from flows.synthetic.simultane import simultane_log
out, players, days, seed = Path(sys.argv[1]), *map(int, sys.argv[2:])
log = simultane_log(seed, players, date(2026, 10, 1), days, corrupt_rate=0.001)
for day in log.days:
    _write(out / f"simultane-s{{seed}}-{{day.day}}.jsonl", day.lines)
"""


def generate(folder: Path, lines: int, seed: int) -> list[Path]:
    """Simultané logs of DAYS days with about `lines` lines (0.1 % corrupted), cached.
    Written by a subprocess: this script stays small (see LAUNCHER)."""
    players = max(10, round(lines / LINES_PER_PLAYER_DAY / DAYS))
    target = folder / f"sim-{players}p-{DAYS}d-s{seed}"
    if not target.exists():
        print(f"generating {players} players × {DAYS} days…", flush=True)
        tmp = target.with_suffix(".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        code = GENERATE.format(root=str(ROOT))
        args = [str(tmp), str(players), str(DAYS), str(seed)]
        subprocess.run([sys.executable, "-c", code, *args], check=True)
        tmp.rename(target)
    return sorted(target.iterdir())


def small_files(folder: Path, source: Path, count: int, lines: int = 50) -> list[Path]:
    """`count` files of `lines` lines each, the first lines of `source` (cached)."""
    target = folder / f"small-{count}x{lines}"
    if not target.exists():
        tmp = target.with_suffix(".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        with source.open("rb") as handle:
            for n in range(count):
                part = b"".join(handle.readline() for _ in range(lines))
                (tmp / f"day-{n:05d}.jsonl").write_bytes(part)
        tmp.rename(target)
    return sorted(target.iterdir())


def measure(kind: str, files: list[Path], work: Path) -> dict:
    out = work / ("floor.parquet" if kind == "duckdb" else "warehouse")
    shutil.rmtree(out, ignore_errors=True)
    out.unlink(missing_ok=True) if out.suffix else None
    code = CHILD.format(root=str(ROOT))
    listing = work / "files.json"  # not an argument: 2,000 paths pass its 128 KiB limit
    listing.write_text(json.dumps([str(f) for f in files]))
    job = [sys.executable, "-c", code, kind, str(listing), str(out)]
    done = subprocess.run(
        [sys.executable, "-c", LAUNCHER, *job], check=True, capture_output=True, text=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def median(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--big", type=int, default=4, help="peak RSS also at N × the lines")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--small-files", type=int, default=2000, help="0: not measured")
    parser.add_argument("--work", type=Path, default=ROOT / "bench" / "data" / "ingest")
    args = parser.parse_args()

    files = generate(args.work, args.lines, seed=5)
    lines = sum(f.read_bytes().count(b"\n") for f in files)
    size = sum(f.stat().st_size for f in files)
    load_before = os.getloadavg()
    floor, ours = [], []
    for _ in range(args.repeat):
        floor.append(measure("duckdb", files, args.work))
        ours.append(measure("ingest", files, args.work))
    load_after = os.getloadavg()
    result = {
        "lines": lines,
        "files": len(files),
        "megabytes": round(size / 1e6, 1),
        "floor_duckdb_read_json_s": round(median(floor, "wall_s"), 3),
        "floor_cpu_s": round(median(floor, "cpu_s"), 3),
        "floor_peak_rss_gib": round(median(floor, "peak_rss_bytes") / 2**30, 3),
        "ingest_s": round(median(ours, "wall_s"), 3),
        "ingest_cpu_s": round(median(ours, "cpu_s"), 3),
        "ratio": round(median(ours, "wall_s") / median(floor, "wall_s"), 2),
        "cpu_ratio": round(median(ours, "cpu_s") / median(floor, "cpu_s"), 2),
        "goal": "ratio <= 2, peak <= 1 GiB at both sizes",
        "ingest_peak_rss_gib": round(max(r["peak_rss_bytes"] for r in ours) / 2**30, 3),
        "rows_accepted": ours[-1]["rows"],
        "floor_rows": floor[-1]["rows"],
        "runs": {
            "floor_wall_s": [round(r["wall_s"], 3) for r in floor],
            "ingest_wall_s": [round(r["wall_s"], 3) for r in ours],
        },  # fmt: skip
        "load_average_before_after": [round(load_before[0], 2), round(load_after[0], 2)],
        "cores": os.cpu_count(),
    }
    if args.big:
        big_files = [f for seed in range(5, 5 + args.big)
                     for f in generate(args.work, args.lines, seed)]  # fmt: skip
        big = measure("ingest", big_files, args.work)
        result |= {
            "big_lines": sum(f.read_bytes().count(b"\n") for f in big_files),
            "big_ingest_s": round(big["wall_s"], 3),
            "big_ingest_peak_rss_gib": round(big["peak_rss_bytes"] / 2**30, 3),
        }
    if args.small_files:
        small = small_files(args.work, files[0], args.small_files)
        floor_small = measure("duckdb", small, args.work)
        ours_small = measure("ingest", small, args.work)
        result |= {
            "small_files": len(small),
            "small_lines": sum(f.read_bytes().count(b"\n") for f in small),
            "small_floor_s": round(floor_small["wall_s"], 3),
            "small_ingest_s": round(ours_small["wall_s"], 3),
            "small_ratio": round(ours_small["wall_s"] / floor_small["wall_s"], 2),
        }
    shutil.rmtree(args.work / "warehouse", ignore_errors=True)
    (args.work / "floor.parquet").unlink(missing_ok=True)
    name = "ingest" if args.lines == 1_000_000 else f"ingest_{args.lines}"
    out = ROOT / "bench" / "results" / f"{name}.json"
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
