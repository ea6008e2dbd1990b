"""End to end: a first `duplirank nightly` of ~1 M raw Simultané lines vs a hand-written DuckDB
script, whole process against whole process (quality.md: ≤ 3× the script's process, site on,
a running Prefect server).

The lines are `bench_ingest.py`'s (`flows.tools.synthetic.simultane`, 0.1 % corrupted, cached under
`bench/data/ingest/`), in several shapes: `compact` (the generator's JSON, 5 day files, large
tournaments), `spaced` (the same records as `json.dumps` writes them by default), `compact_3000`
(tournaments of ~3,000 rows, one file). A Prefect server is started once by this script
(Prefect's `SubprocessASGIServer`, its own `PREFECT_HOME` under the work folder) and its address
exported as `PREFECT_API_URL`, so the nightly talks to a running server as in production and
does not start its own; one untimed nightly on an empty landing folder warms it up. Then, for
each shape, alternating, `--repeat` times, each a whole process started from this checkout
(`bench/process.py`: interpreter, imports, the job, its exit):
  - script: `python -c` running DuckDB on the same files (`read_json`, `ignore_errors`): the
    finished deals' bot reference, pct (P = 100 + 100·(D−D_bot)/(T+T_bot), unfinished 0) and
    points (2·below + ties, unfinished 0) with window functions, written to Parquet;
  - nightly: `duplirank nightly --landing L --warehouse NEW` with the files in L (hard links,
    made before the timing): ingest, scoring, monthly tables, publication, Prefect artifacts,
    and the results site unless `--site off` (`DUPLIRANK_SITE__ENABLED=false`).
The nightly's own stage times (its run summary, inside the process) are kept as the breakdown.

    .venv/bin/python bench/bench_e2e.py              # ~1 M lines, three shapes, site on
    .venv/bin/python bench/bench_e2e.py --quick      # ~200 k lines, 3 runs
    .venv/bin/python bench/bench_e2e.py --site both --shapes compact
    .venv/bin/python bench/bench_e2e.py --quick --against /tmp/main   # this code vs another

`--against DIR` also runs the nightly of the checkout in DIR (its own code, same server, same
files) in the same rounds, alternating with this one, and reports it beside (`against`): a
change measured on a shared machine under the same load.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ingest import shape_files  # noqa: E402  (the same cached files)
from process import (  # noqa: E402
    ROOT,
    command,
    environment,
    fresh,
    load,
    median,
    prepare,
    python,
    stage_times,
    start_prefect_server,
    timed,
)

SHAPES = ("compact", "spaced", "compact_3000", "spaced_3000")
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

FLOOR = """
import json, sys
import duckdb
files = json.loads(open(sys.argv[1]).read())
duckdb.connect().execute(sys.argv[2], {"files": files})
"""


def floor_run(files: list[Path], work: Path, env: dict) -> dict:
    listing = work / "files.json"
    listing.write_text(json.dumps([str(f) for f in files]))
    out = work / "floor.parquet"
    out.unlink(missing_ok=True)
    sql = SCRIPT.format(limit=DEAL_TIME_LIMIT_S, out=str(out))
    result = timed(python(FLOOR, str(listing), sql), env)
    out.unlink()
    return result


def nightly_run(files: list[Path], work: Path, env: dict, code: Path = ROOT) -> dict:
    """One nightly into a folder of its own, deleted after the last run: ext4 creates files
    several times slower for minutes after many deletions (measured here: 9,000 files in
    0.33 s, then 2.1 s right after deleting 9,000 others), so deleting a run's ~9,400 site
    pages right before the next run timed the file system, not the nightly (which never
    follows a mass deletion: a nightly's old pages go a day apart)."""
    out = work / f"nightly-{time.time_ns()}"
    landing = out / "landing"
    landing.mkdir(parents=True)
    for f in files:  # the files are delivered before the nightly starts
        try:
            os.link(f, landing / f.name)
        except OSError:
            shutil.copy(f, landing / f.name)
    warehouse = out / "warehouse"
    nightly = command("nightly", "--landing", str(landing), "--warehouse", str(warehouse))
    return timed(nightly, env, cwd=code)


def run(files: list[Path], work: Path, env: dict, repeat: int, against: Path | None = None) -> dict:
    load_before = load()
    floor, ours, theirs = [], [], []
    for _ in range(repeat):
        floor.append(floor_run(files, work, env))
        ours.append(nightly_run(files, work, env))
        if against is not None:
            theirs.append(nightly_run(files, work, env, against))
    load_after = load()
    for folder in work.glob("nightly-*"):
        shutil.rmtree(folder, ignore_errors=True)
    mid = sorted(ours, key=lambda r: r["wall_s"])[len(ours) // 2]
    other = {}
    if theirs:
        other = {
            "against": {
                "code": str(against),
                "nightly_s": round(median(theirs), 3),
                "nightly_cpu_s": round(median(theirs, "cpu_s"), 3),
                "ratio": round(median(theirs) / median(floor), 2),
                "cpu_ratio": round(median(theirs, "cpu_s") / median(floor, "cpu_s"), 2),
                "nightly_wall_s": [round(r["wall_s"], 3) for r in theirs],
                "nightly_cpu_s_runs": [round(r["cpu_s"], 3) for r in theirs],
            }
        }
    return {
        "lines": sum(f.read_bytes().count(b"\n") for f in files),
        "files": len(files),
        "megabytes": round(sum(f.stat().st_size for f in files) / 1e6, 1),
        "floor_duckdb_script_s": round(median(floor), 3),
        "floor_cpu_s": round(median(floor, "cpu_s"), 3),
        "nightly_s": round(median(ours), 3),
        "nightly_cpu_s": round(median(ours, "cpu_s"), 3),  # the nightly's process, not the server
        "ratio": round(median(ours) / median(floor), 2),
        "cpu_ratio": round(median(ours, "cpu_s") / median(floor, "cpu_s"), 2),
        "nightly_peak_rss_gib": round(max(r["peak_rss_bytes"] for r in ours) / 2**30, 3),
        "breakdown_in_process_s": stage_times(mid["stderr"]),
        "runs": {
            "floor_wall_s": [round(r["wall_s"], 3) for r in floor],
            "nightly_wall_s": [round(r["wall_s"], 3) for r in ours],
            "nightly_cpu_s": [round(r["cpu_s"], 3) for r in ours],
        },
        "load_average_before_after": [load_before, load_after],
        **other,
    }


def warm_up(work: Path, env: dict) -> None:
    """One nightly with nothing delivered: the server's first flow run is not timed (it ends
    with "no published tables": nothing was ever published there)."""
    out = fresh(work / "warm")
    (out / "landing").mkdir()
    nightly = command("nightly", "--landing", str(out / "landing"), "--warehouse", str(out / "w"))
    timed(nightly, env, check=False)
    shutil.rmtree(out, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--site", choices=["both", "on", "off"], default="on")
    parser.add_argument("--shapes", nargs="+", choices=SHAPES, default=list(SHAPES[:3]))
    parser.add_argument("--quick", action="store_true", help="200 k lines, the 3 runs")
    parser.add_argument("--work", type=Path, default=ROOT / "bench" / "data" / "e2e")
    parser.add_argument("--data", type=Path, default=ROOT / "bench" / "data" / "ingest")
    parser.add_argument(
        "--against", type=Path, help="a checkout whose nightly runs in the same rounds"
    )
    args = parser.parse_args()
    if args.quick:
        args.lines = 200_000

    prepare()
    if args.against is not None:
        args.against = args.against.resolve()
        prepare(args.against)
    args.data.mkdir(parents=True, exist_ok=True)
    shapes = {name: shape_files(name, args.data, args.lines, 0) for name in args.shapes}
    work = fresh(args.work)
    server, server_s = start_prefect_server(work)
    result: dict = {
        "what": "whole processes: `duplirank nightly` (running Prefect server) vs a hand-written "
        "DuckDB script's process, median of the runs (wall s; cpu_s = user + system)",
        "goal": "ratio <= 3 with the site, on every shape",
        "prefect_server_start_s": round(server_s, 2),
        "cores": os.cpu_count(),
    }
    try:
        base = environment(
            DUPLIRANK_LOG_DIR=str(work / "logs"),
            PREFECT_API_URL=os.environ["PREFECT_API_URL"],
            PREFECT_HOME=os.environ["PREFECT_HOME"],
        )
        warm_up(work, base | {"DUPLIRANK_SITE__ENABLED": "false"})
        sites = {"both": [True, False], "on": [True], "off": [False]}[args.site]
        for site in sites:
            key = "with_site" if site else "without_site"
            env = base | {"DUPLIRANK_SITE__ENABLED": "true" if site else "false"}
            result[key] = {}
            for name, files in shapes.items():
                result[key][name] = run(files, work, env, args.repeat, args.against)
                print(key, name, json.dumps(result[key][name]), flush=True)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    name = "e2e" if args.lines == 1_000_000 else f"e2e_{args.lines}"
    out = ROOT / "bench" / "results" / f"{name}.json"
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
