"""The results site against the nightly that feeds it (issue 12: site ≤ 10 % of the scoring).

Generates `--days` + 1 days of logs for `--players` players (`duplirank generate`'s generator),
then in one process (Prefect's temporary server started before any timing):
  1. nightly over the first `--days` days (ingest + score + publish)           T_nightly
  2. backfill of the same months (the scoring alone, from bronze)              T_scoring
  3. build_site into an empty folder (every page made and written)            T_site
     then the same files written again from memory into a new folder beside: the cost of
     the writing alone on this disk (2 threads, as the site writes)             T_write_floor
  4. publish_site again with nothing changed                                   T_site_same
  5. the last day is delivered, nightly again, then publish_site over the
     previous site (only the pages whose data changed are written)           T_site_day
  6. with `--against CHECKOUT`: full builds of that warehouse into a new folder, each in a
     process of its own (Python, imports, the build), by this code and by CHECKOUT's in
     turn, `--rounds` rounds (the first of each round alternating): medians, and the median
     of each round's difference (this code − CHECKOUT); `--builds-in` a folder on another
     disk (/dev/shm: the writing's kernel time out of the comparison)
The nightly and the backfill run with `site.enabled = False` (they rebuild the site
themselves otherwise): their times are the pipeline's alone, the site is timed on its own.
Writes the times (wall and this process's CPU), the pages written / reused, the phases of each
build, the load average and the ratios to `bench/results/site.json`
(`site_<days>d_<players>p.json` at another size).

    .venv/bin/python bench/bench_site.py --players 5000 --days 30
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from flows.allocator import use_batch_allocator  # noqa: E402
from flows.prefect_env import use_prefect_defaults  # noqa: E402

use_batch_allocator()  # the product's runtime, as a run sets it: before Polars and Prefect
use_prefect_defaults()

from flows.nightly import backfill, nightly  # noqa: E402
from flows.settings import Settings, SiteOptions  # noqa: E402
from flows.storage.warehouse import Warehouse  # noqa: E402
from flows.tools.site import build_site, publish_site  # noqa: E402
from flows.tools.site.build import _write  # noqa: E402
from flows.tools.synthetic.files import generate  # noqa: E402

LOADS: dict[str, float] = {}
CPU: dict[str, float] = {}


def timed(fn, *args, label: str = "", **kwargs):
    """Wall seconds of `fn(...)` (its CPU seconds and the load average before it under
    `label`)."""
    LOADS[label] = round(os.getloadavg()[0], 2)
    cpu = time.process_time()
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    wall = time.perf_counter() - start
    CPU[label] = round(time.process_time() - cpu, 2)
    return wall, out


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def bytes_by_kind(folder: Path) -> dict[str, float]:
    """MB of the site's pages by folder (simultane/joueurs, face-a-face/matches…)."""
    sizes: dict[str, int] = {}
    for p in folder.rglob("*.html"):
        parts = p.relative_to(folder).parts
        kind = "/".join(parts[:2]) if len(parts) > 2 else parts[0]
        if len(parts) > 2 and parts[1][:4].isdigit():  # simultane/2026-11/…: the months
            kind = f"{parts[0]}/<month>"
        sizes[kind] = sizes.get(kind, 0) + p.stat().st_size
    return {k: round(v / 1e6, 1) for k, v in sorted(sizes.items(), key=lambda kv: -kv[1])}


def write_files(files: list[tuple[Path, bytes]], out: Path) -> None:
    """Write `files` (path in the site, bytes) into `out` as the site writes its pages."""
    for folder in sorted({(out / path).parent for path, _ in files}):
        folder.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda item: _write(str(out / item[0]), [item[1]]), files, chunksize=48))


BUILD = """
import json, os, sys, time
code, warehouse, out = sys.argv[1:4]
sys.path.insert(0, code)
from flows.allocator import use_batch_allocator
use_batch_allocator()
from flows.storage.warehouse import Warehouse
from flows.tools.site import build_site
cpu, start = time.process_time(), time.perf_counter()
report = build_site(Warehouse(warehouse).scan, out)
wall, cpu = time.perf_counter() - start, time.process_time() - cpu
print(json.dumps({"build_s": wall, "build_cpu_s": cpu, "pages": report.pages}))
"""  # one full build of the site in a process of its own, by the code at argv[1]


def against(checkout: Path, warehouse: Path, into: Path, rounds: int) -> dict:
    """Full builds of `warehouse`'s site (into a folder of `into`) by this code and
    `checkout`'s, each in a process of its own, in turn: their medians and the median of each
    round's difference."""
    codes = {"this": ROOT, "against": checkout}
    runs: dict[str, list[dict]] = {"this": [], "against": []}
    out = into / "ab-site"
    for i in range(rounds):
        for name in ("this", "against") if i % 2 == 0 else ("against", "this"):
            shutil.rmtree(out, ignore_errors=True)
            cmd = [sys.executable, "-c", BUILD, str(codes[name]), str(warehouse), str(out)]
            start = time.perf_counter()
            done = subprocess.run(cmd, cwd=codes[name], capture_output=True, text=True, check=True)
            run = json.loads(done.stdout.strip().splitlines()[-1])
            run["process_s"] = time.perf_counter() - start
            runs[name].append(run)
    shutil.rmtree(out, ignore_errors=True)
    keys = ("process_s", "build_s", "build_cpu_s")
    pairs = list(zip(runs["this"], runs["against"], strict=True))
    median = {
        n: {k: round(statistics.median(r[k] for r in rs), 3) for k in keys}
        for n, rs in runs.items()
    }
    diff = {k: round(statistics.median(a[k] - b[k] for a, b in pairs), 3) for k in keys}
    git = ["git", "rev-parse", "--short", "HEAD"]
    commit = subprocess.run(git, cwd=checkout, capture_output=True, text=True).stdout.strip()
    return {
        "checkout": str(checkout),
        "commit": commit,
        "rounds": rounds,
        "median": median,
        "median_difference_this_minus_against": diff,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--players", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--work", type=Path, default=ROOT / "bench" / "data" / "site")
    parser.add_argument("--against", type=Path, help="another checkout's site build, in turn")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--builds-in", type=Path, help="the folder those builds write into")
    args, _ = parser.parse_known_args()  # `make bench` passes its arguments to every script

    work = args.work
    logs = work / f"logs-{args.days + 1}d-{args.players}p-s{args.seed}"
    if not logs.exists():
        print(f"generating {args.days + 1} days for {args.players} players…", flush=True)
        generate(logs, players=args.players, days=args.days + 1, seed=args.seed,
                 start=date(2026, 10, 15))  # fmt: skip
    files = sorted(logs.iterdir(), key=lambda p: (p.name.split("-", 1)[1], p.name))
    last_day = files[-1].name.split("-", 1)[1].split(".")[0]
    history = [f for f in files if last_day not in f.name]
    new = [f for f in files if last_day in f.name]

    landing, warehouse = work / "landing", work / "warehouse"
    site, scratch = work / "site", work / "scratch"
    for folder in (landing, warehouse, site, scratch):
        shutil.rmtree(folder, ignore_errors=True)
    landing.mkdir(parents=True)
    for f in history:
        shutil.copy(f, landing / f.name)
    no_site = SiteOptions(enabled=False)
    settings = Settings(warehouse=warehouse, landing=landing, site=no_site)

    # warm-up: start Prefect's temporary server outside the timings
    warm = work / "warm"
    shutil.rmtree(warm, ignore_errors=True)
    warm.mkdir()
    nightly(Settings(warehouse=work / "warm-wh", landing=warm, site=no_site))

    print("nightly…", flush=True)
    t_nightly, summary = timed(nightly, settings, label="nightly")
    months = sorted({m for todo in summary.rebuilt.values() for m in todo})
    print("backfill (scoring alone)…", flush=True)
    t_scoring, _ = timed(backfill, settings, months[0], months[-1], label="scoring")
    wh = Warehouse(warehouse)

    print("site: full build…", flush=True)
    t_site, full = timed(build_site, wh.scan, scratch, label="site")
    site_bytes = folder_bytes(scratch)
    by_kind = bytes_by_kind(scratch)
    files = [(p.relative_to(scratch), p.read_bytes()) for p in scratch.rglob("*") if p.is_file()]
    print("site: the same files written again (the writing alone)…", flush=True)
    floor = work / "write-floor"
    t_floor, _ = timed(write_files, files, floor, label="write_floor")
    del files
    shutil.rmtree(floor)
    shutil.rmtree(scratch)
    publish_site(wh.scan, site)  # the live site of this state (untimed: same work as above)
    print("site: rebuild with nothing changed…", flush=True)
    t_same, same = timed(publish_site, wh.scan, site, label="site_unchanged")

    for f in new:
        shutil.copy(f, landing / f.name)
    print(f"nightly of the new day {last_day}…", flush=True)
    t_day_nightly, day_summary = timed(nightly, settings, label="day_nightly")
    print("site: rebuild after one new day…", flush=True)
    t_day, day = timed(publish_site, wh.scan, site, label="site_day")
    peak_gib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20

    result = {
        "days": args.days,
        "players": args.players,
        "pages": full.pages,
        "site_mb": round(site_bytes / 1e6, 1),
        "t_nightly_s": round(t_nightly, 2),
        "t_scoring_s": round(t_scoring, 2),
        "t_site_s": round(t_site, 2),
        "site_over_scoring": round(t_site / t_scoring, 3),
        "site_over_nightly": round(t_site / t_nightly, 3),
        "goal": "site <= 0.10 x scoring",
        "site_phases_s": full.phases,
        "site_mb_by_folder": by_kind,
        "files": full.pages + 3,
        "t_write_floor_s": round(t_floor, 2),
        "write_floor_over_scoring": round(t_floor / t_scoring, 3),
        "write_floor_cpu_over_scoring_cpu": round(CPU["write_floor"] / CPU["scoring"], 3),
        "site_cpu_over_scoring_cpu": round(CPU["site"] / CPU["scoring"], 3),
        "t_site_unchanged_s": round(t_same, 2),
        "unchanged_written": same.written,
        "unchanged_reused": same.reused,
        "new_day": last_day,
        "t_day_nightly_s": round(t_day_nightly, 2),
        "day_rebuilt": day_summary.rebuilt,
        "t_site_day_s": round(t_day, 2),
        "day_pages": day.pages,
        "day_written": day.written,
        "day_reused": day.reused,
        "site_day_phases_s": day.phases,
        "site_day_over_day_nightly": round(t_day / t_day_nightly, 3),
        "cpu_s": CPU,
        "load_average_1m_before": LOADS,
        "peak_rss_gib": round(peak_gib, 2),
    }
    if args.against:
        print(f"site: full builds, this code and {args.against} in turn…", flush=True)
        into = args.builds_in or work
        result["against"] = against(args.against.resolve(), warehouse, into, args.rounds)
    default = (args.days, args.players) == (30, 5000)
    name = "site" if default else f"site_{args.days}d_{args.players}p"
    out = ROOT / "bench" / "results" / f"{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
