"""Benchmark of the Face-à-Face transforms: scoring + Elo for a million matches (quality.md).

    .venv/bin/python bench/bench_face_a_face.py                        # 1 million matches
    .venv/bin/python bench/bench_face_a_face.py --matches 20000 --repeat 1   # smoke run

Data: `flows.tools.synthetic.face_a_face.ff_frames` (the vectorised variant of `duplirank
generate`'s generator, seeded), written to `bench/data/ff_<matches>_{match,deal,disconnect}.parquet`
(~32 deal rows per played match, over a year, with rematches, forfeits and late deals).

Figures (median of `--repeat` runs, same process, same Parquet files):
- `t_sort_s`: the floor of quality.md on the deal rows: DuckDB `create table t as select * from
  read_parquet(deals) order by match_id, deal_no, points_made`;
- `score_s`: `score_matches` (time rules, match points, outcomes, rematch rule, issues) from
  the Parquet files to the three collected frames;
- `elo_s`: `elo_history` (the sequential loop over all rated matches) + `with_elo`;
- `ranking_s`: `monthly_ranking` of every month;
- rows/s and the ratios to `t_sort_s` (context: the spec sets no goal for Face-à-Face).
Printed and written to `bench/results/face_a_face.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from datetime import UTC, datetime
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

from floor import t_sort, timed  # noqa: E402  (bench/ is the script's folder)

from flows.tools.synthetic.face_a_face import ff_frames  # noqa: E402
from transforms.face_a_face import (  # noqa: E402
    FaceAFaceOptions,
    elo_history,
    monthly_ranking,
    score_matches,
    with_elo,
)

DATA = ROOT / "bench" / "data"
RESULTS = ROOT / "bench" / "results" / "face_a_face.json"
KINDS = ("match", "deal", "disconnect")


def paths(matches: int) -> dict[str, Path]:
    return {k: DATA / f"ff_{matches}_{k}.parquet" for k in KINDS}


def generate(matches: int, seed: int) -> dict[str, Path]:
    files = paths(matches)
    if not all(p.exists() for p in files.values()):
        DATA.mkdir(parents=True, exist_ok=True)
        for kind, frame in zip(KINDS, ff_frames(seed, matches), strict=True):
            frame.write_parquet(files[kind])
    return files


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args(argv)
    opts = FaceAFaceOptions()

    t0 = time.perf_counter()
    files = generate(args.matches, args.seed)
    generate_s = time.perf_counter() - t0
    scan = {k: pl.scan_parquet(p) for k, p in files.items()}
    deal_rows = scan["deal"].select(pl.len()).collect().item()

    floor, _ = t_sort(files["deal"], "match_id, deal_no, points_made", args.repeat)

    def score():
        s = score_matches({f"ff.{kind}": frame for kind, frame in scan.items()}, opts)
        return pl.collect_all([*s.tables.values(), s.issues])

    score_s, _, (deal_results, matches, issues) = timed(score, args.repeat)

    def rate():
        elo = elo_history(matches.lazy(), opts).collect()
        return elo, with_elo(matches.lazy(), elo.lazy(), opts).collect()

    elo_s, _, (elo, matches_with_elo) = timed(rate, args.repeat)
    ranking_s, _, ranking = timed(
        lambda: monthly_ranking(matches_with_elo.lazy(), elo.lazy(), opts).collect(), args.repeat
    )
    rated = int(matches["counts_for_ranking"].sum())
    total = score_s + elo_s
    result = {
        "measured_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "matches": matches.height,
        "rated_matches": rated,
        "deal_rows": deal_rows,
        "deal_results": deal_results.height,
        "issues": issues.height,
        "ranking_rows": ranking.height,
        "repeat": args.repeat,
        "generate_s": round(generate_s, 2),
        "t_sort_s": round(floor, 3),
        "score_s": round(score_s, 3),
        "elo_s": round(elo_s, 3),
        "ranking_s": round(ranking_s, 3),
        "score_plus_elo_s": round(total, 3),
        "matches_per_s": round(matches.height / total),
        "deal_rows_per_s": round(deal_rows / score_s),
        "rated_matches_per_s_elo": round(rated / elo_s),
        "ratio_score_to_t_sort": round(score_s / floor, 2),
        "ratio_score_plus_elo_to_t_sort": round(total / floor, 2),
        # whole process (generation included when the data had to be generated)
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "allocator": os.environ.get("_RJEM_MALLOC_CONF"),  # flows/allocator.py
    }
    print(json.dumps(result, indent=2))
    if args.matches == 1_000_000:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    else:
        smoke = RESULTS.with_name(f"face_a_face_{args.matches}.json")
        smoke.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return result


if __name__ == "__main__":
    main()
