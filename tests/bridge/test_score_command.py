"""`duplirank score FILE`: the text printed for JSON Lines and PBN files, and user errors."""

from __future__ import annotations

import io
import json

import polars as pl
import pytest

from flows.tools.score import score_file
from tests_support import ORACLES

PCH = ORACLES / "kops_PCH1003_matchpoints" / "results.jsonl"
SM_PBN = ORACLES / "kops_SM0807_cavendish_avg" / "sm0807.pbn"


def test_standings_of_a_json_lines_file_in_its_own_method():
    text = score_file(PCH, None, [], False, "table")
    assert text.startswith("PCH1003 2011-10-03 — matchpoints")
    first = text.splitlines()[3]
    assert "| 1 " in first and "| 30 " in first and "61.62" in first


def test_csv_standings_and_an_option_override():
    frame = pl.read_csv(io.StringIO(score_file(PCH, None, [], False, "csv")))
    assert frame.columns[:3] == ["event_id", "rank", "pair"]
    assert frame.filter(pl.col("pair") == 30)["pct"].item() == 61.62
    traditional = pl.read_csv(io.StringIO(score_file(PCH, None, ["neuberg=false"], False, "csv")))
    assert traditional.filter(pl.col("pair") == 30)["pct"].item() == 61.63


def test_boards_of_a_pbn_file_with_a_method():
    rows = json.loads(score_file(SM_PBN, "cavendish_avg", [], True, "json"))
    assert len(rows) == 2 * 108
    first = rows[0]
    assert (first["board"], first["pair"], first["direction"], first["score_ns"]) == (
        1,
        "Para-1",
        "NS",
        -460,
    )
    assert {r["imp"] for r in rows if r["board"] == 1} == {0.0}


def test_quarantined_lines_are_summarised(tmp_path):
    path = tmp_path / "club.jsonl"
    lines = PCH.read_text(encoding="utf-8").splitlines()
    path.write_text(
        "\n".join([*lines, '{"type": "bridge.result", "event_id":', '{"type": "bridge.result"}'])
        + "\n"
    )
    text = score_file(path, None, [], False, "table")
    assert "quarantined 2 of 575 lines: line 574: invalid JSON; line 575: missing field" in text
    assert "61.62" in text


def test_data_issues_are_summarised(tmp_path):
    path = tmp_path / "club.jsonl"
    path.write_text(
        '{"type": "bridge.event", "event_id": "C", "date": "2026-11-03", "scoring": "butler"}\n'
        '{"type": "bridge.result", "event_id": "C", "board": 1, "ns_pair": "1", "ew_pair": "2",'
        ' "score_ns": 425}\n'
    )
    assert "data issue score_not_multiple_of_10: 1" in score_file(path, None, [], False, "table")


@pytest.mark.parametrize(
    ("method", "options", "message"),
    [
        ("pairs", [], "unknown method 'pairs'"),
        (None, ["neuberg"], "bad option 'neuberg': expected key=value"),
        (None, ["colour=red"], "unknown bridge option 'colour'"),
        (None, ["bog=perhaps"], "option bog must be true or false"),
    ],
)
def test_user_errors(method, options, message):
    with pytest.raises(ValueError, match=message):
        score_file(PCH, method, options, False, "table")


def test_unreadable_files(tmp_path):
    with pytest.raises(ValueError, match="cannot read"):
        score_file(tmp_path / "missing.jsonl", None, [], False, "table")
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x00\x01garbage\nnot json either\n")
    with pytest.raises(ValueError, match="no bridge record could be read"):
        score_file(junk, None, [], False, "table")


@pytest.mark.parametrize(
    "path",
    sorted(ORACLES.glob("*/results.jsonl")) + sorted(ORACLES.glob("*/*.pbn")),
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_three_tables_on_every_oracle_file_reports_instead_of_crashing(path):
    """None of the oracle events has 3 tables: every board is reported, nothing crashes."""
    text = score_file(path, "three_tables", [], False, "table")
    assert "— three_tables" in text
    assert "data issue three_tables_board_not_scored" in text


@pytest.mark.parametrize("content", [b"", b"\x00\x01\x02\xff" * 200, b"% just a comment\n"])
def test_an_empty_or_binary_pbn_is_one_line_and_exit_code_2(tmp_path, capsys, content):
    from flows import cli

    path = tmp_path / "event.pbn"
    path.write_bytes(content)
    assert cli.main(["score", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"duplirank score: error: {path}: not a PBN file to score")
    assert err.count("\n") == 1
