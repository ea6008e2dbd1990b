"""The published database in analysts' own clients, from any folder, and after a move."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from zoneinfo import ZoneInfo

import duckdb
import polars as pl
import pytest

from flows.cli import main
from flows.storage.retention import verify
from flows.storage.warehouse import Warehouse
from flows.tools.query import run_sql

README = Path(__file__).resolve().parents[2] / "README.md"


def recipe(name: str) -> str:
    """The code of a README recipe, as written (between `<!-- recipe:NAME -->` and
    `<!-- recipe:end -->`, without its fences)."""
    text = README.read_text(encoding="utf-8")
    block = re.search(rf"<!-- recipe:{name} -->\n```\w*\n(.*?)```\n<!-- recipe:end -->", text, re.S)
    assert block, f"README has no recipe {name}"
    return block.group(1)


def elsewhere(tmp_path: Path, monkeypatch) -> Path:
    folder = tmp_path / "notebooks"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


def test_the_readme_python_recipe_answers_from_another_folder(states, tmp_path, monkeypatch):
    root = states[0]
    elsewhere(tmp_path, monkeypatch)
    scope: dict = {}
    exec(recipe("python").replace("<warehouse>", str(root)), scope)  # noqa: S102
    expected = run_sql(root, "select * from simultane_monthly order by month, rank_indice limit 5")
    assert scope["top"].equals(expected)
    assert [m for (m,) in scope["months"]] == sorted(
        run_sql(root, "select distinct month from simultane_monthly")["month"].to_list()
    )
    assert isinstance(scope["elo"], pl.DataFrame)
    assert (
        scope["elo"].height
        == run_sql(root, "select count(*) as n from ff_monthly_ranking")["n"].item()
    )
    scope["con"].close()


def _client_answers(root: Path) -> bool:
    try:
        con = duckdb.connect(str(root / "duplirank.duckdb"), read_only=True)
    except duckdb.Error:
        return False
    try:
        con.cursor().execute("select count(*) from simultane_deal_results").fetchall()
        return True
    except duckdb.Error:
        return False
    finally:
        con.close()


@pytest.mark.parametrize("follow_links", [False, True])
def test_a_moved_warehouse_answers_after_one_relink(
    states, tmp_path, monkeypatch, capsys, follow_links
):
    copy = tmp_path / "copy"
    shutil.copytree(states[0], copy, symlinks=not follow_links)
    assert main(["relink", "--warehouse", str(copy)]) == 0  # its views: the copy's files
    moved = tmp_path / "moved"
    copy.rename(moved)  # the folder the views were built for is gone
    capsys.readouterr()
    elsewhere(tmp_path, monkeypatch)
    assert not _client_answers(moved)
    query = "select * from simultane_monthly order by month, player_id"
    expected = run_sql(states[0], query)
    assert run_sql(moved, query).equals(expected)  # `duplirank sql`: at once, alone
    assert verify(Warehouse(moved)) != []  # the views database names another folder
    assert main(["relink", "--warehouse", str(moved)]) == 0
    assert "rebuilt _publications/" in capsys.readouterr().out
    assert _client_answers(moved)
    assert verify(Warehouse(moved)) == []
    con = duckdb.connect(str(moved / "duplirank.duckdb"), read_only=True)
    assert pl.read_database(query, connection=con).equals(expected)
    con.close()
    assert main(["relink", "--warehouse", str(moved)]) == 0  # a second one has nothing to do
    assert "rebuilt" not in capsys.readouterr().out


def test_sql_on_a_copy_reads_the_copys_files_while_the_original_stays(states, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(states[0], copy, symlinks=True)
    # the copy's views name the original's files; `sql` may read only the copy's own
    allowed = run_sql(copy, "select count(*) as n from simultane_deal_results")["n"].item()
    assert (
        allowed
        == run_sql(states[0], "select count(*) as n from simultane_deal_results")["n"].item()
    )
    listed = run_sql(copy, "select sql from duckdb_views() where view_name = 'simultane_monthly'")
    assert str(copy) in listed["sql"].item()


def test_sql_shows_timestamps_in_the_platform_time_zone(states, capsys, monkeypatch):
    root = states[0]
    query = "select tournament_start from simultane_tournament_results order by 1 limit 1"
    utc = run_sql(root, query)["tournament_start"].item()  # stored in UTC
    assert main(["sql", "--warehouse", str(root), "--format", "csv", query]) == 0
    shown = capsys.readouterr().out.splitlines()[1]
    paris = utc.astimezone(ZoneInfo("Europe/Paris"))
    assert shown == paris.strftime("%Y-%m-%d %H:%M:%S") + paris.strftime("%z")[:3]
    monkeypatch.setenv("DUPLIRANK_TIMEZONE", "UTC")
    assert main(["sql", "--warehouse", str(root), "--format", "csv", query]) == 0
    assert capsys.readouterr().out.splitlines()[1] == utc.strftime("%Y-%m-%d %H:%M:%S") + "+00"
