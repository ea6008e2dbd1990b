"""`duplirank` — the one entry point (operations.md).

Standard output carries only results (summaries, rankings, tables); progress and errors go to
standard error (`flows/progress.py`). A user error (bad path, bad month, bad setting, locked
warehouse, bad SQL) ends with one line on stderr and exit code 2, and a failing command creates
no file or folder: paths are checked before anything is written. A run (`ingest`, `nightly`,
`backfill`) logs to one file per run (`flows/runlog.py`); if it fails for another reason, the
terminal gets one line naming the failed stage and that file, and the exit code is 1. Other
commands keep the traceback of a programming error.
"""

from __future__ import annotations

import argparse
import re
import signal
import sys
import threading
import time
from dataclasses import fields
from datetime import date
from pathlib import Path

from flows import runlog
from flows.errors import UserError

MONTH = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")
RUNS = ("ingest", "nightly", "backfill")
# commands that write the warehouse: run in a child process watched by this one (supervise.py)
SUPERVISED = (*RUNS, "repair", "recover", "relink", "gc")
NO_PROGRESS = ("sql",)  # prints rows only: its errors need no progress reporter (nor rich)
GENERATE_START = date(2026, 11, 1)


def _month(text: str) -> str:
    if not MONTH.match(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a month YYYY-MM")
    return text


def _date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date YYYY-MM-DD") from None


def _at_least(low: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, not {value}")
        return value

    parse.__name__ = f"integer >= {low}"
    return parse


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


# --------------------------------------------------------------------------- checks
def _settings(args):
    from flows.settings import load_settings

    settings = load_settings(
        warehouse=getattr(args, "warehouse", None), landing=getattr(args, "landing", None)
    )
    flags = {
        "runner": getattr(args, "runner", None),
        "scheduler_address": getattr(args, "scheduler", None),
        "workers": getattr(args, "workers", None),
    }
    if any(v is not None for v in flags.values()):
        import dataclasses

        from flows.cluster_options import ClusterOptions
        from transforms.option_checks import OptionError

        given = {k: v for k, v in flags.items() if v is not None}
        if "runner" not in given and settings.cluster.runner != "dask":
            given["runner"] = "dask"  # --scheduler / --workers mean a Dask cluster
        try:
            cluster = ClusterOptions(**{**dataclasses.asdict(settings.cluster), **given})
        except OptionError as err:
            raise UserError(f"setting cluster.{err}") from None
        settings = settings.model_copy(update={"cluster": cluster})
    return settings


def _location(text: str):
    """A `--warehouse` / `--landing` value: a local folder, or a URL kept as text."""
    return text if "://" in text else Path(text)


def _is_local(path: Path) -> bool:
    return "://" not in str(path)


def _new_folder_allowed(path: Path, what: str) -> None:
    """`path` is a folder, or can be created as one in an existing folder (no parents made)."""
    if not _is_local(path):
        return
    if path.exists() and not path.is_dir():
        raise UserError(f"{what} {path} is a file, not a folder")
    if not path.exists() and not path.absolute().parent.is_dir():
        raise UserError(f"{what} {path} cannot be created: {path.absolute().parent} does not exist")


def _existing_folder(path: Path, what: str) -> None:
    if not _is_local(path):
        return
    if path.is_file():
        raise UserError(f"{what} {path} is a file, not a folder")
    if not path.is_dir():
        raise UserError(f"{what} {path} does not exist")


def _existing_warehouse(args):
    """(settings, Warehouse) of a command that reads a warehouse which must already exist."""
    from flows.runs import open_warehouse

    settings = _settings(args)
    _existing_folder(settings.warehouse, "warehouse")
    return settings, open_warehouse(settings)


def _new_file_allowed(path: Path, what: str) -> None:
    """`path` can be written: its folder exists (never created), it is not a folder."""
    if path.is_dir():
        raise UserError(f"{what} {path} is a folder")
    if not path.absolute().parent.is_dir():
        raise UserError(f"{what} {path}: folder {path.absolute().parent} does not exist")


# --------------------------------------------------------------------------- runs
def _start_run(command: str, settings, prefect: bool, server: bool = True) -> Path:
    """The process settings of a run, then its log file (returned): Prefect's and our logs go
    there, not to the terminal. Called once the command's paths are checked (a failing command
    creates nothing), before the run imports Polars (and Prefect, when `prefect`; `server`:
    its flows need a Prefect server)."""
    from flows.allocator import use_batch_allocator

    use_batch_allocator()
    if prefect:
        from flows.prefect_env import use_prefect_defaults

        use_prefect_defaults()
        # configures Prefect's logging (`prefect.main`, which `import prefect` alone does not
        # load), which capture then redirects: configured after, it would replace the capture
        import prefect.main  # noqa: F401

    try:
        path = runlog.new_log_path(command, settings.log_dir)
        runlog.capture(path)
    except OSError as err:
        raise UserError(f"cannot write the run log in {settings.log_dir}: {err}") from None
    runlog.logger.info("duplirank %s", " ".join(_ARGV))
    if "flows.supervise" in sys.modules:
        sys.modules["flows.supervise"].record_log(path)
    if prefect and server:  # the temporary server, if any, starts while the run loads its libraries
        from flows.prefect_server import launch_ahead

        launch_ahead(path)
    return path


def _freeze_objects(args) -> None:
    """In a `duplirank` process (the console script, not a Python caller of `main`), what its
    imports made (some 10^5 objects: Prefect's, Polars') lives until it exits: frozen, the
    garbage collector's passes during the run and at exit no longer walk it (`atexit` handlers
    and the modules' own clean-up still run)."""
    if args.sandbox:
        import gc

        gc.freeze()


def _finish_run(settings, summary) -> None:
    """Results on stdout, the summary table (times, quarantine reasons) on stderr."""
    from flows import progress
    from flows.artifacts import quarantine_reasons

    print(summary.text())
    reasons = getattr(summary, "reasons", None)  # counted by the run's artifacts, else here
    if reasons is None:
        reasons = quarantine_reasons(settings.warehouse, summary)
    progress.summary({"quarantined lines by reason": reasons} if reasons else None)


def cmd_ingest(args) -> int:
    from flows import progress

    settings = _settings(args)
    if args.replay_quarantine:
        if args.paths:
            raise UserError("--replay-quarantine reads the quarantine, not files: give no PATH")
        _existing_folder(settings.warehouse, "warehouse")
        _start_run("ingest", settings, prefect=False)
        from flows.runs import replay_run

        with progress.stage("replay quarantine"):
            summary = replay_run(settings, args.reason)
    else:
        if not args.paths:
            raise UserError("give the files or folders to ingest (or --replay-quarantine)")
        if args.reason is not None:
            raise UserError("--reason goes with --replay-quarantine")
        _new_folder_allowed(settings.warehouse, "warehouse")
        paths = [Path(p) for p in args.paths]
        for path in paths:
            if not path.exists():
                raise UserError(f"no such file or folder: {path}")
        _start_run("ingest", settings, prefect=False)
        from flows.runs import ingest_run

        with progress.stage("ingest", unit="files") as bar:
            summary = ingest_run(settings, paths)
            progress.count_ingest(bar, summary.ingest)
    _finish_run(settings, summary)
    return 0


def cmd_nightly(args) -> int:
    settings = _settings(args)
    _existing_folder(settings.landing, "landing folder")
    _new_folder_allowed(settings.warehouse, "warehouse")
    from flows.nothing_new import quiet_nightly  # nothing new: no pipeline, no flow to run

    summary = quiet_nightly(
        settings, args.date, lambda: _start_run("nightly", settings, prefect=False)
    )
    if summary is None:
        _start_run("nightly", settings, prefect=True)
        from flows.nightly import nightly

        _freeze_objects(args)
        summary = nightly(settings=settings, as_of=args.date)
    _finish_run(settings, summary)
    if args.show:
        from flows.tools.report import rankings_text

        print(rankings_text(settings.warehouse, rows=getattr(summary, "rankings", None)))
    return 0


def cmd_backfill(args) -> int:
    if args.to < args.from_:
        raise UserError(f"--to {args.to} is before --from {args.from_}")
    settings = _settings(args)
    _existing_folder(settings.warehouse, "warehouse")
    _start_run("backfill", settings, prefect=True)
    from flows.nightly import backfill

    _freeze_objects(args)
    summary = backfill(settings=settings, first=args.from_, last=args.to, as_of=args.date)
    _finish_run(settings, summary)
    return 0


# --------------------------------------------------------------------------- tools
def cmd_sql(args) -> int:
    import dataclasses

    from flows.tools.query import print_sql, spill_folder

    settings = _settings(args)
    flags = {"timeout_s": args.timeout, "max_rows": args.max_rows, "memory_limit": args.memory}
    limits = dataclasses.replace(settings.sql, **{k: v for k, v in flags.items() if v is not None})
    query = _sql_text(args.query, args.file)
    params = _sql_params(args.param or [])
    if args.sandbox:  # before DuckDB starts its threads: see flows/tools/sandbox.py
        from flows.tools.sandbox import deny_writes

        writable = [spill_folder(limits, settings.warehouse)]
        if not _is_local(settings.warehouse):  # the views databases fetched from the store
            from flows.runs import open_warehouse

            writable.append(open_warehouse(settings).store.cache_folder("objects"))
        deny_writes(writable)
    if sys.stdout is None:
        raise UserError("standard output is closed")
    warehouse = settings.warehouse
    if args.as_of is not None:  # a kept publication as it was (same guards)
        from flows.runs import open_warehouse
        from flows.storage.publications import find
        from flows.storage.warehouse import Warehouse

        record = find(open_warehouse(settings), args.as_of, settings.timezone)
        warehouse = Warehouse(settings.warehouse, settings.storage, pinned=record.folder)
    printed = print_sql(
        warehouse, query, params, args.format, limits, sys.stdout, timezone=settings.timezone
    )
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


def cmd_verify(args) -> int:
    from flows.storage.retention import verify

    settings, wh = _existing_warehouse(args)
    problems = verify(wh)
    from flows.tools.site.served import site_problem

    site = site_problem(wh, settings)
    if site is not None:
        problems.append(f"results site: {site} (`duplirank recover` rebuilds it)")
    for problem in problems:
        print(problem)
    if problems:
        raise UserError(
            f"{len(problems)} published file(s) missing or damaged in {wh.store.url}; "
            "`duplirank recover` (the views database, the site, or the last intact "
            "publication), or rebuild their months with `duplirank backfill` (a bronze "
            "file: `duplirank repair`)"
        )
    print(f"publication {wh.version()} of {wh.store.url}: every file matches its checksum")
    return 0


def cmd_recover(args) -> int:
    from flows.storage.retention import recover

    settings, wh = _existing_warehouse(args)
    with wh.store.lock(settings.lock_wait_s):
        folder = recover(wh)  # also rebuilds its views database if it must be
        from flows.tools.site.served import repair_site

        site = repair_site(wh, settings)
    print(f"current publication: {folder}")
    if site:
        print(site)
    return 0


def cmd_repair(args) -> int:
    settings = _settings(args)
    _existing_folder(settings.landing, "landing folder")
    _existing_folder(settings.warehouse, "warehouse")
    # its clean run calls the nightly flow's steps as plain functions: Prefect, no server
    _start_run("repair", settings, prefect=True, server=False)
    from flows.repair import repair_run

    summary = repair_run(settings, args.date)
    _finish_run(settings, summary)
    return 0


def cmd_relink(args) -> int:
    from flows.storage.served import relink

    settings, wh = _existing_warehouse(args)
    with wh.store.lock(settings.lock_wait_s):
        wh.publication()  # a lost pointer: one line naming recover
        rebuilt = relink(wh)
    for folder, problem in rebuilt:
        print(f"rebuilt {folder}/duplirank.duckdb ({problem})")
    print(f"every kept publication's views database names the files of {wh.store.url}")
    return 0


def cmd_publications(args) -> int:
    from zoneinfo import ZoneInfo

    import polars as pl

    from flows.storage.publications import history
    from flows.tools.query import format_frame

    settings, wh = _existing_warehouse(args)
    zone = ZoneInfo(settings.timezone)

    def shown(moment):
        return moment.astimezone(zone).strftime("%Y-%m-%d %H:%M") if moment else ""

    records = [r for r in history(wh, settings.timezone) if r.current_from is not None]
    frame = pl.DataFrame(
        {
            "number": [r.version for r in records],
            f"current from ({settings.timezone})": [shown(r.current_from) for r in records],
            "until": ["now" if r.is_current else shown(r.current_until) for r in records],
            "run": [r.run_id or "" for r in records],
            "command": [r.command or "" for r in records],
            "rebuilt": [r.rebuilt() for r in records],
            "official": [r.official or "" for r in records],
        },
        schema_overrides={"number": pl.Int64},
    )
    print(format_frame(frame, args.format), end="")
    return 0


def cmd_gc(args) -> int:
    from flows.storage.retention import collect_garbage

    settings, wh = _existing_warehouse(args)
    with wh.store.lock(settings.lock_wait_s):
        wh.manifest()  # a damaged publication: one line naming recover
        result = collect_garbage(wh, settings.retention_policy(), dry_run=args.dry_run)
    print(result)
    return 0


def cmd_diff(args) -> int:
    import polars as pl

    from flows.storage.diff import diff
    from flows.storage.publications import find
    from flows.tools.query import format_frame

    settings, wh = _existing_warehouse(args)
    first = find(wh, args.first, settings.timezone)
    second = find(wh, args.second, settings.timezone)
    diffs = diff(wh, first.folder, second.folder, [args.table] if args.table else None)
    if args.table:
        from flows.storage import catalog

        if args.table not in catalog.tables() and args.table not in wh.manifest()["tables"]:
            raise UserError(f"--table {args.table}: no such table")
        empty = {c: pl.String for c in ("change", "column", "before", "after")}
        frame = diffs[0].rows() if diffs else pl.DataFrame(schema=empty)
    else:
        frame = pl.DataFrame(
            {
                "table": [d.table for d in diffs],
                "key": [", ".join(d.key) or "(whole row)" for d in diffs],
                "added": [d.added.height for d in diffs],
                "removed": [d.removed.height for d in diffs],
                "changed": [d.changed_rows for d in diffs],
                "months": [", ".join(sorted(d.months())) for d in diffs],
            },
            schema_overrides={"added": pl.Int64, "removed": pl.Int64, "changed": pl.Int64},
        )
    print(f"publication {first.version} -> {second.version}", file=sys.stderr)
    print(format_frame(frame, args.format), end="")
    return 0


def _publication_commands(command) -> None:
    """The parser entries of the commands about publications."""
    command(
        "relink",
        cmd_relink,
        "after a copy or a move: rebuild the views databases for the warehouse's new place",
    )
    p = command(
        "publications",
        cmd_publications,
        "list the kept publications: number, when current, run, what it rebuilt, official",
    )
    p.add_argument("--format", choices=("table", "csv", "json"), default="table")
    p = command(
        "gc",
        cmd_gc,
        "delete the files no kept publication lists (retention_days, retention.keep_official)",
    )
    p.add_argument("--dry-run", action="store_true", help="only print what would be deleted")
    p = command(
        "diff",
        cmd_diff,
        "what changed from publication N to M: rows added, removed, changed, by table",
    )
    p.add_argument("first", metavar="N", help="a kept publication: number or YYYY-MM-DDTHH:MM")
    p.add_argument("second", metavar="M", help="a kept publication: number or YYYY-MM-DDTHH:MM")
    p.add_argument("--table", metavar="T", help="list T's rows: key, changed column, before, after")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table")


def cmd_generate(args) -> int:
    import shutil

    from flows.tools.synthetic import generate

    out: Path = args.out
    _new_folder_allowed(out, "--out")
    created = not out.exists()
    try:
        files = generate(
            out, players=args.players, days=args.days, seed=args.seed, start=args.start
        )
    except OSError as err:
        if created:
            shutil.rmtree(out, ignore_errors=True)
        raise UserError(f"cannot write to {out}: {err.strerror or err}") from None
    total = sum(f.stat().st_size for f in files)
    print(f"wrote {len(files)} files ({total / 1e6:.1f} MB) to {out}")
    return 0


def cmd_chart(args) -> int:
    from flows.tools.chart import FORMATS, chart_published_player

    out: Path = args.out
    if out.suffix.lower() not in FORMATS:
        raise UserError(f"--out {out}: the name must end in {', '.join(FORMATS)}")
    _new_file_allowed(out, "--out")
    settings = _settings(args)
    try:
        written = chart_published_player(
            settings.warehouse, args.player, out, settings.simultane_options()
        )
    except ValueError as err:
        raise UserError(str(err)) from None
    except OSError as err:
        raise UserError(f"cannot write {out}: {err.strerror or err}") from None
    print(f"wrote {written}")
    return 0


def cmd_score(args) -> int:
    from flows.tools.score import score_file

    try:
        text = score_file(
            Path(args.file),
            args.method,
            args.option or [],
            args.boards,
            args.format,
            args.out,
            args.lang,
        )
    except (ValueError, FileNotFoundError) as err:
        raise UserError(str(err)) from None
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def cmd_site(args) -> int:
    from flows.tools.site.served import rebuild_site

    settings, wh = _existing_warehouse(args)
    if wh.publication() is None:
        raise UserError(f"no published tables in {wh.store.url} (run `duplirank nightly` first)")
    if args.out is not None:
        _new_folder_allowed(args.out, "--out")
    print(rebuild_site(wh, args.lang, settings, args.out))
    return 0


def cmd_serve(args) -> int:
    from flows import progress
    from flows.allocator import use_batch_allocator
    from flows.prefect_env import use_prefect_defaults

    settings = _settings(args)
    _existing_folder(settings.landing, "landing folder")
    _new_folder_allowed(settings.warehouse, "warehouse")
    use_batch_allocator()  # the flow runs it serves inherit the process's environment
    use_prefect_defaults()
    from flows.prefect_server import running_server

    url = running_server()
    from flows.nightly import serve

    progress.note(
        f"serving the nightly flow at {settings.nightly_cron} ({settings.timezone}) on {url}"
    )
    serve(settings)
    return 0


# --------------------------------------------------------------------------- parser
class _Parser(argparse.ArgumentParser):
    """A wrong flag or value is a user error like any other: one line, exit code 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


class _Help(argparse.RawDescriptionHelpFormatter):
    """Descriptions keep their line breaks; flags show their default when they have one."""

    def _get_help_string(self, action):
        text = action.help or ""
        default = action.default
        if (
            "%(default)" not in text
            and "default" not in text
            and not any(default is v for v in (None, False, True, argparse.SUPPRESS))
            and not action.required
            and action.option_strings
        ):
            text += " (default: %(default)s)"
        return text


# what each bridge option means, for `score --help` (a test keeps it in step with BridgeOptions)
BRIDGE_OPTION_HELP = {
    "neuberg": "matchpoints: Neuberg adjustment when fewer results (false: traditional)",
    "penalty_p": "penalty P, % of the board's top (matchpoint methods)",
    "penalty_z": "penalty Z, % of the board's top",
    "penalty_m": "penalty M, % of the board's top",
    "penalty_w": "compensation W, % of the board's top",
    "adjusted_imps_per_10pct": "IMPs of an artificial score per 10 % from 50 % (Law 86A)",
    "missing_as_average": "three_tables: missing tables scored as averages",
    "bog": "butler/sunday_times: no cap on a positive round total (KOPS -BOG)",
    "out": "butler/sunday_times: drop exactly n scores each side (KOPS -OUT=n)",
    "vp": "convert round IMP totals to VP (WBF 2013 scale)",
    "datum_rounding": "toward_zero | nearest | half_even",
    "trim": "scores dropped before the datum: kops | out=n | a fraction | median",
    "cap_base": "round cap = cap_base + boards in the round",
    "cavendish_cap": "cavendish methods: IMPs cap per comparison",
    "pct_rounding": "matchpoints: per_board (KOPS) | exact (sum unrounded, round once)",
}


def _bridge_options_help() -> str:
    from transforms.bridge.options import METHODS, BridgeOptions

    defaults = BridgeOptions()
    keys = "\n".join(
        f"  {f.name:<24} {getattr(defaults, f.name)!s:<12} {BRIDGE_OPTION_HELP.get(f.name, '')}"
        for f in fields(BridgeOptions)
        if f.name != "method"
    )
    return (
        f"methods (--method): {', '.join(METHODS)}\n\n"
        "options (--option KEY=VALUE, repeatable), with their defaults:\n"
        f"{keys}\n\n"
        "The file's own method and options (bridge.event) apply unless given here; "
        "bridge.md defines each method and option."
    )


RUNS_EPILOG = (
    "Progress goes to stderr (bars on a terminal, plain lines otherwise); the run's log "
    "file is in $DUPLIRANK_LOG_DIR (default ~/.local/state/duplirank/logs)."
)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="duplirank",
        description="Score duplicate card-game tournaments from raw logs.",
        epilog="`duplirank COMMAND --help` for each command's flags. Settings: environment "
        "variables DUPLIRANK_… (see the README). User errors exit with code 2.",
        formatter_class=_Help,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, func, help: str, warehouse: bool = True, epilog: str | None = None):
        p = sub.add_parser(name, help=help, description=help, epilog=epilog, formatter_class=_Help)
        if warehouse:
            p.add_argument(
                "--warehouse",
                type=_location,
                metavar="DIR|URL",
                help="warehouse folder or s3://bucket/prefix (default: $DUPLIRANK_WAREHOUSE, "
                "else data/warehouse)",
            )
        p.set_defaults(func=func)
        return p

    _run_commands(command)
    _publication_commands(command)
    _sql_command(command("sql", cmd_sql, "run read-only SQL against the published tables"))
    _tool_commands(command)
    return parser


def _quiet_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-q", "--quiet", action="store_true", help="print only errors on stderr (no progress)"
    )


def _date_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--date",
        type=_date,
        metavar="YYYY-MM-DD",
        help="as-of date for %% actuel and in_window (default: latest data)",
    )


def _landing_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--landing",
        type=_location,
        metavar="DIR|URL",
        help="landing folder or s3://bucket/prefix (default: $DUPLIRANK_LANDING, else "
        "data/landing)",
    )


def _cluster_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--runner",
        choices=("local", "dask"),
        help="where the partition tasks run: local (threads of this process) or dask "
        "(a Dask cluster; default: setting cluster.runner, local)",
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="the Dask scheduler to use, e.g. tcp://10.0.0.5:8786 (implies --runner dask; "
        "default: a local cluster started for the run)",
    )
    p.add_argument(
        "--workers",
        type=_at_least(1),
        metavar="N",
        help="worker processes of the local Dask cluster (implies --runner dask; default: "
        "setting cluster.workers, 2)",
    )


def _run_commands(command) -> None:
    """The parser entries of the commands that write the warehouse."""
    p = command("ingest", cmd_ingest, "validate and load files; report counts and rejects")
    p.add_argument(
        "paths", nargs="*", help="JSON Lines (.jsonl, .jsonl.gz, .ndjson…) or PBN files, or folders"
    )
    p.add_argument(
        "--replay-quarantine",
        action="store_true",
        help="validate quarantined lines again; those that pass go to bronze",
    )
    p.add_argument("--reason", metavar="TEXT", help="replay only lines whose reason contains TEXT")
    _quiet_flag(p)
    p = command(
        "nightly",
        cmd_nightly,
        "ingest new files, rescore touched months, publish",
        epilog=RUNS_EPILOG,
    )
    _date_flag(p)
    _landing_flag(p)
    p.add_argument(
        "--no-show", dest="show", action="store_false", help="don't print the rankings at the end"
    )
    _cluster_flags(p)
    _quiet_flag(p)
    p = command(
        "backfill", cmd_backfill, "recompute months from the bronze layer", epilog=RUNS_EPILOG
    )
    p.add_argument(
        "--from", dest="from_", type=_month, required=True, metavar="YYYY-MM", help="first month"
    )
    p.add_argument("--to", type=_month, required=True, metavar="YYYY-MM", help="last month")
    _date_flag(p)
    _cluster_flags(p)
    _quiet_flag(p)
    command("verify", cmd_verify, "check every published file against the manifest's checksums")
    command("recover", cmd_recover, "restore the last valid publication after damage")
    p = command(
        "repair", cmd_repair, "rebuild every table from the landing folder (a damaged bronze file)"
    )
    _date_flag(p)
    _landing_flag(p)
    _quiet_flag(p)


def _sql_command(p: argparse.ArgumentParser) -> None:
    """The flags of `duplirank sql`."""
    p.description = SQL_HELP
    p.add_argument(
        "query", nargs="?", help="one SELECT (or EXPLAIN [ANALYZE] of one); - reads stdin"
    )
    p.add_argument("--file", "-f", metavar="F", help="read the query from file F (- for stdin)")
    p.add_argument(
        "--as-of",
        metavar="N|YYYY-MM-DDTHH:MM",
        help="query kept publication N, or the one current at that time (platform time zone), "
        "as it was (`duplirank publications` lists them)",
    )
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


def _tool_commands(command) -> None:
    """The parser entries of the tools: generate, chart, score, site, serve."""
    p = command("generate", cmd_generate, "write realistic synthetic raw logs", warehouse=False)
    p.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="DIR",
        help="folder to write (its parent must exist)",
    )
    p.add_argument(
        "--players", type=_at_least(1), default=40, metavar="N", help="number of players"
    )
    p.add_argument("--days", type=_at_least(1), default=3, metavar="N", help="number of days")
    p.add_argument(
        "--seed", type=int, default=1, metavar="N", help="random seed (same seed, same bytes)"
    )
    p.add_argument(
        "--start", type=_date, default=GENERATE_START, metavar="YYYY-MM-DD", help="first day"
    )
    p = command("chart", cmd_chart, "draw a player's Performance Simultané curve")
    p.add_argument("competition", choices=("simultane",), help="the competition (simultane)")
    p.add_argument("--player", required=True, metavar="ID", help="player id, e.g. P0001")
    p.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="FILE",
        help="image file: .png, .svg or .pdf (its folder must exist)",
    )
    _score_command(command)
    p = command("site", cmd_site, "build the static results site from the published tables")
    p.add_argument(
        "--out", type=Path, metavar="DIR", help="site folder (default: <warehouse>/site)"
    )
    p.add_argument("--lang", choices=("fr", "en"), default="fr", help="language of the pages")
    p = command(
        "serve",
        cmd_serve,
        "serve the nightly flow on its cron schedule with Prefect",
        epilog="Needs a running Prefect server (PREFECT_API_URL); the schedule is the setting "
        "nightly_cron in the time zone of the setting timezone.",
    )
    _landing_flag(p)


def _score_command(command) -> None:
    """The parser entry of `duplirank score`."""
    p = command(
        "score",
        cmd_score,
        "score one bridge event file (PBN or JSON Lines)",
        warehouse=False,
        epilog=_bridge_options_help(),
    )
    p.add_argument("file", help="a .pbn or USEBIO .xml file, or JSON Lines of bridge.* records")
    p.add_argument(
        "--method", metavar="METHOD", help="scoring method (default: the file's own; list below)"
    )
    p.add_argument(
        "--option", action="append", metavar="KEY=VALUE", help="method option (keys below)"
    )
    p.add_argument("--boards", action="store_true", help="also print per-table board results")
    p.add_argument(
        "--format", choices=("table", "csv", "json", "html"), default="table", help="output format"
    )
    p.add_argument("--out", type=Path, metavar="DIR", help="--format html: folder of the pages")
    p.add_argument("--lang", choices=("fr", "en"), default="fr", help="--format html: language")


# --------------------------------------------------------------------------- main
def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    message = f"{type(err).__name__}: {text[0]}" if text else type(err).__name__
    return message if len(message) <= 300 else message[:297] + "…"


_ARGV: list[str] = []  # the command line of this process's run, for its log


class Terminated(Exception):
    """SIGTERM: stop like Ctrl-C (cleanup runs: lock released, Prefect server stopped)."""


def _terminate(signum, frame):
    raise Terminated()


def _error(text: str) -> None:
    """One line on stderr (through the progress reporter when there is one: it stops bars)."""
    progress = sys.modules.get("flows.progress")
    if progress is not None:
        progress.error(text)
    else:
        print(text, file=sys.stderr, flush=True)


def _reader_gone() -> bool:
    """Standard output is a pipe whose reader has closed it (its write end polls POLLERR)."""
    import select

    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):  # not a file (a test's capture)
        return False


def _discard_stdout() -> None:
    """Standard output to /dev/null: what is still buffered goes nowhere, quietly."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _give_back(args, runs: list[tuple[str, str]]) -> str:
    """After the supervised child of a command died of a signal: the files its runs staged are
    removed (`Warehouse.give_back_dead_runs`); returns which publication is current."""
    from flows.storage.warehouse import Warehouse

    settings = _settings(args)
    wh = Warehouse(settings.warehouse, settings.storage)
    ids = [run_id for url, run_id in runs if url == wh.store.url]
    wh.give_back_dead_runs(ids, min(settings.lock_wait_s, 10.0), settings.retention_policy())
    pointer = wh.store.read_pointer() if wh.store.exists() else None
    state = (
        "the warehouse has no publication"
        if pointer is None
        else (f"publication {wh.version()} is current")
    )
    if not ids:  # it had not started a run (or the command runs none)
        return state
    if pointer is not None and any(pointer.endswith(f"-{run_id}") for run_id in ids):
        return f"its publication {wh.version()} was published before it stopped and is current"
    return f"nothing was published, {state}; the files it staged are removed"


def _served(args) -> str:
    """After a run failed on a resource: what the warehouse serves (a failed run removed what it
    staged before the error reached here)."""
    try:
        from flows.storage.warehouse import Warehouse

        settings = _settings(args)
        version = Warehouse(settings.warehouse, settings.storage).version()
    except Exception:  # noqa: BLE001 - the failure is the one to report
        return "the files it staged are removed"
    served = f"publication {version} is current" if version else "the warehouse has no publication"
    return f"the files it staged are removed, {served}"


def main(argv: list[str] | None = None) -> int:
    _ARGV[:] = sys.argv[1:] if argv is None else [str(a) for a in argv]
    args = build_parser().parse_args(_ARGV)
    # Run as the `duplirank` command (no argv given), `sql` also restricts its own process
    # (flows/tools/sandbox.py); a Python caller of main([...]), such as a test, keeps its rights.
    args.sandbox = argv is None
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)
    if args.sandbox and args.command in SUPERVISED:  # before Polars, DuckDB, Prefect load
        from flows import supervise

        code = supervise.supervise(args.command, lambda runs: _give_back(args, runs))
        if code is not None:
            return code  # this process watched the command's child; the child goes on
        from flows.storage import warehouse

        warehouse.RUN_STARTED.append(supervise.record_run)
    quiet = getattr(args, "quiet", False)
    if args.command not in NO_PROGRESS:
        from flows import progress

        progress.configure("quiet" if quiet else "auto")
    started = time.monotonic()
    prefix = f"duplirank {args.command}"
    try:
        try:
            code = args.func(args)
            sys.stdout.flush()  # the last of the output, while a closed pipe can be told apart
        except BrokenPipeError:
            if not _reader_gone():
                raise
            _discard_stdout()
            code = 0  # the reader stopped reading (`| head`): what was done is done
        if args.command in RUNS and not quiet:
            from flows import progress

            log = runlog.current()
            where = f" (log: {log})" if log else ""
            progress.note(f"done in {time.monotonic() - started:.1f} s{where}")
        return code
    except UserError as err:
        _error(f"{prefix}: error: {err}")
        return 2
    except (KeyboardInterrupt, Terminated) as stop:
        log = runlog.current()
        word = "interrupted" if isinstance(stop, KeyboardInterrupt) else "terminated"
        note = " (a run is published whole or not at all)" if args.command in RUNS else ""
        _error(f"{prefix}: {word}{note}" + (f" (log: {log})" if log else ""))
        return 130 if isinstance(stop, KeyboardInterrupt) else 143
    except BaseException as err:
        from flows.ingest.faults import is_panic, resource_reason

        log = runlog.current()
        if log is None or not (isinstance(err, Exception) or is_panic(err)):
            raise  # not a run: a programming error keeps its traceback
        runlog.logger.error("%s failed", prefix, exc_info=err)
        from flows import progress

        stage = progress.failed_stage()
        where = f" in {stage}" if stage else ""
        reason = resource_reason(err)
        if reason is not None:  # memory, disk, … ran out (a Rust panic included): one line
            _error(f"{prefix}: stopped{where}: {reason}; {_served(args)} (full log: {log})")
            return 2
        _error(f"{prefix}: failed{where}: {_first_line(err)} (full log: {log})")
        return 1
    finally:
        if "flows.prefect_server" in sys.modules:  # a temporary server no flow used
            sys.modules["flows.prefect_server"].stop_ahead()
        if "flows.progress" in sys.modules:  # back to the library default (tests call main)
            sys.modules["flows.progress"].configure("plain")
        runlog.release()
        _freeze_objects(args)  # the process exits next


if __name__ == "__main__":
    sys.exit(main())
