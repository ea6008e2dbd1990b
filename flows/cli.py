"""`duplirank` — the one entry point (operations.md).

User errors (bad path, bad month, locked warehouse, bad SQL) end with one line on stderr and
exit code 2; programming errors keep their traceback.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from datetime import date
from pathlib import Path

from flows.warehouse import UserError

MONTH = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")


def _month(text: str) -> str:
    if not MONTH.match(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a month YYYY-MM")
    return text


def _date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date YYYY-MM-DD") from None


def _settings(args):
    from flows.settings import Settings

    overrides = {}
    if getattr(args, "warehouse", None):
        overrides["warehouse"] = args.warehouse
    if getattr(args, "landing", None):
        overrides["landing"] = args.landing
    return Settings(**overrides)


def cmd_ingest(args) -> int:
    from flows.pipeline import run_ingest

    summary = run_ingest(_settings(args), [Path(p) for p in args.paths])
    print(summary.text())
    return 0


def cmd_nightly(args) -> int:
    from flows.nightly import nightly

    summary = nightly(settings=_settings(args), as_of=args.date)
    print(summary.text())
    if args.show:
        print(summary.rankings(_settings(args)))
    return 0


def cmd_backfill(args) -> int:
    from flows.nightly import backfill

    if args.to < args.from_:
        raise UserError(f"--to {args.to} is before --from {args.from_}")
    summary = backfill(settings=_settings(args), first=args.from_, last=args.to)
    print(summary.text())
    return 0


def cmd_sql(args) -> int:
    from flows.query import format_frame, run_sql

    frame = run_sql(_settings(args).warehouse, args.query)
    sys.stdout.write(format_frame(frame, args.format))
    return 0


def cmd_generate(args) -> int:
    from flows.generate import generate

    start = args.start or date(2026, 11, 1)
    files = generate(args.out, players=args.players, days=args.days, seed=args.seed, start=start)
    total = sum(f.stat().st_size for f in files)
    print(f"wrote {len(files)} files ({total / 1e6:.1f} MB) to {args.out}")
    return 0


def cmd_chart(args) -> int:
    import polars as pl

    from flows.chart import chart_simultane
    from flows.query import run_sql

    wh = _settings(args).warehouse
    blocks = run_sql(wh, "select * from simultane_blocks")
    try:
        out = chart_simultane(
            blocks.filter(pl.col("player_id") == args.player), args.player, args.out
        )
    except ValueError as err:
        raise UserError(str(err)) from None
    print(f"wrote {out}")
    return 0


def cmd_score(args) -> int:
    from flows.score_command import score_file

    try:
        text = score_file(
            Path(args.file), args.method, args.option or [], args.boards, args.format,
            args.out, args.lang,
        )  # fmt: skip
    except (ValueError, FileNotFoundError) as err:
        raise UserError(str(err)) from None
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def cmd_site(args) -> int:
    from flows.site import publish_site
    from flows.warehouse import Warehouse

    settings = _settings(args)
    wh = Warehouse(settings.warehouse)
    if not wh.manifest_path.exists():
        raise UserError(f"no published tables in {wh.root} (run `duplirank nightly` first)")
    out = args.out or wh.root / "site"
    with wh.lock(settings.lock_wait_s):  # one published state for every table read
        report = publish_site(
            wh.scan, out, args.lang, timezone=settings.timezone,
            window_results=settings.simultane.window_results,
        )  # fmt: skip
    print(report.text())
    return 0


def cmd_serve(args) -> int:
    from flows.nightly import serve

    serve(_settings(args))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="duplirank", description="Score duplicate card-game tournaments from raw logs."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, func, help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help, description=help)
        p.add_argument(
            "--warehouse",
            type=Path,
            default=os.environ.get("DUPLIRANK_WAREHOUSE"),
            help="warehouse folder (default data/warehouse, or $DUPLIRANK_WAREHOUSE)",
        )
        p.set_defaults(func=func)
        return p

    p = command("ingest", cmd_ingest, "validate and load files; report counts and rejects")
    p.add_argument("paths", nargs="+", help="JSON Lines files (.jsonl, .jsonl.gz) or folders")

    p = command("nightly", cmd_nightly, "ingest new files, rescore touched months, publish")
    p.add_argument(
        "--date", type=_date, help="as-of date for %% actuel and in_window (default: latest data)"
    )
    p.add_argument("--landing", type=Path, help="landing folder (default data/landing)")
    p.add_argument("--no-show", dest="show", action="store_false", help="don't print rankings")

    p = command("backfill", cmd_backfill, "recompute months from the bronze layer")
    p.add_argument("--from", dest="from_", type=_month, required=True, metavar="YYYY-MM")
    p.add_argument("--to", type=_month, required=True, metavar="YYYY-MM")

    p = command("sql", cmd_sql, "run read-only SQL against the published tables")
    p.add_argument("query")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table")

    p = command("generate", cmd_generate, "write realistic synthetic raw logs")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--players", type=int, default=40)
    p.add_argument("--days", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--start", type=_date, help="first day (default 2026-11-01)")

    p = command("chart", cmd_chart, "draw a player's Performance Simultané curve")
    p.add_argument("competition", choices=("simultane",))
    p.add_argument("--player", required=True)
    p.add_argument("--out", type=Path, required=True)

    p = command("score", cmd_score, "score one bridge event file (PBN or JSON Lines)")
    p.add_argument("file")
    p.add_argument("--method", help="scoring method (default: the file's own)")
    p.add_argument("--option", action="append", metavar="KEY=VALUE", help="method option")
    p.add_argument("--boards", action="store_true", help="print per-table board results")
    p.add_argument("--format", choices=("table", "csv", "json", "html"), default="table")
    p.add_argument("--out", type=Path, help="--format html: folder of the event's pages")
    p.add_argument("--lang", choices=("fr", "en"), default="fr", help="--format html: language")

    p = command("site", cmd_site, "build the static results site from the published tables")
    p.add_argument("--out", type=Path, help="site folder (default <warehouse>/site)")
    p.add_argument("--lang", choices=("fr", "en"), default="fr", help="language of the pages")

    command("serve", cmd_serve, "serve the nightly flow on its cron schedule with Prefect")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    started = time.monotonic()
    try:
        code = args.func(args)
    except UserError as err:
        print(f"duplirank {args.command}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"duplirank {args.command}: interrupted", file=sys.stderr)
        return 130
    if args.command in ("ingest", "nightly", "backfill"):
        print(f"done in {time.monotonic() - started:.1f} s", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
