"""Analysts' SQL over the published tables (`duplirank sql`): read-only by construction, bounded.

Whatever an analyst runs cannot create, modify or delete a file, in or out of the warehouse.
Three layers, each enough on its own for what it covers:

1. `check_statement` reads the statement with DuckDB's own parser, never by matching its text:
   exactly one statement, of type SELECT or EXPLAIN [ANALYZE] of a SELECT; then its syntax tree
   (`json_serialize_sql`) must hold only query nodes that read. In DuckDB 2 a SELECT may hold
   `WITH x AS (COPY … TO …)` or an INSERT/UPDATE/DELETE, which its statement type does not show.
   Table functions are allowed by name (`READ_TABLE_FUNCTIONS`): `query()` runs SQL text this
   check cannot see, others change the engine's state (logging, checkpoints, external resources).
2. `connect_read_only` opens an in-memory DuckDB with the views database attached READ_ONLY; file
   access is limited to exactly the Parquet files the manifest publishes (`allowed_paths`, each
   as the views name it — relative to the warehouse, found through `file_search_path` — and
   absolute), every other external access is off, no extension is installed or autoloaded, no
   Python variable is scanned; then the configuration is locked. DuckDB spills to a private
   folder outside the warehouse.
3. The `duplirank sql` process (`flows/tools/sandbox.py`) drops with Landlock, before DuckDB starts,
   every right to create, write, truncate, rename or delete a file outside that spill folder:
   the kernel refuses what the two layers above might miss (Linux ≥ 5.13; elsewhere 1 and 2).

Bounded (`SqlLimits`, settings `sql.*`): a wall-clock timeout and Ctrl-C both `interrupt()` the
query, which runs in a worker thread; DuckDB's memory limit and spill size; a row cap. Rows
stream from DuckDB in Arrow batches and are printed batch by batch, never held whole.
"""

from __future__ import annotations

import io
import itertools
import json
import math
import os
import stat
import sys
import tempfile
import threading
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, TYPE_CHECKING

import duckdb

from flows.errors import UserError
from flows.settings import SqlLimits
from flows.storage import manifest as mf
from flows.storage.published import DATABASE
from flows.storage.warehouse import Warehouse
from transforms.sql_models import ProcessDatabase

if TYPE_CHECKING:  # `duplirank sql` streams DuckDB's Arrow batches: Polars is not loaded
    import polars as pl
    import pyarrow as pa

FORMATS = ("table", "csv", "json", "jsonl")
BATCH_ROWS = 100_000  # rows per Arrow batch read from DuckDB and printed at once
TABLE_ROWS = 200  # rows `--format table` shows when no --max-rows is given
TABLE_COLUMNS = 30  # columns `--format table` shows (the first and last halves)
TABLE_CELL = 60  # characters of a value `--format table` shows (then `…`)
STOP_WAIT_S = 5.0  # how long an interrupted query may take to stop before we give up on it
_PARSER = ProcessDatabase()  # parses statements only: `json_serialize_sql` runs nothing


# ---------------------------------------------------------------------------- the statement
READ_NODES = frozenset({"SELECT_NODE", "SET_OPERATION_NODE", "CTE_NODE", "RECURSIVE_CTE_NODE"})
READ_TABLE_FUNCTIONS = frozenset(
    {
        # data (file access is limited to the published Parquet files by the connection)
        "read_parquet", "parquet_scan", "read_csv", "read_csv_auto", "read_json",
        "read_json_auto", "read_json_objects", "read_json_objects_auto", "read_ndjson",
        "read_ndjson_auto", "read_ndjson_objects", "read_text", "read_blob", "glob", "sniff_csv",
        "parquet_metadata", "parquet_schema", "parquet_file_metadata", "parquet_kv_metadata",
        "parquet_bloom_probe", "query_table",
        # rows made up in the query
        "range", "generate_series", "unnest", "repeat", "repeat_row", "json_each", "json_tree",
        "summary", "histogram", "histogram_values", "test_all_types",
        # the catalog and the engine, read
        "duckdb_columns", "duckdb_constraints", "duckdb_databases", "duckdb_dependencies",
        "duckdb_extensions", "duckdb_functions", "duckdb_indexes", "duckdb_keywords",
        "duckdb_memory", "duckdb_optimizers", "duckdb_schemas", "duckdb_sequences",
        "duckdb_settings", "duckdb_tables", "duckdb_temporary_files", "duckdb_types",
        "duckdb_variables", "duckdb_views", "pragma_table_info", "pragma_storage_info",
        "pragma_show", "pragma_version", "pragma_platform", "pragma_database_size",
        "pragma_metadata_info", "pragma_collations", "pragma_user_agent", "pg_timezone_names",
        "icu_calendar_names",
    }
)  # fmt: skip
STATE_FUNCTIONS = frozenset({"write_log"})  # scalar functions with an effect beyond the query
EXPLAIN_OPTION_WORDS = frozenset(
    {"analyze", "analyse", "format", "text", "json", "html", "graphviz", "yaml", "mermaid"}
    | {"true", "false", "on", "off", "1", "0", ","}
)
HINTS = {  # first keyword of a refused statement -> what to do instead
    "install": "extensions cannot be installed or loaded",
    "load": "extensions cannot be installed or loaded",
    "force": "extensions cannot be installed or loaded",
    "update": "nothing can be changed",
    "set": "settings are fixed: use --timeout, --max-rows, --memory or the sql.* settings",
    "reset": "settings are fixed: use --timeout, --max-rows, --memory or the sql.* settings",
    "pragma": "read metadata with SELECT * FROM pragma_table_info('t') or duckdb_columns()",
    "call": "call a table function as SELECT * FROM f(…)",
    "attach": "only the warehouse's published tables can be read",
    "detach": "only the warehouse's published tables can be read",
    "use": "only the warehouse's published tables can be read",
    "copy": "nothing can be written: redirect the output instead (--format csv > file.csv)",
    "export": "nothing can be written: redirect the output instead (--format csv > file.csv)",
}
RULE = "`duplirank sql` runs one SELECT, or EXPLAIN [ANALYZE] of one"


def check_statement(query: str) -> duckdb.Statement:
    """The one statement of `query` if it only reads; else a UserError saying why, in one line."""
    try:
        statements = duckdb.extract_statements(query)
    except duckdb.Error as err:
        raise UserError(_one_line(err)) from None
    if not statements:
        raise UserError("no SQL statement given")
    if len(statements) > 1:
        raise UserError(f"give exactly one SQL statement ({len(statements)} given)")
    statement = statements[0]
    if _type(statement) == duckdb.StatementType.SELECT:
        inner = statement.query
    elif _type(statement) == duckdb.StatementType.EXPLAIN:
        inner = _explained(statement.query)
    else:
        raise UserError(_refusal(statement.query))
    reason = _not_reading(inner)
    if reason:
        raise UserError(f"read-only: {reason} is not allowed: {RULE}")
    return statement


def _explained(text: str) -> str:
    """The statement an EXPLAIN [ANALYZE] [(options)] shows, if it is one SELECT; else refused.

    The tokenizer (not the text) finds where the options end; the rest must parse on its own as
    exactly one SELECT. Options are kept to known words, so `EXPLAIN (…)` cannot hide a SELECT
    that is the options of another reading.
    """
    tokens = _tokens(text)
    i = 1
    if i < len(tokens) and tokens[i][1].lower() in ("analyze", "analyse"):
        i += 1
    if i < len(tokens) and tokens[i][1] == "(":
        close = next((j for j in range(i, len(tokens)) if tokens[j][1] == ")"), None)
        inside = tokens[i + 1 : close] if close is not None else None
        if inside is not None and all(
            kind == duckdb.token_type.string_const or word.lower() in EXPLAIN_OPTION_WORDS
            for _, word, kind in inside
        ):
            i = close + 1
    inner = text[tokens[i][0] :] if i < len(tokens) else ""
    try:
        statements = duckdb.extract_statements(inner)
    except (duckdb.Error, ValueError):
        statements = []
    if len(statements) != 1 or _type(statements[0]) != duckdb.StatementType.SELECT:
        raise UserError(f"read-only: EXPLAIN of {_words(inner) or 'this'} is not allowed: {RULE}")
    return inner


def _type(statement: duckdb.Statement) -> duckdb.StatementType | None:
    """The statement's type; None for one this duckdb's Python enum lacks (UPDATE EXTENSIONS)."""
    try:
        return statement.type
    except ValueError:
        return None


def _not_reading(sql: str) -> str | None:
    """What in the statement's syntax tree does more than read (None: it only reads).

    `json_serialize_sql` serialises SELECT statements only, with every nested query node: a
    writing common table expression shows as COPY_QUERY_NODE, INSERT_QUERY_NODE, …
    """
    con = _PARSER.cursor()  # (a new database for every statement: ~13 ms, four a nightly)
    try:
        tree = json.loads(con.execute("select json_serialize_sql($q)", {"q": sql}).fetchone()[0])
    finally:
        con.close()
    if tree.get("error"):
        return f"this statement ({_one_line(tree.get('error_message', ''))})"
    if len(tree.get("statements", [])) != 1:
        return "more than one statement"
    stack: list = [tree]
    while stack:  # a walk over the syntax tree (its nodes, not rows)
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        kind = node.get("type")
        if isinstance(kind, str) and kind.endswith("_NODE") and kind not in READ_NODES:
            return f"{kind.removesuffix('_NODE').removesuffix('_QUERY')} inside a query"
        if kind == "TABLE_FUNCTION":
            name = str(node.get("function", {}).get("function_name", "")).lower()
            if name not in READ_TABLE_FUNCTIONS:
                return f"the table function {name}()"
        name = node.get("function_name")
        if isinstance(name, str) and name.lower() in STATE_FUNCTIONS:
            return f"{name.lower()}()"
        stack.extend(node.values())
    return None


def _tokens(text: str) -> list[tuple[int, str, object]]:
    """(offset, word, kind) of each token but comments; a word is the token's own text."""
    raw = duckdb.tokenize(text)
    out = []
    for n, (offset, kind) in enumerate(raw):
        if kind == duckdb.token_type.comment:
            continue
        end = raw[n + 1][0] if n + 1 < len(raw) else len(text)
        piece = text[offset:end].strip()
        if kind != duckdb.token_type.string_const:
            piece = piece.split()[0] if piece else ""
        out.append((offset, piece, kind))
    return out


def _words(text: str) -> str:
    """The leading keywords of a statement (`CREATE MACRO`, `FORCE INSTALL`), for messages."""
    words = []
    for _, word, kind in _tokens(text)[:4]:
        if kind != duckdb.token_type.keyword:
            break
        words.append(word.upper())
    return " ".join(words)


def _refusal(text: str) -> str:
    words = _words(text) or "this statement"
    hint = HINTS.get(words.split()[0].lower(), "") if words != "this statement" else ""
    return f"read-only: {words} is not allowed: {RULE}" + (f" ({hint})" if hint else "")


# ---------------------------------------------------------------------------- the connection
_CONNECTIONS = itertools.count()


def connect_read_only(
    warehouse: Path | str | Warehouse,
    limits: SqlLimits | None = None,
    timezone: str | None = None,
) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection that reads the published tables of `warehouse` and nothing else
    (its current publication, or the one a pinned `Warehouse` names: `sql --as-of`).

    The views name their files by absolute path; a database built for another place (a copied
    or moved warehouse not yet relinked), or whose bytes are not those recorded when it was
    built, is replaced by the same views built for this one, in memory. An older database
    names them relative to the warehouse: `file_search_path` is its root. On object storage
    (`s3://…`) the publication's views database is fetched to a local cache (a publication
    never changes) and the s3fs file system is registered on the connection; `allowed_paths`
    holds the full URIs of the listed files. `timezone`: the session's time zone (timestamps
    are stored in UTC and shown in it; `duplirank sql` gives the platform's).
    """
    limits = limits or SqlLimits()
    wh = warehouse if isinstance(warehouse, Warehouse) else Warehouse(warehouse)
    store, root = wh.store, wh.root
    publication = wh.publication()  # a damaged or missing publication: one line naming recover
    if publication is None or not store.has(f"{publication}/{DATABASE}"):
        raise UserError(f"no published tables in {store.url} (run `duplirank nightly` first)")
    # every later read (manifest, files, views) is of this publication, even if a run swaps
    # the pointer meanwhile
    wh = wh.at(publication)
    database = store.fetch(f"{publication}/{DATABASE}")
    files = published_files(wh)
    spill = spill_folder(limits, root) / f"{os.getpid()}-{next(_CONNECTIONS)}"
    con = duckdb.connect()  # in memory: an instance of its own, with settings of its own
    try:
        for name, value, setting in (
            ("memory_limit", limits.memory_limit, "sql.memory_limit (--memory)"),
            ("max_temp_directory_size", limits.max_temp_size, "sql.max_temp_size"),
        ):
            try:
                con.execute(f"set {name} = $value", {"value": value})
            except duckdb.Error as err:
                raise UserError(f"{setting} {value!r}: {_one_line(err)}") from None
        store.prepare_duckdb(con)  # file_search_path, or the s3fs file system
        for name, value in (
            ("temp_directory", str(spill)),  # created by DuckDB when it spills, removed on close
            ("autoinstall_known_extensions", False),
            ("autoload_known_extensions", False),
            ("allow_community_extensions", False),
            ("allow_persistent_secrets", False),
            ("python_enable_replacements", False),
        ):
            con.execute(f"set {name} = $value", {"value": value})
        if timezone is not None:
            con.execute("set TimeZone = $zone", {"zone": timezone})
        _attach_views(con, wh, publication, database, files)
        con.execute("use duplirank")
        allowed = [path for rel in files for path in store.readable_paths(rel)]
        con.execute("set allowed_paths = $paths", {"paths": allowed})
        con.execute("set enable_external_access = false")
        con.execute("set lock_configuration = true")
    except duckdb.Error as err:
        con.close()
        raise UserError(_one_line(err)) from None
    except BaseException:
        con.close()
        raise
    return con


def _attach_views(
    con: duckdb.DuckDBPyConnection, wh: Warehouse, publication: str, database: Path, files
) -> None:
    """Attach the publication's views database as `duplirank` if its bytes are those recorded
    when it was built and its views name this warehouse's files; else attach in its place an
    in-memory database holding the publication's views built for this warehouse (a damaged
    or replaced database is never served; `verify` reports it, the next run rebuilds it)."""
    from flows.storage.served import database_intact
    from flows.storage.views import comment_statements, database_root, view_statements

    if database_intact(wh, publication, database) is not False:
        con.execute("attach $path as duplirank (read_only)", {"path": str(database)})
        built_for = database_root(con, "duplirank")
        if built_for is None:  # relative paths (an older duplirank): the current folder must
            if wh.root is not None:  # not shadow the warehouse
                _refuse_shadowing(wh.root, files)
            return
        if built_for == wh.store.url:
            return
        con.execute("detach duplirank")
    con.execute("attach ':memory:' as duplirank")
    con.execute("use duplirank")
    statements = view_statements(wh.manifest(), wh.store.view_path, wh.store.url)
    con.execute(";\n".join(statements))
    comments = comment_statements(con)
    if comments:
        con.execute(";\n".join(comments))
    con.execute("use memory")


def published_files(wh: Warehouse) -> list[str]:
    """The files the current publication lists, relative to the warehouse: Parquet files in it.

    The manifest is validated when read (checksum, shape, every path inside a data layer);
    still, a listed path that is absolute, climbs out with `..`, is not Parquet, is missing, or
    is a link resolving outside the warehouse is left out: a view naming it fails with a
    permission error instead of reading it.
    """
    root = wh.root
    listed = mf.files(wh.manifest())
    files = []
    for rel in sorted(r for r in listed if isinstance(r, str)):
        path = PurePosixPath(rel)
        if path.is_absolute() or ".." in path.parts or path.suffix != ".parquet":
            continue
        if root is None:  # object storage: no links, and a missing object fails to read
            files.append(str(path))
            continue
        real = (root / rel).resolve()
        if real.is_relative_to(root) and real.is_file():
            files.append(str(path))
    return files


def _refuse_shadowing(root: Path, files: list[str]) -> None:
    """DuckDB tries a relative path in the current folder before `file_search_path`: from a
    folder holding the same relative files (a copy of the warehouse), the views would silently
    read those. Refused with a clear line instead."""
    try:
        cwd = Path.cwd().resolve()
    except OSError:
        return
    if cwd == root:
        return
    tops = {PurePosixPath(rel).parts[0] for rel in files}
    if not any((cwd / top).is_dir() for top in tops):
        return
    for rel in files:
        if (cwd / rel).exists():
            raise UserError(
                f"the current folder {cwd} holds {rel}, which DuckDB would read in place of the "
                f"warehouse's: run from another folder (or from {root})"
            )


def spill_folder(limits: SqlLimits, root: Path | str | None) -> Path:
    """The folder DuckDB spills to, made private and never inside the warehouse.

    `sql.temp_directory`, or `$TMPDIR/duplirank-sql-<uid>` (0700, owned by us: like tmux's
    socket folder, it stays; each connection's files go in a sub-folder DuckDB removes).
    """
    root = Path(root).resolve() if root is not None and "://" not in str(root) else None
    if limits.temp_directory is not None:
        folder = Path(limits.temp_directory).expanduser().absolute()
    else:
        folder = Path(tempfile.gettempdir()) / f"duplirank-sql-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(folder)
    except OSError as err:
        raise UserError(f"cannot make the spill folder {folder}: {err.strerror}") from None
    if limits.temp_directory is None and (
        not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077
    ):
        raise UserError(
            f"{folder} is not a private folder of this user (mode 0700): remove it, or set "
            "sql.temp_directory"
        )
    if root is not None and folder.resolve().is_relative_to(root):
        raise UserError(
            f"the spill folder {folder} is inside the warehouse: set sql.temp_directory"
        )
    return folder.resolve()


# ---------------------------------------------------------------------------- running
@dataclass(frozen=True)
class Printed:
    """What `print_sql` wrote: its rows, and whether --max-rows (or the table's size) cut it."""

    rows: int
    truncated: bool


def run_sql(
    warehouse: Path | str | Warehouse,
    query: str,
    params: dict | list | None = None,
    limits: SqlLimits | None = None,
) -> pl.DataFrame:
    """All rows of one read-only query as a DataFrame (in-process callers: reports, tests).

    Same checks, connection and timeout as `duplirank sql`; the rows are held (max_rows unused).
    """
    with Session(warehouse, limits) as session:
        return session.run(query, params)


class QueryStopped(UserError):
    """A query stopped at its deadline (`sql.timeout_s`)."""


class Session:
    """Read-only queries on one connection (`connect_read_only`: opening it costs more than
    a small query), each checked and bounded as `run_sql`'s; closed at the end of a `with`."""

    def __init__(self, warehouse: Path | str | Warehouse, limits: SqlLimits | None = None):
        self.limits = limits or SqlLimits()
        self.con = connect_read_only(warehouse, self.limits)

    def run(self, query: str, params: dict | list | None = None) -> pl.DataFrame:
        if self.con is None:
            raise UserError("a query of this session was stopped: open a new one")
        statement = check_statement(query)
        con = self.con
        work = lambda: _relation(con, statement, params).pl()  # noqa: E731
        try:
            return _bounded(con, self.limits.timeout_s, work, close=False)
        except (QueryStopped, KeyboardInterrupt):
            self.con = None  # closed by `_bounded`, or still used by the stopped query
            raise

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc) -> None:
        if self.con is not None:
            self.con.close()


def print_sql(
    warehouse: Path | str | Warehouse,
    query: str,
    params: dict | list | None = None,
    fmt: str = "table",
    limits: SqlLimits | None = None,
    out: IO[str] | None = None,
    timezone: str | None = None,
) -> Printed:
    """Run one read-only query and write its rows to `out` (stdout) batch by batch.

    `fmt`: `table` (at most --max-rows or 200 rows, aligned), `csv` (a header; nested values as
    JSON in the cell), `json` (one array, a row per line) or `jsonl` (JSON Lines).
    A KeyboardInterrupt of the calling (main) thread interrupts the query, then propagates.
    `timezone`: the one timestamps are shown in (default: UTC).
    """
    if fmt not in FORMATS:
        raise UserError(f"unknown format {fmt!r} (one of {', '.join(FORMATS)})")
    limits = limits or SqlLimits()
    statement = check_statement(query)
    con = connect_read_only(warehouse, limits, timezone)
    out = out or sys.stdout
    return _bounded(con, limits.timeout_s, lambda: _print(con, statement, params, fmt, limits, out))


def _relation(
    con: duckdb.DuckDBPyConnection, statement: duckdb.Statement, params
) -> duckdb.DuckDBPyRelation:
    """The checked statement on the connection: a SELECT binds, an EXPLAIN runs now."""
    if isinstance(params, dict):
        _check_parameters(statement, params)
    relation = con.sql(statement, params=params or None)
    if relation is None:  # pragma: no cover - a SELECT or an EXPLAIN always returns rows
        raise UserError("the statement returned no rows")
    return relation


def _check_parameters(statement: duckdb.Statement, params: dict) -> None:
    wanted = set(statement.named_parameters)
    missing = sorted(wanted - set(params))
    if missing:
        raise UserError(
            "the query uses "
            + ", ".join(f"${n}" for n in missing)
            + ": give "
            + " ".join(f"--param {n}=…" for n in missing)
        )
    unused = sorted(set(params) - wanted)
    if unused:
        raise UserError("--param " + ", ".join(unused) + ": the query has no such $name")


def _bounded(con: duckdb.DuckDBPyConnection, timeout_s: float, work: Callable, close: bool = True):
    """Run `work()` in a worker thread; interrupt the connection at the deadline, or when the
    calling thread gets KeyboardInterrupt (Ctrl-C). The connection is closed at the end
    (`close`; else only when the query was stopped).

    DuckDB runs a query without giving Python's main thread a chance to handle Ctrl-C; here the
    main thread only waits (on an Event: an interrupted `Thread.join` can leave the thread
    marked finished while it runs), so the signal arrives and `con.interrupt()` stops the query.
    """
    box: dict = {}
    done = threading.Event()

    def target():
        try:
            box["value"] = work()
        except BaseException as err:  # handed to the calling thread
            box["error"] = err
        finally:
            done.set()

    worker = threading.Thread(target=target, name="duplirank-sql", daemon=True)
    deadline = time.monotonic() + timeout_s if timeout_s > 0 else math.inf
    finished = False
    try:
        worker.start()
        while not (finished := done.wait(min(0.1, max(deadline - time.monotonic(), 0.0)))):
            if time.monotonic() >= deadline:
                _stop(con, done)
                raise QueryStopped(
                    f"query stopped after {timeout_s:g} s (--timeout; setting sql.timeout_s)"
                )
    except KeyboardInterrupt:
        _stop(con, done)
        raise
    finally:
        if done.is_set() and (close or not finished):
            con.close()  # if the worker still uses it: left to the end of the process
    if "error" in box:
        raise _user_error(box["error"])
    return box["value"]


def _stop(con: duckdb.DuckDBPyConnection, done: threading.Event) -> None:
    con.interrupt()
    done.wait(STOP_WAIT_S)


def _user_error(err: BaseException) -> BaseException:
    """DuckDB's errors (pyarrow's while streaming) as one line; other errors as they are."""
    message = str(err)
    if "Cannot access" in message and "disabled by configuration" in message:
        path = message.split('"')[1] if message.count('"') >= 2 else "a file"
        return UserError(
            f'cannot read "{path}": `duplirank sql` reads only the published tables of the '
            "warehouse"
        )
    arrow = sys.modules.get("pyarrow")  # loaded by the stream that may have raised
    arrow_error = arrow.ArrowException if arrow is not None else duckdb.Error
    if isinstance(err, duckdb.Error | arrow_error) or (
        isinstance(err, OSError) and not isinstance(err, BrokenPipeError)
    ):
        return UserError(_one_line(err))
    return err


def _one_line(err: object) -> str:
    return " ".join(str(err).split())[:500]


# ---------------------------------------------------------------------------- printing
NESTED = frozenset({"list", "struct", "map", "array", "union", "tuple"})


def _print(con, statement, params, fmt: str, limits: SqlLimits, out: IO[str]) -> Printed:
    relation = _relation(con, statement, params)
    names = _unique(relation.columns)
    if fmt == "table" and statement.type == duckdb.StatementType.EXPLAIN:
        plans = relation.project("#2").fetchall()
        _write(out, "".join(f"{plan}\n" for (plan,) in plans))
        return Printed(len(plans), False)
    shaped = relation.project(_shape(names, relation.types, fmt))
    cap = limits.max_rows or (TABLE_ROWS if fmt == "table" else 0)
    if fmt == "table":  # the rows it shows, as Python values (no Arrow stream to set up)
        shown = shaped.limit(cap + 1).fetchall()
        truncated = len(shown) > cap
        rows = min(len(shown), cap)
        if not _write(out, _table_page(names, shown[:cap], rows, truncated, limits.max_rows)):
            return Printed(0, False)
        return Printed(rows, truncated)
    sink = {"csv": _Csv, "json": _Json, "jsonl": _Json}[fmt](names, fmt, out)
    rows, truncated = 0, False
    reader = shaped.to_arrow_reader(BATCH_ROWS)
    try:
        for batch in reader:
            if cap and rows + batch.num_rows > cap:  # there are more rows than the cap
                truncated = True
                batch = batch.slice(0, cap - rows)
            if batch.num_rows and not sink.write(batch):
                return Printed(rows, False)  # the reader of our output went away (`| head`)
            rows += batch.num_rows
            if truncated:
                break
    finally:
        reader.close()
    sink.close(rows, truncated, limits.max_rows)
    return Printed(rows, truncated)


def _shape(names: list[str], types, fmt: str) -> str:
    """The projection that makes rows printable, in DuckDB (which knows every type it has):
    text for the table (DuckDB's own text; nested values as JSON), one CSV line per row for CSV
    (fields quoted when needed), one JSON object per row for JSON (NaN and infinities, which
    JSON lacks, as null). Columns by position (`#3`)."""
    quoted = [_quote(n) for n in names]
    if fmt in ("json", "jsonl"):
        fields = []
        for i, (name, kind) in enumerate(zip(quoted, types, strict=True), 1):
            value = (
                f"case when isfinite(#{i}) then #{i} end"
                if kind.id in ("float", "double")
                else f"#{i}"
            )
            fields.append(f"{name} := {value}")
        return f"to_json(struct_pack({', '.join(fields)}))::varchar as json"
    texts = [
        f"to_json(#{i})::varchar" if kind.id in NESTED else f"#{i}::varchar"
        for i, kind in enumerate(types, 1)
    ]
    if fmt == "csv":
        cells = [
            f"coalesce(case when regexp_matches({text}, '^$|[\",\\r\\n]') then "
            f"'\"' || replace({text}, '\"', '\"\"') || '\"' else {text} end, '')"
            for text in texts
        ]
        return " || ',' || ".join(cells) + " as csv"
    return ", ".join(f"{text} as {name}" for text, name in zip(texts, quoted, strict=True))


def _unique(names: list[str]) -> list[str]:
    """Column names made unique as DuckDB does (`a`, `a_1`, `A_2`: case does not count)."""
    seen: set[str] = set()
    out = []
    for name in names:
        candidate, k = name, 0
        while candidate.lower() in seen:
            k += 1
            candidate = f"{name}_{k}"
        seen.add(candidate.lower())
        out.append(candidate)
    return out


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _write(out: IO[str], text: str) -> bool:
    """Write and flush; False when the reader of our output has gone (a closed pipe)."""
    try:
        out.write(text)
        out.flush()
    except BrokenPipeError:
        try:  # nothing more can be written; keep the interpreter's final flush quiet
            os.dup2(os.open(os.devnull, os.O_WRONLY), out.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return False
    return True


def _csv_field(text: str) -> str:
    """A CSV field as `_shape` quotes them: when empty, or holding `"`, `,` or a line break."""
    if text == "" or any(c in text for c in '",\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


class _Csv:
    """A header line, then the rows' CSV lines as DuckDB made them (`_shape`)."""

    def __init__(self, names: list[str], fmt: str, out: IO[str]):
        self.out = out
        self.open = _write(out, ",".join(_csv_field(n) for n in names) + "\n")

    def write(self, batch: pa.RecordBatch) -> bool:
        return self.open and _write(self.out, "\n".join(batch.column(0).to_pylist()) + "\n")

    def close(self, rows: int, truncated: bool, max_rows: int) -> None:
        pass


class _Json:
    """`jsonl`: one object per line; `json`: the same lines as one array (`[`, `,`, `]`)."""

    def __init__(self, names: list[str], fmt: str, out: IO[str]):
        self.out, self.array, self.rows = out, fmt == "json", 0

    def write(self, batch: pa.RecordBatch) -> bool:
        lines = (",\n" if self.array else "\n").join(batch.column(0).to_pylist())
        if self.array:
            text = ("[\n" if self.rows == 0 else ",\n") + lines
        else:
            text = lines + "\n"
        self.rows += batch.num_rows
        return _write(self.out, text)

    def close(self, rows: int, truncated: bool, max_rows: int) -> None:
        if self.array:
            _write(self.out, "\n]\n" if self.rows else "[]\n")


def _table_page(
    names: list[str], shown: list[tuple], rows: int, truncated: bool, max_rows: int
) -> str:
    """The first rows in a box (`table_text`), then a line saying how many and why no more."""
    if truncated and max_rows:
        footer = f"(first {rows} rows: --max-rows {max_rows})"
    elif truncated:
        footer = f"(first {rows} rows; more with --max-rows N, or all with --format csv)"
    else:
        footer = f"({rows} row{'' if rows == 1 else 's'})"
    return f"{table_text(names, shown)}\n{footer}\n"


def table_text(names: list[str], rows: list[tuple]) -> str:
    """Rows of text values (None: `null`) in a box, one line per row: at most TABLE_COLUMNS
    columns (the first and last halves, `…` between) and TABLE_CELL characters a value."""
    shown: list[int | None] = list(range(len(names)))
    if len(names) > TABLE_COLUMNS:
        half = TABLE_COLUMNS // 2
        shown = [*range(half), None, *range(len(names) - half, len(names))]
    header = [_cell(names[i]) if i is not None else "…" for i in shown]
    body = [[_cell(row[i]) if i is not None else "…" for i in shown] for row in rows]
    widths = [max(_width(t) for t in column) for column in zip(header, *body, strict=True)]

    def line(left: str, fill: str, middle: str, right: str) -> str:
        return left + middle.join(fill * (w + 2) for w in widths) + right

    def cells(texts: list[str]) -> str:
        padded = (f" {t}{' ' * (w - _width(t))} " for t, w in zip(texts, widths, strict=True))
        return "│" + "┆".join(padded) + "│"

    return "\n".join(
        [line("┌", "─", "┬", "┐"), cells(header), line("╞", "═", "╪", "╡")]
        + [cells(texts) for texts in body]
        + [line("└", "─", "┴", "┘")]
    )


def _cell(value: str | None) -> str:
    if value is None:
        return "null"
    text = value.replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t")
    return text if len(text) <= TABLE_CELL else text[:TABLE_CELL] + "…"


def _width(text: str) -> int:
    """Columns `text` takes on a terminal: wide (East Asian) characters two, combining none."""
    if text.isascii():
        return len(text)
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text
    )


def format_frame(frame: pl.DataFrame, fmt: str) -> str:
    """An in-memory frame as text (the reports of `duplirank nightly`)."""
    import polars as pl

    if fmt == "csv":
        return frame.write_csv()
    if fmt == "json":
        buffer = io.StringIO()
        frame.write_json(buffer)
        return buffer.getvalue() + "\n"
    with pl.Config(
        tbl_rows=200,
        tbl_cols=30,
        fmt_str_lengths=60,
        tbl_width_chars=200,
        tbl_hide_dataframe_shape=True,
        tbl_hide_column_data_types=True,
    ):
        return str(frame) + f"\n({frame.height} rows)\n"
