"""Benchmark of bridge scoring: 2 million traveller lines (quality.md: ≤ 2 × T_sort).

    .venv/bin/python bench/bench_bridge.py                          # 2 million lines
    .venv/bin/python bench/bench_bridge.py --rows 50000 --repeat 1  # smoke run

Data: `flows.tools.synthetic.bridge.bridge_records` (the generator of `duplirank generate`, seeded),
matchpoints and Butler events of 3 to 40 tables without options or penalties, written to
`bench/data/bridge_<rows>_{event,result}.parquet` (contracts + declarer + result on ~87 % of
the lines, score_ns on the others).

Figures (median of `--repeat` runs after one untimed warm-up run of each side, same process,
same Parquet files):
- `t_sort_s`: the floor of quality.md: DuckDB `create table t as select * from
  read_parquet(results) order by event_id, section, board, score_ns`;
- `score_s`: `score_events` from the Parquet files to the collected `bridge_board_results`,
  `bridge_standings` and `data_issues` frames (scores from contracts, matchpoints with Neuberg,
  Butler datums and round caps, standings), through the vectorised many-events path;
- lines/s and `ratio_score_to_t_sort` (goal ≤ 2);
- `first_run_s`, `t_sort_first_run_s` and `ratio_first_runs`: the warm-up runs, i.e. the first
  scoring and the first sort of the process, as a single nightly run sees them: scoring then
  also pays for the memory the process takes from the system for the first time (~1.7 GB at
  peak here, ~430 k page faults, ~0.3 s of kernel time) and for filling the categorical
  dictionaries of pair names and contracts.
Printed and written to `bench/results/bridge.json` (`bridge_<rows>.json` for other sizes).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sys
import time
from datetime import UTC, date, datetime, timedelta
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

from floor import t_sort_runs, timed  # noqa: E402  (bench/ is the script's folder)

from flows.tools.synthetic.bridge import bridge_records  # noqa: E402
from transforms.bridge.event import score_events  # noqa: E402
from transforms.record_types import RECORD_TYPES  # noqa: E402

DATA = ROOT / "bench" / "data"
RESULTS = ROOT / "bench" / "results" / "bridge.json"
DEFAULT_ROWS = 2_000_000
START = date(2026, 1, 1)


def paths(rows: int) -> dict[str, Path]:
    return {k: DATA / f"bridge_{rows}_{k}.parquet" for k in ("event", "result")}


def generate(rows: int, seed: int) -> dict[str, Path]:
    """Events until at least `rows` traveller lines, written once (then reused)."""
    files = paths(rows)
    if all(p.exists() for p in files.values()):
        return files
    rng = random.Random(seed)
    events: list[dict] = []
    results: list[dict] = []
    chunk = 0
    while len(results) < rows:
        records = bridge_records(
            rng,
            seed + chunk,
            500,
            START + timedelta(days=chunk),
            1,
            methods={"matchpoints": 1, "butler": 1},
            variety=False,
        )
        events += [r for r in records if r["type"] == "bridge.event"]
        results += [r for r in records if r["type"] == "bridge.result"]
        chunk += 1
    DATA.mkdir(parents=True, exist_ok=True)
    for kind, records in (("event", events), ("result", results)):
        schema = RECORD_TYPES[f"bridge.{kind}"].schema()
        fields = [
            c for c in schema if c not in ("month", "extra", "source_file", "line_no", "delivery")
        ]
        raw = {c: (pl.String if c in ("date", "options") else schema[c]) for c in fields}
        frame = pl.DataFrame(
            [[r.get(c) for c in fields] for r in records], schema=raw, orient="row"
        )
        if kind == "event":
            frame = frame.with_columns(pl.col("date").str.to_date())
        frame.write_parquet(files[kind])
    return files


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=DEFAULT_ROWS)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=11)
    args, _ = parser.parse_known_args(argv)  # run_all passes every script the same flags

    t0 = time.perf_counter()
    files = generate(args.rows, args.seed)
    generate_s = time.perf_counter() - t0
    events = pl.read_parquet(files["event"])
    results = pl.scan_parquet(files["result"])
    penalties = pl.LazyFrame(schema=RECORD_TYPES["bridge.penalty"].schema())
    lines = results.select(pl.len()).collect().item()

    order = "event_id, section, board, score_ns"
    floor, _, floor_first = t_sort_runs(files["result"], order, args.repeat, warmup=1)

    def score():
        s = score_events(
            {"bridge.event": events, "bridge.result": results, "bridge.penalty": penalties}
        )
        return pl.collect_all([*s.tables.values(), s.issues])

    first_s, _, _ = timed(score, 1)  # the first run of the process: also the warm-up
    score_s, _, (board_results, standings, issues) = timed(score, args.repeat)
    result = {
        "measured_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "traveller_lines": lines,
        "events": events.height,
        "events_by_method": dict(events.group_by("scoring").len().sort("scoring").iter_rows()),
        "lines_with_contract": results.filter(pl.col("contract").is_not_null())
        .select(pl.len())
        .collect()
        .item(),
        "board_results": board_results.height,
        "standings": standings.height,
        "issues": issues.height,
        "repeat": args.repeat,
        "generate_s": round(generate_s, 2),
        "t_sort_s": round(floor, 3),
        "score_s": round(score_s, 3),
        "lines_per_s": round(lines / score_s),
        "ratio_score_to_t_sort": round(score_s / floor, 2),
        "goal_ratio": 2.0,
        "t_sort_first_run_s": round(floor_first, 3),
        "first_run_s": round(first_s, 3),
        "ratio_first_runs": round(first_s / floor_first, 2),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "allocator": os.environ.get("_RJEM_MALLOC_CONF"),  # flows/allocator.py
    }
    print(json.dumps(result, indent=2))
    out = RESULTS if args.rows == DEFAULT_ROWS else RESULTS.with_name(f"bridge_{args.rows}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return result


if __name__ == "__main__":
    main()
