"""Startup: what a user waits for before a command answers (quality.md: `duplirank sql "select
1"` ≤ 0.35 s, Python + DuckDB alone ~0.15 s; `duplirank --help` ≤ 0.25 s; `duplirank ingest` of
a 5-line file ≤ 0.8 s; a `nightly` with nothing new ≤ 2 s with a running Prefect server).

Every figure is a whole process started from this checkout, as the `duplirank` console script
runs it (`bench/process.py`: interpreter, imports, the command, its exit), timed in rounds that
alternate the commands and the floors, median of `--repeat` rounds:
  - floors: `python -c pass`, and Python + DuckDB (`import duckdb; duckdb.sql('select 1')`);
  - a Prefect flow run of one no-op task against the server (`floor_prefect_flow_run`): what
    any command that runs a Prefect flow pays before its own work (not a goal: the part of
    a nightly's figures that Prefect sets);
  - `duplirank --help`;
  - `duplirank sql "select 1"` on a warehouse holding 5 ingested lines;
  - `duplirank ingest` of a 5-line Simultané file into a new warehouse;
  - `duplirank nightly` with nothing new (the landing `data/sample`, already published) against
    a Prefect server this script starts (production keeps one running): told before the
    pipeline and Prefect are loaded, the night recorded as a flow run over the REST API
    (`flows/nothing_new.py`);
  - the same nightly with no `PREFECT_API_URL` (`make run`: a run that has something to do
    starts Prefect's temporary server; one with nothing new, none), `--server-repeat` rounds.
Each figure is also given as a ratio to the Python + DuckDB floor of the same rounds, which
moves with the machine as the goals' 0.15 s does.

    .venv/bin/python bench/bench_startup.py              # 9 rounds (~1 min on a quiet machine)
    .venv/bin/python bench/bench_startup.py --quick      # 3 rounds, 1 with a temporary server
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
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

GOALS_S = {"help": 0.25, "sql": 0.35, "ingest_5_lines": 0.8, "nightly_nothing_new": 2.0}
FLOOR_DUCKDB = "import duckdb; duckdb.sql('select 1').fetchall()"
FLOOR_PREFECT = """
from prefect import flow, task
flow(name="bench-floor")(lambda: task(name="no-op")(lambda: None)())()
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=9, help="rounds (median)")
    parser.add_argument("--server-repeat", type=int, default=3, help="rounds of `make run`")
    parser.add_argument("--quick", action="store_true", help="3 rounds, 1 of `make run`")
    parser.add_argument("--work", type=Path, default=ROOT / "bench" / "data" / "startup")
    args = parser.parse_args()
    if args.quick:
        args.repeat, args.server_repeat = 3, 1

    prepare()
    work = fresh(args.work)
    logs = fresh(work / "logs")
    env = environment(DUPLIRANK_LOG_DIR=str(logs), DUPLIRANK_SITE__ENABLED="true")
    lines = (ROOT / "data" / "sample" / "simultane-2026-11-01.jsonl").read_text().splitlines()
    five = work / "five.jsonl"
    five.write_text("\n".join(lines[:5]) + "\n")
    queried = work / "queried"
    timed(command("ingest", "--warehouse", str(queried), str(five)), env)

    server, server_s = start_prefect_server(work)
    try:
        env |= {
            "PREFECT_API_URL": os.environ["PREFECT_API_URL"],
            "PREFECT_HOME": os.environ["PREFECT_HOME"],
        }
        nightly_wh = work / "nightly"
        landing = str(ROOT / "data" / "sample")
        nightly = command("nightly", "--landing", landing, "--warehouse", str(nightly_wh))
        first = timed(nightly, env)  # the first publication; then nothing is new
        cases = {
            "floor_python": python("pass"),
            "floor_python_duckdb": python(FLOOR_DUCKDB),
            "floor_prefect_flow_run": python(FLOOR_PREFECT),
            "help": command("--help"),
            "sql": command("sql", "--warehouse", str(queried), "select 1"),
            "ingest_5_lines": None,  # a new warehouse each round
            "nightly_nothing_new": nightly,
        }
        runs: dict[str, list[dict]] = {name: [] for name in cases}
        load_before = load()
        for n in range(args.repeat):
            for name, cmd in cases.items():
                if name == "ingest_5_lines":
                    cmd = command("ingest", "--warehouse", str(work / f"ingest-{n}"), str(five))
                runs[name].append(timed(cmd, env))
        load_after = load()
    finally:
        server.stop()

    # `make run`: no server configured, duplirank starts Prefect's temporary one
    temporary = {k: v for k, v in env.items() if k != "PREFECT_API_URL"}
    temporary["PREFECT_HOME"] = str(fresh(work / "temporary-prefect-home"))
    make_run = [timed(nightly, temporary) for _ in range(args.server_repeat)]

    floor = median(runs["floor_python_duckdb"])
    result = {
        "what": "whole processes, median of the rounds (wall s; cpu_s = user + system)",
        "rounds": args.repeat,
        "figures": {
            name: {
                "wall_s": round(median(r), 3),
                "cpu_s": round(median(r, "cpu_s"), 3),
                "ratio_to_python_duckdb": round(median(r) / floor, 2),
                "runs_wall_s": [round(x["wall_s"], 3) for x in r],
            }
            | (
                {"goal_s": GOALS_S[name], "met": median(r) <= GOALS_S[name]}
                if name in GOALS_S
                else {}
            )
            for name, r in runs.items()
        },
        "make_run_nothing_new_temporary_server": {
            "wall_s": round(median(make_run), 3),
            "cpu_s": round(median(make_run, "cpu_s"), 3),
            "runs_wall_s": [round(x["wall_s"], 3) for x in make_run],
            "stages_s": stage_times(make_run[-1]["stderr"]),
        },
        "nightly_nothing_new_stages_s": stage_times(runs["nightly_nothing_new"][-1]["stderr"]),
        "first_nightly_of_data_sample_s": round(first["wall_s"], 3),
        "prefect_server_start_s": round(server_s, 2),
        "load_average_before_after": [load_before, load_after],
        "cores": os.cpu_count(),
    }
    out = ROOT / "bench" / "results" / "startup.json"
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
