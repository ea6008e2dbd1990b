"""`duplirank sql` output and limits, in process: formats, nested values, --max-rows, --param,
--file and stdin, the timeout."""

from __future__ import annotations

import csv
import io
import json
import time

import polars as pl
import pytest

from flows import cli
from flows.errors import UserError
from flows.settings import SqlLimits
from flows.storage.warehouse import Warehouse
from flows.tools.query import Session, print_sql, run_sql


@pytest.fixture
def warehouse(tmp_path, monkeypatch):
    monkeypatch.setenv("DUPLIRANK_SQL__TEMP_DIRECTORY", str(tmp_path / "spill"))
    wh = Warehouse(tmp_path / "wh")
    tx = wh.transaction("r1")
    frame = pl.DataFrame(
        {
            "month": ["2026-11", "2026-11"],
            "player_id": ["P1", "P2"],
            "x": [1, 2],
            "l": [[1, 2], []],
            "s": [{"a": 1, "b": 'say "hi", ok'}, {"a": None, "b": None}],
            "f": [0.5, float("nan")],
        }
    )
    tx.put_months("gold", "t", frame, ["2026-11"])
    tx.commit()
    return wh.root


def sql(capsys, warehouse, *argv):
    code = cli.main(["sql", *map(str, argv), "--warehouse", str(warehouse)])
    out, err = capsys.readouterr()
    return code, out, err


def test_csv_prints_nested_values_as_json_in_quoted_cells(capsys, warehouse):
    code, out, err = sql(capsys, warehouse, "select * from t order by x", "--format", "csv")
    assert code == 0 and err == ""
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["month", "player_id", "x", "l", "s", "f"]
    assert rows[1] == ["2026-11", "P1", "1", "[1,2]", '{"a":1,"b":"say \\"hi\\", ok"}', "0.5"]
    assert rows[2][3:] == ["[]", '{"a":null,"b":null}', "nan"]
    assert json.loads(rows[1][4]) == {"a": 1, "b": 'say "hi", ok'}


def test_json_lines_and_json_array_are_valid_json(capsys, warehouse):
    code, out, _ = sql(capsys, warehouse, "select * from t order by x", "--format", "jsonl")
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(lines) == 2
    assert lines[0] == {
        "month": "2026-11",
        "player_id": "P1",
        "x": 1,
        "l": [1, 2],
        "s": {"a": 1, "b": 'say "hi", ok'},
        "f": 0.5,
    }
    assert lines[1]["f"] is None  # NaN is not JSON: null
    code, out, _ = sql(capsys, warehouse, "select * from t order by x", "--format", "json")
    assert code == 0 and json.loads(out) == lines
    code, out, _ = sql(capsys, warehouse, "select * from t where false", "--format", "json")
    assert code == 0 and json.loads(out) == []
    code, out, _ = sql(capsys, warehouse, "select * from t where false", "--format", "jsonl")
    assert code == 0 and out == ""


def test_table_shows_rows_and_says_how_many(capsys, warehouse):
    code, out, _ = sql(capsys, warehouse, "select player_id, l from t order by x")
    assert code == 0 and "P1" in out and "[1,2]" in out and out.endswith("(2 rows)\n")
    code, out, _ = sql(capsys, warehouse, "select * from range(1000)")
    assert code == 0 and out.endswith(
        "(first 200 rows; more with --max-rows N, or all with --format csv)\n"
    )
    assert "│ 199 │" in out.replace(" ", " ") or "199" in out
    code, out, _ = sql(capsys, warehouse, "select 1 as one")
    assert out.endswith("(1 row)\n")


def test_max_rows_stops_the_output_with_a_note(capsys, warehouse):
    query = "select * from range(250000) order by 1"
    code, out, err = sql(capsys, warehouse, query, "--format", "csv", "--max-rows", "120001")
    assert code == 0
    assert out.splitlines()[1:] == [str(i) for i in range(120001)]
    assert err == "duplirank sql: stopped after 120001 rows (--max-rows 120001)\n"
    code, out, err = sql(capsys, warehouse, "select * from range(5)", "--max-rows", "5")
    assert code == 0 and err == "" and out.endswith("(5 rows)\n")  # exactly the cap: not cut
    code, out, err = sql(capsys, warehouse, "select * from range(5)", "--max-rows", "3")
    assert out.endswith("(first 3 rows: --max-rows 3)\n")


def test_rows_keep_the_order_of_the_query_across_batches(capsys, warehouse):
    query = "select i from range(300000) t(i) order by md5(i::varchar)"
    code, out, _ = sql(capsys, warehouse, query, "--format", "csv")
    expected = run_sql(warehouse, query)["i"].to_list()
    assert code == 0 and [int(v) for v in out.splitlines()[1:]] == expected


def test_parameters_are_bound_not_formatted(capsys, warehouse):
    query = "select player_id from t where player_id = $p or x > $n order by x"
    code, out, _ = sql(capsys, warehouse, query, "-p", "p=P1", "--param", "n=5", "--format", "csv")
    assert code == 0 and out == "player_id\nP1\n"
    code, out, _ = sql(capsys, warehouse, query, "-p", "p=' or 1=1 --", "-p", "n=5")
    assert code == 0 and out.endswith("(0 rows)\n")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["select $p as v"], r"the query uses \$p: give --param p=…"),
        (["select 1", "-p", "p=1"], r"--param p: the query has no such \$name"),
        (["select $p as v", "-p", "p"], "is not NAME=VALUE"),
        (["select $p as v", "-p", "p=1", "-p", "p=2"], "--param p given twice"),
        ([], "give the query as one argument, or --file F"),
        (["select 1", "--file", "q.sql"], "give the query as one argument, or --file F"),
        (["--file", "/no/such.sql"], "cannot read --file /no/such.sql"),
        (["select 1", "--memory", "lots"], r"sql.memory_limit \(--memory\) 'lots': "),
    ],
)
def test_argument_errors_are_one_line(capsys, warehouse, argv, message):
    code, _, err = sql(capsys, warehouse, *argv)
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("duplirank sql: error: ")
    assert __import__("re").search(message, err), err


def test_a_long_query_from_a_file_or_stdin(capsys, warehouse, tmp_path, monkeypatch):
    ids = ", ".join(f"'P{i}'" for i in range(20_000))  # ~180 KB: more than an argument may hold
    query = f"select x * 20000 as total from t where player_id in ({ids}) order by x"
    path = tmp_path / "long.sql"
    path.write_text(query)
    code, out, _ = sql(capsys, warehouse, "--file", path, "--format", "csv")
    assert code == 0 and out == "total\n20000\n40000\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(query))
    code, out, _ = sql(capsys, warehouse, "-", "--format", "csv")
    assert code == 0 and out == "total\n20000\n40000\n"


def test_every_duckdb_type_prints_in_every_format(warehouse):
    limits = SqlLimits()
    for fmt in ("table", "csv", "json", "jsonl"):
        out = io.StringIO()
        printed = print_sql(
            warehouse, "select * from test_all_types()", fmt=fmt, limits=limits, out=out
        )
        assert printed.rows == 3 and out.getvalue()
        if fmt == "jsonl":
            assert len([json.loads(line) for line in out.getvalue().splitlines()]) == 3


def test_duplicate_column_names_are_made_unique_like_duckdb(capsys, warehouse):
    code, out, _ = sql(capsys, warehouse, "select 1 as a, 2 as a, 3 as A", "--format", "csv")
    assert code == 0 and out == "a,a_1,A_2\n1,2,3\n"


def test_explain_prints_the_plan(capsys, warehouse):
    code, out, _ = sql(capsys, warehouse, "explain analyze select count(*) from t")
    assert code == 0 and "Total Time" in out and "READ_PARQUET" in out.upper()


def test_a_query_stops_at_its_timeout(warehouse):
    started = time.monotonic()
    with pytest.raises(UserError, match=r"query stopped after 1 s \(--timeout"):
        run_sql(
            warehouse, "select count(*) from range(1e12::bigint)", limits=SqlLimits(timeout_s=1)
        )
    assert time.monotonic() - started < 5


def test_a_session_keeps_its_connection_across_queries_but_not_past_a_stopped_one(warehouse):
    with Session(warehouse, SqlLimits(timeout_s=1)) as session:
        assert session.run("select 1 as a")["a"].to_list() == [1]
        with pytest.raises(UserError, match="no_such_table"):
            session.run("select * from no_such_table")
        assert session.run("select 2 as a")["a"].to_list() == [2]  # an error keeps it open
        with pytest.raises(UserError, match=r"query stopped after 1 s"):
            session.run("select count(*) from range(1e12::bigint)")
        with pytest.raises(UserError, match="was stopped: open a new one"):
            session.run("select 3")
    with Session(warehouse) as fresh:
        assert fresh.run("select 4 as a")["a"].to_list() == [4]


def test_the_timeout_bounds_the_printing_too(capsys, warehouse):
    started = time.monotonic()
    code, out, err = sql(
        capsys, warehouse, "select * from range(1e12::bigint)", "--format", "csv", "--timeout", "1"
    )
    assert (
        code == 2
        and err
        == "duplirank sql: error: query stopped after 1 s (--timeout; setting sql.timeout_s)\n"
    )
    assert time.monotonic() - started < 6 and out.startswith("range\n0\n1\n")


def test_limits_come_from_the_settings(capsys, warehouse, monkeypatch):
    monkeypatch.setenv("DUPLIRANK_SQL__MAX_ROWS", "2")
    code, out, err = sql(capsys, warehouse, "select * from range(10)", "--format", "csv")
    assert out == "range\n0\n1\n" and "stopped after 2 rows" in err
    code, out, err = sql(
        capsys, warehouse, "select * from range(10)", "--format", "csv", "--max-rows", "0"
    )
    assert out.count("\n") == 11 and err == ""
    monkeypatch.setenv("DUPLIRANK_SQL__MEMORY_LIMIT", "1MB")
    code, _, err = sql(capsys, warehouse, "select count(distinct i) from range(10000000) t(i)")
    assert code == 2 and "Out of Memory" in err and err.count("\n") == 1


def test_negative_limits_are_refused_by_the_parser(capsys, warehouse):
    with pytest.raises(SystemExit):
        cli.main(["sql", "select 1", "--timeout", "-1", "--warehouse", str(warehouse)])
    assert "must be >= 0" in capsys.readouterr().err


def test_a_query_that_is_not_utf8_is_a_user_error(capsys, warehouse, tmp_path):
    path = tmp_path / "bad.sql"
    path.write_bytes(b"select 1 as \xff")
    code, _, err = sql(capsys, warehouse, "--file", path)
    assert code == 2 and err == f"duplirank sql: error: the query ({path}) is not UTF-8 text\n"
