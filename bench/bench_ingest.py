"""Ingest vs DuckDB `read_json` → Parquet, whole process against whole process (quality.md:
`duplirank ingest` ≤ 2× a Python process running DuckDB's `read_json(…, ignore_errors = true)`
→ Parquet on the same files, peak RSS ≤ 1 GiB, the same at 4× the lines).

Data of several shapes, from the project's generator (`flows.tools.synthetic.simultane`, 0.1 %
of the lines corrupted), cached under `bench/data/ingest/`:
  - `compact`: the generator's JSON (no spaces), 4 tournaments a day of thousands of players
    (tens of thousands of rows each), one file per day (5 files);
  - `spaced`: the same records as Python's `json.dumps` writes them by default (`", "` and
    `": "`), the corrupted lines unchanged;
  - `compact_3000` and `spaced_3000`: tournaments of ~3,000 rows (fewer players, more days),
    all in one file;
  - `small_files` and `small_files_spaced`: `--small-files` files of 50 lines cut from the
    first day (one file per tournament or per match is how some servers deliver).
For each shape, alternating, `--repeat` times, each a whole process started from this checkout
(`bench/process.py`: interpreter, imports, the job, its exit; wall and CPU time, peak RSS):
  - floor: `python -c "import duckdb; … copy (select * from read_json(files, ignore_errors =
    true)) to '….parquet'"`;
  - ours: `duplirank ingest --warehouse NEW FOLDER` (validation, bronze, quarantine, log,
    publication), the command a user runs.
The ingest's own summary (its stage times, measured inside the process) is kept as the
breakdown. Then the ingest once more on `--big` × the lines for its peak RSS.

    .venv/bin/python bench/bench_ingest.py                 # ~1 M lines a shape, then ~4 M
    .venv/bin/python bench/bench_ingest.py --quick         # ~200 k lines, 3 runs, no 4×
    .venv/bin/python bench/bench_ingest.py --shapes compact spaced
    .venv/bin/python bench/bench_ingest.py --quick --compare /tmp/main-clone   # old vs new
With `--compare CHECKOUT`, the same command of another checkout of duplirank (its own code,
compiled first) runs too, in the same rounds: the two codes measured alternating, on one load.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from process import (  # noqa: E402
    CONSOLE_SCRIPT,
    ROOT,
    command,
    environment,
    fresh,
    load,
    median,
    prepare,
    python,
    stage_times,
    timed,
)

LINES_PER_PLAYER_DAY = 21.4  # measured on the generator: lines ≈ 21.4 × players × days
DAYS = 5
PLAYERS_3000 = 480  # ~3,000 rows a tournament (present players × deals)
SHAPES = ("compact", "spaced", "compact_3000", "spaced_3000", "small_files", "small_files_spaced")

FLOOR = """
import json, sys
import duckdb
files = json.loads(open(sys.argv[1]).read())
duckdb.connect().execute(
    "copy (select * from read_json($files, ignore_errors = true)) to '" + sys.argv[2] + "' "
    "(format parquet)",
    {"files": files},
)
"""

GENERATE = r"""
import sys
sys.path.insert(0, {root!r})
from datetime import date
from pathlib import Path
from flows.tools.synthetic.simultane import simultane_log
out, players, days, seed, one_file = Path(sys.argv[1]), *map(int, sys.argv[2:])
# one file: its days end on 2026-10-31, so that every date is plausible
start = date.fromordinal(date(2026, 11, 1).toordinal() - days) if one_file else date(2026, 10, 1)
log = simultane_log(seed, players, start, days, corrupt_rate=0.001)
if one_file:
    with open(out / f"simultane-s{{seed}}-{{players}}p.jsonl", "w") as handle:
        for day in log.days:
            handle.writelines(line + "\n" for line in day.lines)
else:
    for day in log.days:
        (out / f"simultane-s{{seed}}-{{day.day}}.jsonl").write_text(
            "".join(line + "\n" for line in day.lines))
"""

SPACE = r"""
import json, sys
from pathlib import Path
source, target = Path(sys.argv[1]), Path(sys.argv[2])
for path in sorted(source.iterdir()):
    with path.open() as lines, (target / path.name).open("w") as out:
        for line in lines:
            try:
                out.write(json.dumps(json.loads(line)) + "\n")  # ", " and ": "
            except ValueError:
                out.write(line)  # a corrupted line stays as it is
"""


def _cached(target: Path, make) -> list[Path]:
    if not target.exists():
        print(f"generating {target.name}…", flush=True)
        tmp = fresh(target.with_suffix(".tmp"))
        make(tmp)
        tmp.rename(target)
    return sorted(target.iterdir())


def generate(folder: Path, lines: int, seed: int) -> list[Path]:
    """Simultané logs of DAYS days with about `lines` lines (0.1 % corrupted), one file a day,
    cached. Written by a subprocess: this script stays small (bench/process.py)."""
    players = max(10, round(lines / LINES_PER_PLAYER_DAY / DAYS))
    code = GENERATE.format(root=str(ROOT))
    args = [str(players), str(DAYS), str(seed), "0"]
    return _cached(
        folder / f"sim-{players}p-{DAYS}d-s{seed}",
        lambda tmp: subprocess.run(python(code, str(tmp), *args), check=True),
    )


def generate_3000(folder: Path, lines: int, seed: int) -> list[Path]:
    """About `lines` lines in tournaments of ~3,000 rows, one file."""
    days = max(1, round(lines / LINES_PER_PLAYER_DAY / PLAYERS_3000))
    code = GENERATE.format(root=str(ROOT))
    args = [str(PLAYERS_3000), str(days), str(seed), "1"]
    return _cached(
        folder / f"sim-{PLAYERS_3000}p-{days}d-s{seed}-one-file",
        lambda tmp: subprocess.run(python(code, str(tmp), *args), check=True),
    )


def spaced(files: list[Path]) -> list[Path]:
    """The same files as `json.dumps` writes them by default (cached beside them)."""
    source = files[0].parent
    return _cached(
        source.with_name(source.name + "-spaced"),
        lambda tmp: subprocess.run(python(SPACE, str(source), str(tmp)), check=True),
    )


def small_files(source: Path, count: int, lines: int = 50) -> list[Path]:
    """`count` files of `lines` lines each, the first lines of `source` (cached)."""

    def make(tmp: Path) -> None:
        with source.open("rb") as handle:
            for n in range(count):
                part = b"".join(handle.readline() for _ in range(lines))
                (tmp / f"day-{n:05d}.jsonl").write_bytes(part)

    return _cached(source.parent.with_name(f"{source.parent.name}-{count}x{lines}"), make)


def shape_files(name: str, data: Path, lines: int, small: int) -> list[Path]:
    compact = generate(data, lines, seed=5)
    made = {
        "compact": lambda: compact,
        "spaced": lambda: spaced(compact),
        "compact_3000": lambda: generate_3000(data, lines, seed=5),
        "spaced_3000": lambda: spaced(generate_3000(data, lines, seed=5)),
        "small_files": lambda: small_files(compact[0], small),
        "small_files_spaced": lambda: small_files(spaced(compact)[0], small),
    }
    return made[name]()


def floor_run(files: list[Path], work: Path, env: dict) -> dict:
    listing = work / "files.json"  # not an argument: thousands of paths
    listing.write_text(json.dumps([str(f) for f in files]))
    out = work / "floor.parquet"
    out.unlink(missing_ok=True)
    result = timed(python(FLOOR, str(listing), str(out)), env)
    out.unlink()
    return result


def ingest_run(files: list[Path], work: Path, env: dict, checkout: Path | None = None) -> dict:
    """`duplirank ingest` of the shape's folder into a new warehouse (`checkout`: the code of
    another checkout, imported before this one's)."""
    warehouse = work / "warehouse"
    shutil.rmtree(warehouse, ignore_errors=True)
    args = ("ingest", "--warehouse", str(warehouse), str(files[0].parent))
    cmd = command(*args) if checkout is None else python(other_console(checkout), *args)
    result = timed(cmd, env)
    shutil.rmtree(warehouse, ignore_errors=True)
    return result


def other_console(checkout: Path) -> str:
    """The console script of another checkout: its modules first on the path."""
    return f"import sys; sys.path.insert(0, {str(checkout)!r}); " + CONSOLE_SCRIPT


def accepted(stdout: str) -> int | None:
    for part in stdout.replace(";", ",").split(","):
        if "rows accepted:" in part:
            return int(part.split(":")[1])
    return None


def measure_shape(
    files: list[Path], work: Path, env: dict, repeat: int, compare: Path | None = None
) -> dict:
    floor, ours, other = [], [], []
    load_before = load()
    for _ in range(repeat):
        floor.append(floor_run(files, work, env))
        ours.append(ingest_run(files, work, env))
        if compare is not None:
            other.append(ingest_run(files, work, env, compare))
    mid = sorted(ours, key=lambda r: r["wall_s"])[len(ours) // 2]
    compared = {}
    if other:
        compared = {
            "compare_ingest_s": round(median(other), 3),
            "compare_ingest_cpu_s": round(median(other, "cpu_s"), 3),
            "compare_ratio": round(median(other) / median(floor), 2),
            "compare_cpu_ratio": round(median(other, "cpu_s") / median(floor, "cpu_s"), 2),
            "compare_wall_s": [round(r["wall_s"], 3) for r in other],
        }
    return compared | {
        "lines": sum(f.read_bytes().count(b"\n") for f in files),
        "files": len(files),
        "megabytes": round(sum(f.stat().st_size for f in files) / 1e6, 1),
        "floor_s": round(median(floor), 3),
        "floor_cpu_s": round(median(floor, "cpu_s"), 3),
        "ingest_s": round(median(ours), 3),
        "ingest_cpu_s": round(median(ours, "cpu_s"), 3),
        "ratio": round(median(ours) / median(floor), 2),
        "cpu_ratio": round(median(ours, "cpu_s") / median(floor, "cpu_s"), 2),
        "floor_peak_rss_gib": round(max(r["peak_rss_bytes"] for r in floor) / 2**30, 3),
        "ingest_peak_rss_gib": round(max(r["peak_rss_bytes"] for r in ours) / 2**30, 3),
        "rows_accepted": accepted(ours[-1]["stdout"]),
        "breakdown_in_process_s": stage_times(mid["stderr"]),
        "runs": {
            "floor_wall_s": [round(r["wall_s"], 3) for r in floor],
            "ingest_wall_s": [round(r["wall_s"], 3) for r in ours],
        },
        "load_average_before_after": [load_before, load()],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=1_000_000, help="lines of a shape")
    parser.add_argument("--big", type=int, default=4, help="peak RSS also at N × the lines")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--small-files", type=int, default=2000)
    parser.add_argument("--shapes", nargs="+", choices=SHAPES, default=list(SHAPES))
    parser.add_argument("--quick", action="store_true", help="200 k lines, 3 runs, no --big")
    parser.add_argument("--work", type=Path, default=ROOT / "bench" / "data" / "ingest")
    parser.add_argument("--compare", type=Path, help="another checkout, measured alternating")
    args = parser.parse_args()
    if args.quick:
        args.lines, args.repeat, args.big = 200_000, 3, 0

    prepare()
    if args.compare is not None:
        args.compare = args.compare.resolve()
        for package in ("flows", "transforms"):
            compileall.compile_dir(args.compare / package, quiet=1)
    args.work.mkdir(parents=True, exist_ok=True)
    data = args.work
    work = fresh(args.work / "runs")
    env = environment(DUPLIRANK_LOG_DIR=str(work / "logs"))
    result: dict = {
        "what": "whole processes: `duplirank ingest` vs a DuckDB read_json → Parquet process, "
        "median of the runs (wall s; cpu_s = user + system of the process)",
        "goal": "ratio <= 2 on every shape; peak RSS <= 1 GiB, the same at 4x the lines",
        "cores": os.cpu_count(),
        "shapes": {},
    }
    if args.compare is not None:
        head = ["git", "-C", str(args.compare), "rev-parse", "--short", "HEAD"]
        rev = subprocess.run(head, capture_output=True, text=True).stdout.strip()
        result["compare"] = f"{args.compare} at {rev or '?'} (`compare_*`: its ingest)"
    for name in args.shapes:
        files = shape_files(name, data, args.lines, args.small_files)
        result["shapes"][name] = measure_shape(files, work, env, args.repeat, args.compare)
        print(name, json.dumps(result["shapes"][name]), flush=True)
    if args.big:
        big = [f for seed in range(5, 5 + args.big) for f in generate(data, args.lines, seed)]
        folder = fresh(work / "big")
        for f in big:
            os.link(f, folder / f.name)
        run = ingest_run(sorted(folder.iterdir()), work, env)
        result["big"] = {
            "lines": sum(f.read_bytes().count(b"\n") for f in big),
            "ingest_s": round(run["wall_s"], 3),
            "ingest_peak_rss_gib": round(run["peak_rss_bytes"] / 2**30, 3),
        }
    shutil.rmtree(work, ignore_errors=True)
    name = "ingest" if args.lines == 1_000_000 else f"ingest_{args.lines}"
    out = ROOT / "bench" / "results" / f"{name}.json"
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
