"""The command line: one clear line and exit code 2 for user errors; formats of `sql`."""

from __future__ import annotations

import json

import polars as pl
import pytest

from flows import cli
from flows.warehouse import Warehouse


@pytest.fixture
def warehouse(tmp_path):
    wh = Warehouse(tmp_path / "wh")
    tx = wh.transaction("r1")
    tx.put_months(
        "gold", "t", pl.DataFrame({"month": ["2026-11"], "x": [1], "s": ["a,b"]}), ["2026-11"]
    )
    tx.commit()
    return wh.root


def run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_sql_csv_has_a_header_and_quotes_values(capsys, warehouse):
    code, out, _ = run(
        capsys, "sql", "select x, s from t", "--format", "csv", "--warehouse", warehouse
    )
    assert code == 0 and out == 'x,s\n1,"a,b"\n'


def test_sql_json(capsys, warehouse):
    code, out, _ = run(
        capsys, "sql", "select x from t", "--format", "json", "--warehouse", warehouse
    )
    assert code == 0 and json.loads(out) == [{"x": 1}]


def test_warehouse_from_the_environment(capsys, warehouse, monkeypatch):
    monkeypatch.setenv("DUPLIRANK_WAREHOUSE", str(warehouse))
    code, out, _ = run(capsys, "sql", "select x from t", "--format", "csv")
    assert code == 0 and out == "x\n1\n"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["sql", "select * from nope"], "nope"),
        (["sql", "delete from t"], "read-only"),
        (["ingest", "/no/such/file.jsonl"], "no such file or folder: /no/such/file.jsonl"),
        (["backfill", "--from", "2026-11", "--to", "2026-10"], "before --from"),
        (["nightly", "--landing", "/no/such/dir"], "landing folder /no/such/dir does not exist"),
    ],
)
def test_user_errors_are_one_line_with_exit_code_2(harness, capsys, warehouse, argv, message):
    code, _, err = run(capsys, *argv, "--warehouse", warehouse)
    assert code == 2
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_a_bad_month_is_refused_by_the_parser(capsys, warehouse):
    with pytest.raises(SystemExit) as exit_:
        cli.main(
            ["backfill", "--from", "2026-13", "--to", "2026-12", "--warehouse", str(warehouse)]
        )
    assert exit_.value.code == 2
    assert "'2026-13' is not a month YYYY-MM" in capsys.readouterr().err


def test_sql_on_a_missing_warehouse(capsys, tmp_path):
    code, _, err = run(capsys, "sql", "select 1", "--warehouse", tmp_path / "empty")
    assert code == 2 and "no published tables" in err


@pytest.mark.parametrize(
    "command", ["ingest", "nightly", "backfill", "sql", "generate", "chart", "score", "serve"]
)
def test_every_command_has_help_and_takes_a_warehouse(capsys, command):
    with pytest.raises(SystemExit) as exit_:
        cli.main([command, "--help"])
    assert exit_.value.code == 0
    assert "--warehouse" in capsys.readouterr().out
