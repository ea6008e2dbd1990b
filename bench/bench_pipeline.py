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
Each command's wall time (process start to exit), CPU time and peak RSS (its own, `wait4`
through process.py's launcher) are reported, with the new day's ratios: on the longest vs the
shortest history, and to the backfill of the longest history.

    .venv/bin/python bench/bench_pipeline.py --players 300 --histories 90 360
    .venv/bin/python bench/bench_pipeline.py --players 20 --histories 30 60   # a smoke run
    .venv/bin/python bench/bench_pipeline.py --players 1000 --histories 90 360 \
        --tile 20 --stretch 2 --jobs 10       # the figures of bench/README.md

`--stretch N` generates the days in stretches of N days, each with its own seed, in `--jobs`
processes at once (the generator is pure Python: a year for 1,000 players is ~45 CPU
minutes); the players are the same, each stretch draws its own days. `--tile N` generates N
days only and repeats them over the history, dates shifted: the same players and daily volume.
Results go to `bench/results/pipeline.json`, one entry per size (and `--label`), the others
kept; each records its commit and the load.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from process import command as cli  # noqa: E402
from process import environment, prepare, stage_times, start_prefect_server, timed  # noqa: E402

START = date(2025, 12, 1)


def day_of(path: Path) -> str:
    """The date of a generated file (`<game>-YYYY-MM-DD.jsonl[.gz]`)."""
    return path.name.split("-", 1)[1][:10]


def command(args: list[str], work: Path) -> dict:
    """One CLI process, started by a small launcher (process.py: the peak RSS `wait4` gives is
    the command's own, not this process's): wall seconds from start to exit, its CPU seconds,
    its peak RSS and the stages its run summary prints."""
    env = environment(DUPLIRANK_LOG_DIR=str(work / "logs"))
    done = timed(cli(*args), env=env, logs=work)
    return {
        "s": round(done["wall_s"], 2),
        "cpu_s": round(done["cpu_s"], 2),
        "peak_rss_gib": round(done["peak_rss_bytes"] / 2**30, 3),
        "load": round(os.getloadavg()[0], 1),
        "stages_s": {k: round(v, 2) for k, v in stages(done["stderr"]).items()},
    }


LONG_STAGE = re.compile(r"^  (\S.*?)\s+(?:(\d+):)?(\d+):(\d\d)\s")


def stages(stderr: str) -> dict[str, float]:
    """The run summary's stages (process.stage_times), those of a minute or more (`m:ss`,
    `h:mm:ss`) included."""
    found = stage_times(stderr)
    inside = False
    for line in stderr.splitlines():
        if line.startswith("run summary"):
            inside = True
        elif inside and (match := LONG_STAGE.match(line + " ")):
            hours, minutes, seconds = (int(g or 0) for g in match.groups()[1:])
            found.setdefault(match[1], hours * 3600 + minutes * 60 + seconds)
        elif not line.startswith("  "):
            inside = False
    return found


def tile(base: Path, days: int, jobs: int) -> Path:
    """`days` days of logs made of the days of `base` repeated, each copy's dates (ISO dates
    and the YYYYMMDD of ids) shifted by its place; a folder beside `base`, made once."""
    out = base.with_name(base.name.replace("d-", f"d-tiled{days}d-", 1))
    if out.exists():
        return out
    print(f"tiling {base.name} over {days} days…", flush=True)
    partial = out.with_name(out.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir()
    files = sorted(base.iterdir())
    span = len({day_of(f) for f in files})
    assert span % 2 == 0, "an even number of days keeps each day's file gzipped or not"
    copies = []
    for shift in range(0, days, span):
        # the latest dates first: a date shifted onto a later base date is not shifted again
        dates = [START + timedelta(days=d) for d in range(span + 1, -1, -1)]
        script = "".join(
            f"s/{d:%Y-%m-%d}/{d + timedelta(days=shift):%Y-%m-%d}/g;"
            f"s/{d:%Y%m%d}/{d + timedelta(days=shift):%Y%m%d}/g;"
            for d in dates
        )
        for f in files:
            day = date.fromisoformat(day_of(f)) + timedelta(days=shift)
            if (day - START).days < days:
                name = f.name.replace(day_of(f), day.isoformat())
                copies.append((f, partial / name, script))
    with multiprocessing.Pool(jobs) as pool:
        pool.starmap(_shifted_copy, copies)
    partial.rename(out)
    return out


def _shifted_copy(source: Path, target: Path, script: str) -> None:
    gz = source.name.endswith(".gz")
    read = f"zcat {shlex.quote(str(source))}" if gz else f"cat {shlex.quote(str(source))}"
    write = "gzip -1" if gz else "cat"
    subprocess.run(
        f"{read} | sed -e {shlex.quote(script)} | {write} > {shlex.quote(str(target))}",
        shell=True,
        check=True,
    )


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
    nightly = ["nightly", *base, "--landing", str(landing), "--no-show"]
    if not site:
        os.environ["DUPLIRANK_SITE__ENABLED"] = "false"
    deliver([f for f in files if day_of(f) in old], landing)
    first = command(nightly, work)
    deliver([f for f in files if day_of(f) == new_day], landing)
    new = command(nightly, work)
    months = sorted({d[:7] for d in days[: history + 1]})[-12:]
    backfill = command(["backfill", *base, "--from", months[0], "--to", months[-1]], work)
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
    parser.add_argument(
        "--stretch",
        type=int,
        default=0,
        help="generate the days in stretches of this many days, each its own seed, in --jobs "
        "processes at once (0: one stretch, one process)",
    )
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--tile",
        type=int,
        default=0,
        help="generate only this many days (an even number) and repeat them over the history, "
        "dates shifted (0: generate every day)",
    )
    parser.add_argument("--label", default="", help="added to the size's key in the results")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "pipeline.json")
    args = parser.parse_args()
    from flows.tools.synthetic import generate

    work, histories = args.work, sorted(args.histories)
    total = histories[-1] + 1
    by = f"-by{args.stretch}" if args.stretch else ""
    tiled = args.tile and args.tile < total
    made = args.tile if tiled else total
    logs = work / f"logs-{made}d-{args.players}p-s{args.seed}{by}"
    if not logs.exists():
        print(f"generating {made} days for {args.players} players…", flush=True)
        partial = logs.with_name(logs.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        stretch = args.stretch or made
        jobs = [
            (
                partial,
                args.players,
                min(stretch, made - first),
                args.seed * 1000 + k,
                START + timedelta(days=first),
            )
            for k, first in enumerate(range(0, made, stretch))
        ]
        if len(jobs) == 1:
            generate(partial, players=args.players, days=made, seed=args.seed, start=START)
        else:
            with multiprocessing.Pool(args.jobs) as pool:
                pool.starmap(generate, jobs)
        partial.rename(logs)
    if tiled:
        logs = tile(logs, total, args.jobs)
    files = sorted(logs.iterdir(), key=lambda p: (day_of(p), p.name))
    days = sorted({day_of(f) for f in files})

    load_before = os.getloadavg()[0]
    prepare()
    server, server_s = start_prefect_server(work)
    try:
        warm = work / "warm"
        shutil.rmtree(warm, ignore_errors=True)
        (warm / "landing").mkdir(parents=True)
        os.environ["DUPLIRANK_SITE__ENABLED"] = "false"
        command(
            [
                "nightly",
                "--warehouse",
                str(warm / "wh"),
                "--landing",
                str(warm / "landing"),
                "--no-show",
                "-q",
            ],
            work,
        )
        os.environ.pop("DUPLIRANK_SITE__ENABLED")
        runs = [one_history(files, days, h, work, args.site) for h in histories]
    finally:
        server.stop()
    short, long = runs[0], runs[-1]
    result = {
        "players": args.players,
        "site": args.site,
        "load": [round(load_before, 1), round(os.getloadavg()[0], 1)],  # at start, at end
        "prefect_server_start_s": round(server_s, 2),
        "runs": runs,
        "new_day_long_over_short": round(
            long["new_day_nightly"]["s"] / short["new_day_nightly"]["s"], 3
        ),
        "new_day_over_12_month_backfill": long["new_day_over_backfill"],
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "commit": subprocess.run(
            ["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip(),
        "goals": "long/short <= 1.5; new day / backfill <= 0.10; peak RSS <= 4 GiB",
    }
    # one file for the bench: each size's entry is replaced, the other sizes' are kept
    out = args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    sizes = json.loads(out.read_text()).get("sizes", {}) if out.exists() else {}
    sizes[f"{args.players}p_{'_'.join(map(str, histories))}d{args.label}"] = result
    whole = {"goals": result.pop("goals"), "sizes": dict(sorted(sizes.items()))}
    out.write_text(json.dumps(whole, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
