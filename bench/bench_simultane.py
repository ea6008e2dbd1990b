"""Benchmark of the Simultané transforms, as ratios against the DuckDB sort floor (quality.md).

    .venv/bin/python bench/bench_simultane.py                       # spec scale
    .venv/bin/python bench/bench_simultane.py --rows 200000 --players 2000   # smoke run

1. Deal scoring: `score_deals` on `--rows` participant x deal rows (goal <= 1.5 x T_sort, where
   T_sort = DuckDB `create table t as select * from read_parquet(...) order by tournament_id,
   deal_no, points_made`, median of 3, same Parquet file, same process).
2. Monthly aggregates: `blocks`, `pct_actuel` (inside blocks and monthly), `daily` and `monthly`
   for `--players` players over `--days` days, against T_sort of that month's deal rows (goal
   <= 1 x); `monthly` reads the `daily` rows, as in the pipeline. `tournament_results` is timed
   apart (it is the step before the aggregates). Results of runs at other sizes or with `--only`
   go to `bench/results/simultane_small.json`.

Data is generated deterministically with numpy (seeded) and written to `bench/data/`. Figures
are printed and written to `bench/results/simultane.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# isort: off
from flows.allocator import use_batch_allocator  # noqa: E402
from flows.prefect_env import use_prefect_defaults  # noqa: E402

use_batch_allocator()  # the product's runtime, as a run sets it: before Polars and Prefect
use_prefect_defaults()

import numpy as np  # noqa: E402
import polars as pl  # noqa: E402
# isort: on

from floor import t_sort, timed  # noqa: E402  (bench/ is the script's folder)

from flows.tools.synthetic.platform import BOT  # noqa: E402
from transforms.deliveries import latest_delivery  # noqa: E402
from transforms.simultane.blocks import blocks  # noqa: E402
from transforms.simultane.monthly import daily, monthly  # noqa: E402
from transforms.simultane.options import SimultaneOptions  # noqa: E402
from transforms.simultane.scoring import score_deals  # noqa: E402
from transforms.simultane.tournaments import tournament_results  # noqa: E402

DATA = ROOT / "bench" / "data"
RESULTS = ROOT / "bench" / "results" / "simultane.json"
DEALS_PER_TOURNAMENT = 20
MONTH_START = datetime(2026, 10, 1, tzinfo=UTC)


def _players_of_tournaments(rng, sizes: np.ndarray, n_players: int) -> np.ndarray:
    """Human player numbers of each tournament (distinct within a tournament)."""
    return np.concatenate([rng.choice(n_players, size=h, replace=False) for h in sizes])


def generate(
    path: Path,
    rows: int,
    n_players: int,
    days: int,
    seed: int,
    min_humans: int = 50,
    max_humans: int = 500,
) -> int:
    """Write about `rows` bronze simultane.deal rows to `path`; return the row count.

    Tournaments of 20 deals with 50-500 humans plus the bot, starting over `days` days; ~3 % of
    deals unfinished (timeout, disconnected, quit, or finished over the time limit).
    """
    rng = np.random.default_rng(seed)
    mean_rows = DEALS_PER_TOURNAMENT * ((min_humans + max_humans) / 2 + 1)
    n_t = max(1, round(rows / mean_rows))
    humans = rng.integers(min_humans, max_humans + 1, size=n_t)
    humans = np.minimum(humans, n_players)
    participants = humans + 1
    # participants of each tournament: the bot (-1) then the humans
    humans_ids = _players_of_tournaments(rng, humans, n_players)
    t_of_human = np.repeat(np.arange(n_t), humans)
    first = np.concatenate([[0], np.cumsum(participants)[:-1]])
    part_player = np.full(participants.sum(), -1, dtype=np.int64)
    human_pos = np.arange(humans.sum()) + np.repeat(
        first - np.concatenate([[0], np.cumsum(humans)[:-1]]) + 1, humans
    )
    part_player[human_pos] = humans_ids
    part_t = np.repeat(np.arange(n_t), participants)
    del t_of_human
    # participant x deal
    n = part_player.size * DEALS_PER_TOURNAMENT
    player = np.repeat(part_player, DEALS_PER_TOURNAMENT)
    t = np.repeat(part_t, DEALS_PER_TOURNAMENT)
    deal_no = np.tile(np.arange(1, DEALS_PER_TOURNAMENT + 1), part_player.size)
    t_start_s = np.sort(rng.integers(0, days * 86400 - 3 * 3600, size=n_t))
    started_s = t_start_s[t] + (deal_no - 1) * 240 + rng.integers(0, 60, size=n)
    duration = rng.gamma(4.0, 40.0, size=n).astype(np.int64) + 20
    stake = 162 + rng.choice([80, 90, 100, 110, 120, 130, 140, 160, 180, 250], size=n)
    stake = np.where(rng.random(n) < 0.05, stake * 2, stake)  # contré
    made = (stake * rng.beta(5, 4, size=n)).astype(np.int64)
    status_draw = rng.random(n)
    is_bot = player < 0
    status = np.where(status_draw < 0.015, "timeout", "finished")
    status = np.where((status_draw >= 0.015) & (status_draw < 0.025), "disconnected", status)
    status = np.where((status_draw >= 0.025) & (status_draw < 0.028), "quit", status)
    status = np.where(is_bot, "finished", status)
    over_limit = SimultaneOptions().deal_time_limit_s + 100  # finished, but too late
    duration = np.where(
        (status_draw > 0.028) & (status_draw < 0.03) & ~is_bot, over_limit, duration
    )
    finished = status == "finished"
    start_epoch_us = int(MONTH_START.timestamp()) * 1_000_000
    frame = (
        pl.DataFrame(
            {
                "tournament_id": pl.Series(t)
                .cast(pl.String)
                .str.pad_start(6, "0")
                .str.pad_start(7, "S"),
                "tournament_start": (start_epoch_us + t_start_s[t] * 1_000_000),
                "deals_in_tournament": np.full(n, DEALS_PER_TOURNAMENT, dtype=np.int64),
                "deal_no": deal_no.astype(np.int64),
                "player_id": pl.Series(np.where(is_bot, 0, player + 1))
                .cast(pl.String)
                .str.pad_start(6, "0")
                .str.pad_start(7, "P"),
                "is_bot": is_bot,
                "started_at": start_epoch_us + started_s * 1_000_000,
                "finished_at": start_epoch_us + (started_s + duration) * 1_000_000,
                "status": status,
                "points_made": made,
                "points_conceded": stake - made,
                "_finished": finished,
            },
            strict=False,
        )
        .with_columns(
            pl.when(pl.col("is_bot")).then(pl.lit(BOT)).otherwise("player_id").alias("player_id"),
            *[
                pl.col(c).cast(pl.Int64).cast(pl.Datetime("us", "UTC"))
                for c in ("tournament_start", "started_at")
            ],
            pl.when("_finished")
            .then(pl.col("finished_at").cast(pl.Int64).cast(pl.Datetime("us", "UTC")))
            .alias("finished_at"),
            *[
                pl.when("_finished").then(pl.col(c).cast(pl.Int64)).alias(c)
                for c in ("points_made", "points_conceded")
            ],
            pl.lit(None, pl.String).alias("contract"),
            pl.lit(MONTH_START.strftime("%Y-%m")).alias("month"),
            pl.lit(None, pl.String).alias("extra"),
            pl.lit("bench.jsonl").alias("source_file"),
            pl.int_range(pl.len(), dtype=pl.Int64).alias("line_no"),
            pl.lit(0, pl.Int64).alias("delivery"),
        )
        .drop("_finished")
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.write_parquet(path)
    return frame.height


SORT_ORDER = "tournament_id, deal_no, points_made"


def _figures(name: str, measured: tuple[float, float]) -> dict:
    return {
        f"{name}_s": round(measured[0], 3),
        f"{name}_cpu_s": round(measured[1], 3),
    }


def bench_scoring(rows: int, seed: int) -> dict:
    path = DATA / f"simultane_deals_{rows}.parquet"
    if not path.exists():
        generate(path, rows, n_players=50_000, days=30, seed=seed)
    n = pl.scan_parquet(path).select(pl.len()).collect().item()
    opts = SimultaneOptions()
    floor = t_sort(path, SORT_ORDER)
    # what the pipeline runs per month: re-deliveries resolved, then the scoring
    scoring = timed(
        lambda: score_deals(
            latest_delivery(pl.scan_parquet(path), "simultane.deal")[0], opts
        ).collect()
    )
    return {
        "rows": n,
        **_figures("t_sort", floor),
        **_figures("latest_delivery_and_score_deals", scoring),
        "ratio": round(scoring[0] / floor[0], 3),
        "cpu_ratio": round(scoring[1] / floor[1], 3),
        "goal": 1.5,
    }


def bench_monthly(players: int, days: int, seed: int) -> dict:
    """Players x days: ~0.3 tournaments per player per day, tournaments of 50-500 humans."""
    rows = int(players * days * 0.3 * DEALS_PER_TOURNAMENT)
    path = DATA / f"simultane_month_{players}x{days}.parquet"
    if not path.exists():
        generate(
            path, rows, n_players=players, days=days, seed=seed + 1, max_humans=min(500, players)
        )
    n = pl.scan_parquet(path).select(pl.len()).collect().item()
    opts = SimultaneOptions()
    floor = t_sort(path, SORT_ORDER)
    deal_results = score_deals(pl.scan_parquet(path), opts).collect()
    t_results = timed(lambda: tournament_results(deal_results.lazy(), opts).collect())
    results = tournament_results(deal_results.lazy(), opts).collect()

    def aggregates():  # as the pipeline runs them: monthly reads the daily rows
        b = blocks(deal_results.lazy(), opts).collect()
        d = daily(results.lazy(), opts).collect()
        monthly(results.lazy(), b.lazy(), opts, daily_rows=d.lazy()).collect()

    b = blocks(deal_results.lazy(), opts).collect()
    d = daily(results.lazy(), opts).collect()
    parts = {
        **_figures("blocks", timed(lambda: blocks(deal_results.lazy(), opts).collect())),
        **_figures(
            "monthly",
            timed(lambda: monthly(results.lazy(), b.lazy(), opts, daily_rows=d.lazy()).collect()),
        ),
        **_figures("daily", timed(lambda: daily(results.lazy(), opts).collect())),
    }
    total = timed(aggregates)
    return {
        "players": players,
        "days": days,
        "rows": n,
        "tournament_results_rows": results.height,
        "blocks": b.height,
        **_figures("t_sort", floor),
        **_figures("tournament_results", t_results),
        **parts,
        **_figures("aggregates", total),
        "ratio": round(total[0] / floor[0], 3),
        "cpu_ratio": round(total[1] / floor[1], 3),
        "goal": 1.0,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--players", type=int, default=50_000)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--only", choices=("scoring", "monthly"), default=None)
    args = parser.parse_args(argv)
    figures: dict = {
        "machine_load_1min_before": round(os.getloadavg()[0], 2),
        "allocator": os.environ.get("_RJEM_MALLOC_CONF"),  # flows/allocator.py
    }
    if args.only != "monthly":
        figures["scoring"] = bench_scoring(args.rows, args.seed)
        print(json.dumps(figures, indent=2), flush=True)
    if args.only != "scoring":
        figures["monthly"] = bench_monthly(args.players, args.days, args.seed)
    figures["measured_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    spec_scale = (args.rows, args.players, args.days, args.only) == (10_000_000, 50_000, 30, None)
    out = RESULTS if spec_scale else RESULTS.with_name("simultane_small.json")  # smoke runs
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
