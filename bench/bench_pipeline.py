"""One new day vs history and vs a 12-month backfill, as an operator runs them (quality.md:
the new day on 360 days of history ≤ 1.5 × on 90 days, ≤ 10 % of a 12-month backfill; every
command ≤ 4 GiB peak RSS at 1,000 daily players).

Generates `max(--histories) + 1` days of logs (all competitions, `duplirank generate`'s
generator, cached under the work folder). A Prefect server is started once (as in
bench_e2e.py: its own PREFECT_HOME, PREFECT_API_URL exported) and warmed up by one nightly on
an empty landing folder. Then, for each history length H, in a fresh warehouse, each command a
whole CLI process (`python -m flows.cli …`, the site off unless `--site`):
  1. first load: `nightly` with the first H days delivered;
  2. new day: day H + 1 is delivered, `nightly` again;
  3. backfill: `backfill --from M --to N` of the last 12 months of the data (all of them
     when there are fewer).
Each command's wall time (process start to exit) and peak RSS (its own, `wait4`) are
reported, with the new day's ratios: on the longest vs the shortest history, and to the
backfill of the longest history.

    .venv/bin/python bench/bench_pipeline.py --players 300 --histories 90 360
    .venv/bin/python bench/bench_pipeline.py --players 20 --histories 30 60   # a smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_e2e import start_server  # noqa: E402  (the same running Prefect server)

START = date(2025, 12, 1)


def day_of(path: Path) -> str:
    """The date of a generated file (`<game>-YYYY-MM-DD.jsonl[.gz]`)."""
    return path.name.split("-", 1)[1][:10]


def command(args: list[str], work: Path) -> dict:
    """One CLI process: wall seconds from start to exit and its own peak RSS (`wait4`)."""
    env = {**os.environ, "DUPLIRANK_LOG_DIR": str(work / "logs")}
    job = [sys.executable, "-m", "flows.cli", *args]
    errors = work / "stderr.txt"
    with errors.open("wb") as err:
        started = time.perf_counter()
        proc = subprocess.Popen(job, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        sys.exit(f"{' '.join(args)} failed:\n{errors.read_text()[-3000:]}")
    return {"s": round(wall, 2), "peak_rss_gib": round(usage.ru_maxrss / 2**20, 3)}


def deliver(files: list[Path], landing: Path) -> None:
    for f in files:
        try:
            os.link(f, landing / f.name)
        except OSError:
            shutil.copy(f, landing / f.name)


def one_history(files: list[Path], days: list[str], history: int, work: Path, site: bool) -> dict:
    """First load of `history` days, the next day, a backfill of the last 12 months."""
    root = work / f"h{history}"
    shutil.rmtree(root, ignore_errors=True)
    landing, warehouse = root / "landing", root / "warehouse"
    landing.mkdir(parents=True)
    old, new_day = set(days[:history]), days[history]
    base = ["--warehouse", str(warehouse)]
    nightly = ["nightly", *base, "--landing", str(landing), "--no-show", "-q"]
    if not site:
        os.environ["DUPLIRANK_SITE__ENABLED"] = "false"
    deliver([f for f in files if day_of(f) in old], landing)
    first = command(nightly, work)
    deliver([f for f in files if day_of(f) == new_day], landing)
    new = command(nightly, work)
    months = sorted({d[:7] for d in days[: history + 1]})[-12:]
    backfill = command(["backfill", *base, "--from", months[0], "--to", months[-1], "-q"], work)
    shutil.rmtree(root, ignore_errors=True)
    return {
        "history_days": history,
        "new_day": new_day,
        "backfill_months": f"{months[0]}..{months[-1]} ({len(months)})",
        "first_load": first,
        "new_day_nightly": new,
        "backfill": backfill,
        "new_day_over_backfill": round(new["s"] / backfill["s"], 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--players", type=int, default=300)
    parser.add_argument("--histories", type=int, nargs="+", default=[90, 360])
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--site", action="store_true", help="rebuild the results site too")
    parser.add_argument("--work", type=Path, default=ROOT / "bench" / "data" / "pipeline")
    args = parser.parse_args()
    from flows.tools.synthetic import generate

    work, histories = args.work, sorted(args.histories)
    total = histories[-1] + 1
    logs = work / f"logs-{total}d-{args.players}p-s{args.seed}"
    if not logs.exists():
        print(f"generating {total} days for {args.players} players…", flush=True)
        generate(logs, players=args.players, days=total, seed=args.seed, start=START)
    files = sorted(logs.iterdir(), key=lambda p: (day_of(p), p.name))
    days = sorted({day_of(f) for f in files})

    server, server_s = start_server(work)
    try:
        warm = work / "warm"
        shutil.rmtree(warm, ignore_errors=True)
        (warm / "landing").mkdir(parents=True)
        os.environ["DUPLIRANK_SITE__ENABLED"] = "false"
        command(["nightly", "--warehouse", str(warm / "wh"), "--landing",
                 str(warm / "landing"), "--no-show", "-q"], work)  # fmt: skip
        os.environ.pop("DUPLIRANK_SITE__ENABLED")
        runs = [one_history(files, days, h, work, args.site) for h in histories]
    finally:
        server.stop()
    short, long = runs[0], runs[-1]
    result = {
        "players": args.players,
        "site": args.site,
        "load": os.getloadavg()[0],
        "prefect_server_start_s": round(server_s, 2),
        "runs": runs,
        "new_day_long_over_short": round(
            long["new_day_nightly"]["s"] / short["new_day_nightly"]["s"], 3
        ),
        "new_day_over_12_month_backfill": long["new_day_over_backfill"],
        "goals": "long/short <= 1.5; new day / backfill <= 0.10; peak RSS <= 4 GiB",
    }
    name = f"pipeline_{args.players}p_{'_'.join(map(str, histories))}d"
    out = ROOT / "bench" / "results" / f"{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
