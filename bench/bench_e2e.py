"""End to end: a first `duplirank nightly` of ~1 M raw Simultané lines vs a hand-written DuckDB
script (quality.md: ≤ 4× the script).

The lines are `bench_ingest.py`'s (`flows.synthetic.simultane`, 5 days, 0.1 % corrupted, cached
under `bench/data/ingest/`). A Prefect server is started once by this script (Prefect's
`SubprocessASGIServer`, its own `PREFECT_HOME` under the work folder) and its address exported
as `PREFECT_API_URL`, so the nightly talks to a running server as in production and does not
start its own. One untimed nightly on an empty landing folder warms that server up. Then, each
in a fresh subprocess, alternating, `--repeat` times:
  - script: DuckDB reads the same files (`read_json`, `ignore_errors`), keeps the finished
    deals' bot reference, scores pct (P = 100 + 100·(D−D_bot)/(T+T_bot), unfinished 0) and
    points (2·below + ties, unfinished 0) with window functions, writes Parquet;
  - nightly: `flows.nightly.nightly` (the Prefect flow) on an empty warehouse with the files in
    its landing folder (hard links, made before the timing): ingest, scoring, monthly tables,
    publication, and the results site unless `--no-site` (`DUPLIRANK_SITE__ENABLED=false`).
Times are measured inside the subprocess around the job only (not the interpreter start nor the
imports, reported apart as `nightly_process_s`). The nightly's own stage timings
(`flows.progress`) are kept, so the json says where the time goes.

    .venv/bin/python bench/bench_e2e.py              # with the site, then --no-site
    .venv/bin/python bench/bench_e2e.py --lines 100000 --repeat 1     # a smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "bench"))
from bench_ingest import generate  # noqa: E402  (the same cached files)

DEAL_TIME_LIMIT_S = 300  # spec/simultane.md's default `simultane.deal_time_limit_s`

SCRIPT = """
copy (
    with deals as (
        select
            tournament_id, deal_no, player_id, is_bot,
            points_made as f, points_conceded as l,
            coalesce(status = 'finished' and finished_at - started_at
                     <= interval {limit} second, false) as finished
        from read_json($files, format = 'newline_delimited', ignore_errors = true, columns = {{
            type: 'varchar', tournament_id: 'varchar', deal_no: 'integer',
            player_id: 'varchar', is_bot: 'boolean', started_at: 'timestamptz',
            finished_at: 'timestamptz', status: 'varchar',
            points_made: 'integer', points_conceded: 'integer'
        }})
        where type = 'simultane.deal'
    ),
    bot as (
        select tournament_id, deal_no, any_value(f - l) as d_b, any_value(f + l) as t_b
        from deals where is_bot and finished
        group by all
    ),
    scored as (
        select d.*,
            case when not d.finished then 0.0
                 when d.f + d.l + b.t_b = 0 then 100.0
                 else 100 + 100 * ((d.f - d.l) - b.d_b) / (d.f + d.l + b.t_b) end as pct,
            case when d.finished then round(pct, 9) else -1 end as k
        from deals d join bot b using (tournament_id, deal_no)
    )
    select tournament_id, deal_no, player_id, is_bot, pct,
        case when finished
             then 2 * (rank() over (partition by tournament_id, deal_no order by k) - 1)
                  + count(*) over (partition by tournament_id, deal_no, k) - 1
             else 0 end as points
    from scored
) to '{out}' (format parquet)
"""

CHILD = r"""
import json, os, resource, sys, time
t_start = time.perf_counter()
sys.path.insert(0, {root!r})
kind, files, out = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
if kind == "duckdb":
    import duckdb
    con = duckdb.connect()
    t0, c0 = time.perf_counter(), time.process_time()
    con.execute(sys.argv[4].replace("@OUT@", out), {{"files": files}})
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    rows = con.execute("select count(*) from read_parquet($p)", {{"p": out}}).fetchone()[0]
    stages = {{}}
else:
    from pathlib import Path
    import flows  # the product's runtime settings (allocator), as every command has them
    from flows import progress
    from flows.nightly import nightly
    from flows.query import run_sql
    from flows.settings import Settings
    progress.configure("quiet")
    settings = Settings(warehouse=Path(out) / "warehouse", landing=Path(out) / "landing")
    t0, c0 = time.perf_counter(), time.process_time()
    summary = nightly(settings)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    rows = int(run_sql(settings.warehouse, "select count(*) n from simultane_deal_results")["n"][0])
    stages = {{name: round(s, 3) for name, s, _ in progress.reporter().timings()}}
process = time.perf_counter() - t_start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({{"wall_s": wall, "cpu_s": cpu, "process_s": process, "rows": rows,
                  "peak_rss_bytes": peak, "stages": stages}}))
"""


def start_server(work: Path):
    """A Prefect server for the whole bench (its own database); exports PREFECT_API_URL."""
    home = work / "prefect-home"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    os.environ["PREFECT_HOME"] = str(home)
    os.environ.pop("PREFECT_API_URL", None)
    from flows.prefect_server import server_class  # dies with this process, even on SIGKILL

    server = server_class()()
    started = time.perf_counter()
    server.start()
    os.environ["PREFECT_API_URL"] = server.api_url
    return server, time.perf_counter() - started


def measure(kind: str, files: list[Path], work: Path, site: bool) -> dict:
    """One timed run. A nightly writes into a folder of its own, deleted by `run` after the
    last run: ext4 creates files several times slower for minutes after many deletions
    (measured here: 9,000 files in 0.33 s, then 2.1 s right after deleting 9,000 others), so
    deleting a run's ~9,400 site pages before the next run timed the file system, not the
    nightly (which never follows a mass deletion: a nightly's old pages go a day apart)."""
    out = work / "floor.parquet" if kind == "duckdb" else work / f"nightly-{time.time_ns()}"
    out.unlink(missing_ok=True) if out.suffix else None
    if kind != "duckdb":
        landing = out / "landing"
        landing.mkdir(parents=True)
        for f in files:  # the files are delivered before the nightly starts
            try:
                os.link(f, landing / f.name)
            except OSError:
                shutil.copy(f, landing / f.name)
    env = {**os.environ, "DUPLIRANK_SITE__ENABLED": "true" if site else "false",
           "DUPLIRANK_LOG_DIR": str(work / "logs")}  # fmt: skip
    code = CHILD.format(root=str(ROOT))
    job = [sys.executable, "-c", code, kind, json.dumps([str(f) for f in files]), str(out)]
    if kind == "duckdb":
        job.append(SCRIPT.format(limit=DEAL_TIME_LIMIT_S, out="@OUT@"))
    started = time.perf_counter()
    done = subprocess.run(job, capture_output=True, text=True, env=env)
    if done.returncode:
        sys.exit(f"{kind} failed:\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["command_s"] = time.perf_counter() - started
    return result


def warm_up(work: Path) -> None:
    """One nightly with nothing delivered: the server's first flow run is not timed."""
    out = work / "warm"
    shutil.rmtree(out, ignore_errors=True)
    (out / "landing").mkdir(parents=True)
    code = CHILD.format(root=str(ROOT))
    env = {**os.environ, "DUPLIRANK_SITE__ENABLED": "false", "DUPLIRANK_LOG_DIR": str(out)}
    job = [sys.executable, "-c", code, "nightly", "[]", str(out)]
    subprocess.run(job, check=False, capture_output=True, text=True, env=env)
    shutil.rmtree(out, ignore_errors=True)


def run(files: list[Path], work: Path, repeat: int, site: bool) -> dict:
    load_before = os.getloadavg()
    floor, ours = [], []
    for _ in range(repeat):
        floor.append(measure("duckdb", files, work, site))
        ours.append(measure("nightly", files, work, site))
    load_after = os.getloadavg()
    for folder in work.glob("nightly-*"):
        shutil.rmtree(folder, ignore_errors=True)
    mid = sorted(ours, key=lambda r: r["wall_s"])[len(ours) // 2]
    f_wall = statistics.median(r["wall_s"] for r in floor)
    n_wall = statistics.median(r["wall_s"] for r in ours)
    f_cpu = statistics.median(r["cpu_s"] for r in floor)
    n_cpu = statistics.median(r["cpu_s"] for r in ours)
    return {
        "site": site,
        "floor_duckdb_script_s": round(f_wall, 3),
        "floor_cpu_s": round(f_cpu, 3),
        "nightly_s": round(n_wall, 3),
        "nightly_cpu_s": round(n_cpu, 3),  # the main process only (not the Prefect server)
        "ratio": round(n_wall / f_wall, 2),
        "cpu_ratio": round(n_cpu / f_cpu, 2),
        "nightly_process_s": round(statistics.median(r["process_s"] for r in ours), 3),
        "nightly_peak_rss_gib": round(max(r["peak_rss_bytes"] for r in ours) / 2**30, 3),
        "floor_rows": floor[-1]["rows"],
        "simultane_deal_results_rows": ours[-1]["rows"],
        "stages_of_median_run_s": mid["stages"],
        "runs": {
            "floor_wall_s": [round(r["wall_s"], 3) for r in floor],
            "nightly_wall_s": [round(r["wall_s"], 3) for r in ours],
        },  # fmt: skip
        "load_average_before_after": [round(load_before[0], 2), round(load_after[0], 2)],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--site", choices=["both", "on", "off"], default="both")
    parser.add_argument("--work", type=Path, default=ROOT / "bench" / "data" / "e2e")
    parser.add_argument("--data", type=Path, default=ROOT / "bench" / "data" / "ingest")
    args = parser.parse_args()

    files = generate(args.data, args.lines, seed=5)
    args.work.mkdir(parents=True, exist_ok=True)
    server, server_s = start_server(args.work)
    try:
        warm_up(args.work)
        result = {
            "lines": sum(f.read_bytes().count(b"\n") for f in files),
            "files": len(files),
            "megabytes": round(sum(f.stat().st_size for f in files) / 1e6, 1),
            "goal": "ratio <= 4",
            "prefect_server_start_s": round(server_s, 2),
            "cores": os.cpu_count(),
        }
        sites = {"both": [True, False], "on": [True], "off": [False]}[args.site]
        for site in sites:
            key = "with_site" if site else "without_site"
            result[key] = run(files, args.work, args.repeat, site)
            print(key, json.dumps(result[key]), flush=True)
    finally:
        server.stop()
    for folder in args.work.glob("nightly*"):  # an interrupted bench leaves its runs
        shutil.rmtree(folder, ignore_errors=True)
    (args.work / "floor.parquet").unlink(missing_ok=True)
    name = "e2e" if args.lines == 1_000_000 else f"e2e_{args.lines}"
    out = ROOT / "bench" / "results" / f"{name}.json"
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
