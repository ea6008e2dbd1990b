"""`duplirank` — the one entry point (operations.md).

User errors (bad path, bad month, locked warehouse, bad SQL) end with one line on stderr and
exit code 2; programming errors keep their traceback.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import threading
import time
from datetime import date
from pathlib import Path

from flows.errors import UserError

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
    from flows.nightly import run_ingest

    summary = run_ingest(_settings(args), [Path(p) for p in args.paths])
    print(summary.text())
    return 0


def cmd_nightly(args) -> int:
    from flows.nightly import nightly

    summary = nightly(settings=_settings(args), as_of=args.date)
    print(summary.text())
    if args.show:
        from flows.report import rankings_text

        print(rankings_text(_settings(args).warehouse))
    return 0


def cmd_backfill(args) -> int:
    from flows.nightly import backfill

    if args.to < args.from_:
        raise UserError(f"--to {args.to} is before --from {args.from_}")
    summary = backfill(settings=_settings(args), first=args.from_, last=args.to, as_of=args.date)
    print(summary.text())
    return 0


def cmd_verify(args) -> int:
    from flows.storage.retention import verify
    from flows.storage.warehouse import Warehouse

    wh = Warehouse(_settings(args).warehouse)
    problems = verify(wh)
    for problem in problems:
        print(problem)
    if problems:
        raise UserError(
            f"{len(problems)} published file(s) missing or damaged in {wh.store.url}; rebuild "
            "their months with `duplirank backfill`, or `duplirank recover`"
        )
    print(f"publication {wh.version()} of {wh.store.url}: every file matches its checksum")
    return 0


def cmd_recover(args) -> int:
    from flows.storage.retention import recover
    from flows.storage.warehouse import Warehouse

    settings = _settings(args)
    wh = Warehouse(settings.warehouse)
    with wh.store.lock(settings.lock_wait_s):
        folder = recover(wh)
    print(f"current publication: {folder}")
    return 0


def cmd_sql(args) -> int:
    import dataclasses

    from flows.query import print_sql, spill_folder

    settings = _settings(args)
    flags = {"timeout_s": args.timeout, "max_rows": args.max_rows, "memory_limit": args.memory}
    limits = dataclasses.replace(settings.sql, **{k: v for k, v in flags.items() if v is not None})
    query = _sql_text(args.query, args.file)
    params = _sql_params(args.param or [])
    if args.sandbox:  # before DuckDB starts its threads: see flows/sandbox.py
        from flows.sandbox import deny_writes

        deny_writes([spill_folder(limits, settings.warehouse)])
    if sys.stdout is None:
        raise UserError("standard output is closed")
    printed = print_sql(settings.warehouse, query, params, args.format, limits, sys.stdout)
    if printed.truncated and limits.max_rows:
        print(
            f"duplirank sql: stopped after {printed.rows} rows (--max-rows {limits.max_rows})",
            file=sys.stderr,
        )
    return 0


def _sql_text(query: str | None, file: str | None) -> str:
    """The query: the argument, or the text of --file F (`-`: standard input)."""
    if (query is None) == (file is None):
        raise UserError("give the query as one argument, or --file F (F = - reads standard input)")
    source = file if file is not None else query if query == "-" else None
    try:
        if source is None:
            text = query
        else:
            text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
        text.encode("utf-8")  # undecodable bytes of an argument or stdin (surrogate escapes)
    except OSError as err:
        raise UserError(f"cannot read --file {source}: {err.strerror or err}") from None
    except UnicodeError:
        raise UserError(f"the query ({source or 'argument'}) is not UTF-8 text") from None
    return text


PARAM = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.DOTALL)


def _sql_params(pairs: list[str]) -> dict[str, str]:
    """`--param k=v` pairs, bound to `$k` as text (cast in SQL where needed: `$k::integer`)."""
    params: dict[str, str] = {}
    for pair in pairs:
        match = PARAM.match(pair)
        if not match:
            raise UserError(f"--param {pair!r} is not NAME=VALUE")
        name, value = match.groups()
        if name in params:
            raise UserError(f"--param {name} given twice")
        params[name] = value
    return params


def _positive(kind):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not value >= 0:
            raise argparse.ArgumentTypeError(f"{text!r} must be >= 0 (0 means no limit)")
        return value

    return parse


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
        text = score_file(Path(args.file), args.method, args.option or [], args.boards, args.format)
    except (ValueError, FileNotFoundError) as err:
        raise UserError(str(err)) from None
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def cmd_serve(args) -> int:
    from flows.nightly import serve

    serve(_settings(args))
    return 0


SQL_HELP = """\
Run one read-only query against the published tables of the warehouse.

Read-only by construction: DuckDB's parser must find one SELECT (or EXPLAIN [ANALYZE] of one)
whose syntax tree only reads; the connection reads only the Parquet files the warehouse
publishes, with the views database attached read-only and DuckDB's configuration locked; on
Linux the process also drops every right to change a file (Landlock). COPY, ATTACH, INSTALL,
LOAD, SET, PRAGMA, CALL, EXPORT, CREATE, … are refused with one line and exit code 2.

Bounded: --timeout (setting sql.timeout_s, default 300 s) and Ctrl-C interrupt the query (exit
codes 2 and 130); DuckDB's memory is limited (sql.memory_limit, 2GB; it spills to
sql.temp_directory, default $TMPDIR/duplirank-sql-<uid>, never inside the warehouse); rows
stream to stdout batch by batch. Nested values (lists, structs, maps) print as JSON.

examples:
  duplirank sql 'select * from simultane_monthly where month = $m order by rank_indice' -p m=2026-11
  duplirank sql --file report.sql --format csv > report.csv
  echo "select count(*) from ff_matches" | duplirank sql -
"""


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
    p.add_argument(
        "--date", type=_date, help="as-of date for %% actuel and in_window (default: latest data)"
    )

    command("verify", cmd_verify, "check every published file against the manifest's checksums")
    command("recover", cmd_recover, "restore the last valid publication after damage")

    p = command("sql", cmd_sql, "run read-only SQL against the published tables")
    p.description = SQL_HELP
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument(
        "query", nargs="?", help="one SELECT (or EXPLAIN [ANALYZE] of one); - reads stdin"
    )
    p.add_argument("--file", "-f", metavar="F", help="read the query from file F (- for stdin)")
    p.add_argument(
        "--param",
        "-p",
        action="append",
        metavar="NAME=VALUE",
        help="bind $NAME to VALUE, as text (repeat for more; cast in SQL: $NAME::integer)",
    )
    p.add_argument(
        "--format",
        choices=("table", "csv", "json", "jsonl"),
        default="table",
        help="table (first 200 rows, or --max-rows), csv, json (one array, a row per line), "
        "jsonl (JSON Lines); all but table stream",
    )
    p.add_argument(
        "--timeout",
        type=_positive(float),
        metavar="S",
        help="stop the query after S seconds, output included (default: setting sql.timeout_s, "
        "300; 0: none)",
    )
    p.add_argument(
        "--max-rows",
        type=_positive(int),
        metavar="N",
        help="print at most N rows (default: setting sql.max_rows, 0: all)",
    )
    p.add_argument(
        "--memory",
        metavar="SIZE",
        help="DuckDB's memory limit, e.g. 4GB (default: setting sql.memory_limit, 2GB)",
    )

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
    p.add_argument("--format", choices=("table", "csv", "json"), default="table")

    command("serve", cmd_serve, "serve the nightly flow on its cron schedule with Prefect")
    return parser


WRITERS = ("ingest", "nightly", "backfill")


class Terminated(Exception):
    """SIGTERM: stop like Ctrl-C (cleanup runs: lock released, Prefect server stopped)."""


def _terminate(signum, frame):
    raise Terminated()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # Run as the `duplirank` command (no argv given), `sql` also restricts its own process
    # (flows/sandbox.py); a Python caller of main([...]), such as a test, keeps its rights.
    args.sandbox = argv is None
    started = time.monotonic()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)
    try:
        code = args.func(args)
    except UserError as err:
        print(f"duplirank {args.command}: error: {err}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, Terminated) as stop:
        word = "interrupted" if isinstance(stop, KeyboardInterrupt) else "terminated"
        note = " (a run is published whole or not at all)" if args.command in WRITERS else ""
        print(f"duplirank {args.command}: {word}{note}", file=sys.stderr)
        return 130 if isinstance(stop, KeyboardInterrupt) else 143
    if args.command in WRITERS:
        print(f"done in {time.monotonic() - started:.1f} s", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
