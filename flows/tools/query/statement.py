"""The statement guard of `duplirank sql`: exactly one SELECT, or EXPLAIN [ANALYZE] of one,
read with DuckDB's own parser and checked node by node (layer 1 of `flows.tools.query`)."""

from __future__ import annotations

import json

import duckdb

from flows.errors import UserError
from transforms.sql_models import ProcessDatabase

_PARSER = ProcessDatabase()  # parses statements only: `json_serialize_sql` runs nothing


READ_NODES = frozenset({"SELECT_NODE", "SET_OPERATION_NODE", "CTE_NODE", "RECURSIVE_CTE_NODE"})
READ_TABLE_FUNCTIONS = frozenset(
    {
        # data (file access is limited to the published Parquet files by the connection)
        "read_parquet",
        "parquet_scan",
        "read_csv",
        "read_csv_auto",
        "read_json",
        "read_json_auto",
        "read_json_objects",
        "read_json_objects_auto",
        "read_ndjson",
        "read_ndjson_auto",
        "read_ndjson_objects",
        "read_text",
        "read_blob",
        "glob",
        "sniff_csv",
        "parquet_metadata",
        "parquet_schema",
        "parquet_file_metadata",
        "parquet_kv_metadata",
        "parquet_bloom_probe",
        "query_table",
        # rows made up in the query
        "range",
        "generate_series",
        "unnest",
        "repeat",
        "repeat_row",
        "json_each",
        "json_tree",
        "summary",
        "histogram",
        "histogram_values",
        "test_all_types",
        # the catalog and the engine, read
        "duckdb_columns",
        "duckdb_constraints",
        "duckdb_databases",
        "duckdb_dependencies",
        "duckdb_extensions",
        "duckdb_functions",
        "duckdb_indexes",
        "duckdb_keywords",
        "duckdb_memory",
        "duckdb_optimizers",
        "duckdb_schemas",
        "duckdb_sequences",
        "duckdb_settings",
        "duckdb_tables",
        "duckdb_temporary_files",
        "duckdb_types",
        "duckdb_variables",
        "duckdb_views",
        "pragma_table_info",
        "pragma_storage_info",
        "pragma_show",
        "pragma_version",
        "pragma_platform",
        "pragma_database_size",
        "pragma_metadata_info",
        "pragma_collations",
        "pragma_user_agent",
        "pg_timezone_names",
        "icu_calendar_names",
    }
)
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
        raise UserError(one_line(err)) from None
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
        return f"this statement ({one_line(tree.get('error_message', ''))})"
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


def bind(
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


def one_line(err: object) -> str:
    return " ".join(str(err).split())[:500]
