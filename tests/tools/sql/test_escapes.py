"""Every escape we know, through `duplirank sql`: refused (one line, exit code 2) or harmless,
and afterwards the warehouse is byte for byte unchanged, nothing new exists outside it (the
current folder and $TMPDIR are watched), and the spill folder is empty again."""

from __future__ import annotations

import polars as pl
import pytest

from flows import cli
from flows.errors import UserError
from flows.settings import SqlLimits
from flows.tools.query import run_sql

REFUSED, HARMLESS = "refused", "harmless"

ATTACKS = [
    # the issue's own: EXPLAIN ANALYZE runs the COPY
    ("explain analyze copy (select 42 as x) to '{wh}/x.csv'", REFUSED),
    ("explain (analyze, format json) copy (select 42 as x) to '{wh}/x.csv'", REFUSED),
    ("copy (select 42) to '{wh}/x.csv'", REFUSED),
    ("copy t to '{wh}/{pub}' (format parquet)", REFUSED),
    ("copy (select 1) to '/dev/stdout'", REFUSED),
    ("copy t from '{out}/secret.txt'", REFUSED),
    # a COPY or a write inside a SELECT (DuckDB 2), on a published file, in or out
    (
        "with x as (copy (select 'forged' as month, 9999 as x) to '{wh}/{pub}' "
        "(format parquet, use_tmp_file false)) select * from x",
        REFUSED,
    ),
    (
        "with x as (copy (select 1) to '{pub}' (format parquet, use_tmp_file false)) "
        "select * from x",
        REFUSED,
    ),
    ("select * from (with x as (copy (select 1) to '{out}/y.csv') select * from x)", REFUSED),
    ("explain analyze with x as (copy (select 1) to '{wh}/y.csv') select * from x", REFUSED),
    ("with x as (insert into t (x) values (1) returning *) select * from x", REFUSED),
    ("with x as (delete from t returning *) select count(*) from x", REFUSED),
    ("with x as (update t set x = 0 returning *) select count(*) from x", REFUSED),
    ("select * from query('copy (select 1) to ''{wh}/q.csv''')", REFUSED),
    (
        "select * from query('with x as (copy (select 1) to ''{wh}/{pub}'' "
        "(format parquet, use_tmp_file false)) select * from x')",
        REFUSED,
    ),
    (
        "select * from json_execute_serialized_sql(json_serialize_sql("
        "'with x as (copy (select 1) to ''{wh}/j.csv'') select * from x'))",
        REFUSED,
    ),
    ("select * from destroy_external_resource('query', 'select 1')", REFUSED),
    ("select * from enable_logging(storage = 'file', storage_path = '{wh}/log')", REFUSED),
    ("select * from enable_profiling()", REFUSED),
    ("select * from checkpoint()", REFUSED),
    ("select write_log('x')", REFUSED),
    # other databases, extensions
    ("attach '{wh}/evil.duckdb' as e", REFUSED),
    ("attach '{wh}/duplirank.duckdb' as w2", REFUSED),
    ("attach ':memory:' as m", REFUSED),
    ("detach duplirank", REFUSED),
    ("use memory", REFUSED),
    ("install httpfs", REFUSED),
    ("force install httpfs", REFUSED),
    ("load httpfs", REFUSED),
    ("load '{out}/evil.duckdb_extension'", REFUSED),
    ("update extensions", REFUSED),
    ("select * from read_duckdb('{wh}/duplirank.duckdb')", REFUSED),
    # settings, session, catalog
    ("set enable_external_access = true", REFUSED),
    ("set allowed_directories = ['/']", REFUSED),
    ("set temp_directory = '{wh}'", REFUSED),
    ("reset lock_configuration", REFUSED),
    ("set variable x = 1", REFUSED),
    ("pragma enable_profiling = 'json'", REFUSED),
    ("pragma profiling_output = '{wh}/p.json'", REFUSED),
    ("import database '{out}'", REFUSED),
    ("export database '{wh}/export'", REFUSED),
    ("call checkpoint()", REFUSED),
    ("checkpoint", REFUSED),
    ("force checkpoint", REFUSED),
    ("vacuum", REFUSED),
    ("analyze", REFUSED),
    ("begin transaction", REFUSED),
    ("prepare p as copy (select 1) to '{wh}/p.csv'", REFUSED),
    ("execute p", REFUSED),
    ("create macro m() as 1", REFUSED),
    ("create temp table z as select 1", REFUSED),
    ("create view v as select 1", REFUSED),
    ("create persistent secret s (type s3, key_id 'a', secret 'b')", REFUSED),
    ("drop view t", REFUSED),
    ("alter view t rename to u", REFUSED),
    ("comment on view t is 'forged'", REFUSED),
    ("insert into t (x) values (1)", REFUSED),
    ("update t set x = 0", REFUSED),
    ("delete from t", REFUSED),
    ("truncate t", REFUSED),
    ("merge into t using u on (t.x = u.y) when matched then delete", REFUSED),
    ("pivot t on x using sum(x)", REFUSED),
    # several statements, comments
    ("select 1; copy (select 1) to '{wh}/m.csv'", REFUSED),
    ("select 1; -- c\n copy (select 1) to '{wh}/m.csv'", REFUSED),
    ("/* a */ select 1 /* b */; /* c */ attach '{wh}/evil.duckdb'", REFUSED),
    ("select 1 as x -- ; copy (select 1) to '{wh}/m.csv'", HARMLESS),
    ("select 1 as x /* ; copy (select 1) to '{wh}/m.csv' */", HARMLESS),
    # reading outside the published files
    ("select * from read_text('/etc/passwd')", REFUSED),
    ("select * from read_text('{out}/secret.txt')", REFUSED),
    ("select * from read_blob('{out}/secret.txt')", REFUSED),
    ("select * from read_csv('/proc/self/environ')", REFUSED),
    ("select * from read_parquet('{out}/secret.parquet')", REFUSED),
    ("select * from glob('{out}/*')", REFUSED),
    ("select * from glob('/*')", REFUSED),
    ("select * from glob('{wh}/**')", REFUSED),
    ("select * from glob('**')", REFUSED),
    ("select * from read_text('{wh}/manifest.json')", REFUSED),
    ("select * from read_text('{wh}/.lock')", REFUSED),
    # replacement scans
    ("select * from '/etc/passwd'", REFUSED),
    ("select * from '{out}/secret.parquet'", REFUSED),
    ("select * from '{wh}/manifest.json'", REFUSED),
    ("from '{wh}/gold/t/*/*.parquet'", REFUSED),
    ("select * from secret_frame", REFUSED),  # a Python variable of the caller: not scanned
    # `..` and links inside the warehouse
    ("select * from read_text('{wh}/gold/../manifest.json')", REFUSED),
    ("select * from read_text('gold/../manifest.json')", REFUSED),
    ("select * from read_parquet('{wh}/gold/t/../../../outside/secret.parquet')", REFUSED),
    ("select * from read_parquet('{wh}/gold/t/evil.parquet')", REFUSED),
    ("select * from read_text('{wh}/gold/passwd.txt')", REFUSED),
    ("select * from read_parquet('gold/t/evil.parquet')", REFUSED),
    # harmless: the published tables and files, metadata, made-up rows
    ("select count(*) from t", HARMLESS),
    ("select * from read_parquet('{wh}/{pub}')", HARMLESS),
    ("select * from '{wh}/{pub}'", HARMLESS),
    ("select * from parquet_metadata('{wh}/{pub}')", HARMLESS),
    # DuckDB lets a connection read the database it attached (the views, which analysts may open
    # read-only anyway); writing to it is refused by DuckDB too ("belongs to an attached database")
    ("select size from read_blob('{wh}/duplirank.duckdb')", HARMLESS),
    ("select * from duckdb_settings()", HARMLESS),
    ("select current_setting('allowed_paths') as p", HARMLESS),
    ("select * from duckdb_views()", HARMLESS),
    ("explain analyze select * from t", HARMLESS),
    ("summarize t", HARMLESS),
    ("select sleep_ms(10) as s", HARMLESS),
    ("select * from range(3)", HARMLESS),
]


def _sql(attack: str, sample) -> str:
    return attack.format(wh=sample.root, out=sample.outside, pub=sample.published)


@pytest.mark.parametrize("attack, expected", ATTACKS, ids=[f"{n:03d}" for n in range(len(ATTACKS))])
def test_escape_is_refused_or_harmless(watch, capsys, attack, expected):
    secret_frame = pl.DataFrame({"secret": ["s3cr3t"]})  # noqa: F841  (a replacement scan target)
    code = cli.main(["sql", _sql(attack, watch), "--warehouse", str(watch.root), "--timeout", "20"])
    out, err = capsys.readouterr()
    if expected == REFUSED:
        assert code == 2, (out, err)
        assert err.startswith("duplirank sql: error: ") and err.count("\n") == 1, err
        assert "Traceback" not in err and "s3cr3t" not in out and "secret\n" not in out
    else:
        assert code == 0 and err == "", err
    assert "s3cr3t" not in out


def test_the_published_file_read_directly_is_the_table(watch):
    limits = SqlLimits(temp_directory=watch.spill)
    query = f"select x from read_parquet('{watch.root}/{watch.published}')"
    assert sorted(run_sql(watch.root, query, limits=limits)["x"].to_list()) == [2, 3]


@pytest.mark.parametrize("attack", [a for a, e in ATTACKS if e == REFUSED][:12])
def test_run_sql_refuses_the_same(watch, attack):
    with pytest.raises(UserError):
        run_sql(watch.root, _sql(attack, watch), limits=SqlLimits(temp_directory=watch.spill))
