"""`check_statement`: DuckDB's parser and syntax tree decide what runs, never the text."""

from __future__ import annotations

import duckdb
import pytest

from flows.errors import UserError
from flows.tools.query import READ_TABLE_FUNCTIONS, check_statement

# One statement of each type DuckDB's parser gives, and what it must say when refused.
BY_TYPE = {
    "INSERT": "insert into t values (1)",
    "UPDATE": "update t set x = 1",
    "CREATE": "create macro m() as 1",
    "DELETE": "delete from t",
    "PREPARE": "prepare p as select 1",
    "EXECUTE": "execute p",
    "ALTER": "alter view t rename to u",
    "TRANSACTION": "begin transaction",
    "COPY": "copy t to 'x.csv'",
    "DROP": "drop view t",
    "EXPORT": "export database 'out'",
    "PRAGMA": "pragma enable_profiling",
    "VACUUM": "vacuum",
    "CALL": "call checkpoint()",
    "SET": "set enable_external_access = true",
    "LOAD": "load httpfs",
    "ATTACH": "attach 'x.duckdb'",
    "DETACH": "detach duplirank",
    "MULTI": "pivot t on x using sum(y)",
    "COPY_DATABASE": "copy from database duplirank to other (schema)",
    "MERGE_INTO": "merge into t using u on (t.x = u.x) when matched then delete",
    "SELECT": "select 1",
    "EXPLAIN": "explain select 1",
}
# Types the parser never gives for SQL text (made by the Python or C API, or by an extension's
# parser, none of which `duplirank sql` loads); check_statement accepts SELECT and EXPLAIN only.
NOT_FROM_TEXT = {
    "INVALID",
    "ANALYZE",
    "VARIABLE_SET",
    "CREATE_FUNC",
    "RELATION",
    "EXTENSION",
    "LOGICAL_PLAN",
}


def test_every_statement_type_is_covered():
    members = set(duckdb.StatementType.__members__)
    assert members == set(BY_TYPE) | NOT_FROM_TEXT


@pytest.mark.parametrize("kind", sorted(set(BY_TYPE) - {"SELECT", "EXPLAIN"}))
def test_every_statement_type_but_select_and_explain_is_refused(kind):
    sql = BY_TYPE[kind]
    assert duckdb.extract_statements(sql)[0].type.name == kind  # the sample is of that type
    with pytest.raises(UserError, match="^read-only: ") as refused:
        check_statement(sql)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize(
    "sql, words",
    [
        ("install httpfs", "INSTALL is not allowed"),
        ("force install httpfs", "FORCE INSTALL is not allowed"),
        ("load httpfs", "LOAD is not allowed"),
        ("update extensions", "UPDATE EXTENSIONS is not allowed"),  # a type Python lacks
        ("  /* hi */ INSTALL httpfs", "INSTALL is not allowed"),
        ("create or replace view v as select 1", "CREATE OR REPLACE VIEW"),
        ("reset memory_limit", "RESET is not allowed"),
        ("set variable x = 1", "SET VARIABLE"),
        ("use memory", "USE is not allowed"),
        ("import database 'x'", "IMPORT DATABASE is not allowed"),
        ("checkpoint", "CHECKPOINT is not allowed"),
    ],
)
def test_refusals_name_the_statement_honestly(sql, words):
    with pytest.raises(UserError, match="^read-only: ") as refused:
        check_statement(sql)
    assert words in str(refused.value)


@pytest.mark.parametrize(
    "sql",
    [
        "select 1",
        "SELECT 1;",
        "  -- a comment\n select 1 /* ; copy (select 1) to 'x' */ ; -- trailing",
        "select 1 -- ; copy (select 1) to 'x'",
        "with a as (select 1 as x) select * from a",
        "with recursive r(i) as (select 1 union all select i + 1 from r where i < 3) from r",
        "with a as materialized (select 1) select * from a",
        "from t select x where x in (select 1) order by x",
        "select 1 union all select 2 except select 3",
        "values (1, 'a'), (2, 'b')",
        "table t",
        "show tables",
        "show all tables",
        "describe t",
        "summarize t",
        "pivot t on x in (1, 2) using sum(y)",
        "unpivot t on x into name n value v",
        "select * from range(3), unnest([1, 2]), generate_series(1, 2)",
        "select * from read_parquet('silver/t/x.parquet')",
        "select * from duckdb_columns() where table_name = 't'",
        "select * from pragma_table_info('t')",
        "select x, row_number() over (partition by y order by x) from t qualify x > 1",
        "select $month as m",
        "select ? as p",
        "explain select 1",
        "EXPLAIN ANALYZE select 1",
        "explain (format json) select 1",
        "explain (analyze, format 'json') select 1",
        "explain analyze (format json) select 1",
        "explain (select 1)",
        "explain analyze (select 1) union all (select 2)",
        "explain /* c */ analyze /* d */ select 1",
    ],
)
def test_reading_statements_pass(sql):
    statement = check_statement(sql)
    assert statement.type in (duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN)


@pytest.mark.parametrize(
    "sql, reason",
    [
        # DuckDB 2: a SELECT may hold a writing common table expression, anywhere
        ("with x as (copy (select 1) to 'x.csv') select * from x", "COPY inside a query"),
        ("with x as (insert into t values (1) returning *) select * from x", "INSERT inside"),
        ("with x as (update t set x = 0 returning *) select * from x", "UPDATE inside"),
        ("with x as (delete from t returning *) select * from x", "DELETE inside"),
        ("select (with y as (delete from t returning x) select max(x) from y)", "DELETE inside"),
        ("select * from (with y as (copy t to 'y') select * from y) z", "COPY inside"),
        ("select 1 where exists (with y as (copy t to 'y') select 1)", "COPY inside"),
        ("explain analyze with x as (copy (select 1) to 'x') select 1", "COPY inside"),
        ("explain analyze copy (select 42 as x) to 'x.csv'", "EXPLAIN of COPY"),
        ("explain (analyze) copy (select 1) to 'x.csv'", "EXPLAIN of COPY"),
        ("explain analyze insert into t values (1)", "EXPLAIN of INSERT"),
        ("explain (format json, analyze) copy t to 'x'", "EXPLAIN of COPY"),
        # table functions outside the allow-list
        ("select * from query('copy (select 1) to ''x''')", "query()"),
        ("select * from main.query('select 1')", "query()"),
        ("select * from json_execute_serialized_sql('{}')", "json_execute_serialized_sql()"),
        ("select * from enable_logging(storage = 'file')", "enable_logging()"),
        ("select * from checkpoint()", "checkpoint()"),
        ("select * from read_duckdb('x.duckdb')", "read_duckdb()"),
        ("select * from destroy_external_resource('query', 'x')", "destroy_external_resource"),
        ("select * from (select 1) a, query('select 1') b", "query()"),
        ("select write_log('x')", "write_log()"),
        ("select system.main.write_log('x')", "write_log()"),
    ],
)
def test_writes_hidden_inside_a_select_are_refused(sql, reason):
    with pytest.raises(UserError, match="^read-only: ") as refused:
        check_statement(sql)
    assert reason in str(refused.value) and "\n" not in str(refused.value)


@pytest.mark.parametrize(
    "sql, message",
    [
        ("select 1; select 2", r"exactly one SQL statement \(2 given\)"),
        ("select 1; copy (select 1) to 'x.csv'", "exactly one SQL statement"),
        ("select 1; -- hi\n attach 'x'", "exactly one SQL statement"),
        ("/* a */ select 1 /* b */; /* c */ install httpfs", "exactly one SQL statement"),
        ("", "no SQL statement given"),
        ("  ;  -- nothing", "no SQL statement given"),
        ("selec 1", "Parser Error"),
        ("select 'unterminated", "unterminated"),
        ("explain attach 'x.duckdb'", "syntax error"),
        ("explain (output 'x') select 1", "Unimplemented explain type: output"),
    ],
)
def test_one_statement_exactly(sql, message):
    with pytest.raises(UserError, match=message):
        check_statement(sql)


def test_the_table_function_allow_list_names_functions_of_this_duckdb():
    con = duckdb.connect()
    names = {
        name
        for (name,) in con.execute(
            "select function_name from duckdb_functions() "
            "where function_type in ('table', 'table_macro')"
        ).fetchall()
    }
    assert READ_TABLE_FUNCTIONS <= names, READ_TABLE_FUNCTIONS - names
    changing = {"query", "checkpoint", "force_checkpoint", "enable_logging", "enable_profiling"}
    assert not changing & READ_TABLE_FUNCTIONS


def _verdict(sql: str) -> str:
    try:
        check_statement(sql)
        return "ok"
    except UserError as err:
        return str(err).split(":")[0]


def test_the_parser_database_is_not_shared_across_threads_or_a_fork():
    """One in-memory database parses every statement of a process (a new one cost ~13 ms a
    statement): threads at once get their own cursors, and a forked child (DuckDB is not
    fork-safe) opens its own. (A bare `fork` and a pipe, not a `multiprocessing` pool, whose
    own queue lock can hang a child forked from a process with threads.)"""
    import json
    import os
    import select
    import signal
    from concurrent.futures import ThreadPoolExecutor

    statements = ["select 42", "with x as (copy (select 1) to 'x.csv') select 1"] * 20
    alone = [_verdict(s) for s in statements]
    assert alone[:2] == ["ok", "read-only"]
    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(_verdict, statements)) == alone
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its verdicts down the pipe, then out at once
        try:
            os.write(write_end, json.dumps([_verdict(s) for s in statements[:2]]).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    try:
        ready, _, _ = select.select([read_end], [], [], 60)
        if not ready:
            os.kill(pid, signal.SIGKILL)
        assert ready, "the forked child hung"
        assert json.loads(os.read(read_end, 4096)) == alone[:2]
    finally:
        os.close(read_end)
        os.waitpid(pid, 0)
