"""The two KOPS tournaments of ../shared/oracles reproduced exactly, from JSON Lines and PBN:
every contract score, every board value to KOPS's 1 decimal, every standing to 2 decimals."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import polars as pl
import pytest

from flows.ingest import validate_lines
from tests_support import ORACLES
from transforms.bridge.event import score_events
from transforms.bridge.pbn import parse_pbn
from transforms.record_types import RECORD_TYPES

PCH = ORACLES / "kops_PCH1003_matchpoints"
SM = ORACLES / "kops_SM0807_cavendish_avg"
NO_PENALTIES = pl.LazyFrame(schema=RECORD_TYPES["bridge.penalty"].schema())
PAIRS = {"ns_pair": pl.String, "ew_pair": pl.String}


def _dec(value: float, places: str) -> Decimal:
    return Decimal(repr(round(value, 9))).quantize(Decimal(places), ROUND_HALF_UP)


def _expected_boards(folder: Path) -> pl.DataFrame:
    return pl.read_csv(folder / "expected_boards.csv", schema_overrides=PAIRS)


def _jsonl_frames(folder: Path) -> dict[str, pl.DataFrame]:
    lines = (folder / "results.jsonl").read_text(encoding="utf-8").splitlines()
    validated = validate_lines(lines, "results.jsonl")
    assert validated.quarantine == []
    return validated.frames()


def _pbn_frames(folder: Path, name: str, method: str) -> dict[str, pl.DataFrame]:
    """The PBN file with the pair numbers of the expected rows (PCH1003's PBN names number the
    rows, not the pairs) and the artificial results (absent from the PBN) added back."""
    parsed = parse_pbn((folder / name).read_bytes(), name, folder.name, scoring=method)
    assert parsed.skipped == []
    expected = _expected_boards(folder)
    real = expected.filter(pl.col("adjusted").is_null())
    results = parsed.frames["bridge.result"]
    assert results["board"].to_list() == real["board"].to_list()
    results = results.with_columns(
        real["ns_pair"].alias("ns_pair"), real["ew_pair"].alias("ew_pair")
    )
    artificial = expected.filter(pl.col("adjusted").is_not_null()).select(
        pl.lit(folder.name).alias("event_id"), "board", "ns_pair", "ew_pair", "adjusted"
    )
    results = pl.concat([results, artificial], how="diagonal_relaxed")
    return {"bridge.event": parsed.frames["bridge.event"], "bridge.result": results}


def _check_boards(folder: Path, board_results: pl.DataFrame, value: str) -> None:
    expected = _expected_boards(folder)
    ns = board_results.filter(pl.col("direction") == "NS")
    ew = board_results.filter(pl.col("direction") == "EW")
    assert len(ns) == len(ew) == len(expected)
    got_ns = {(r["board"], r["pair"], r["opponent"]): r for r in ns.iter_rows(named=True)}
    got_ew = {(r["board"], r["pair"]): r for r in ew.iter_rows(named=True)}
    for row in expected.iter_rows(named=True):
        mine = got_ns[(row["board"], row["ns_pair"], row["ew_pair"])]
        theirs = got_ew[(row["board"], row["ew_pair"])]
        where = f"board {row['board']} NS {row['ns_pair']}"
        assert mine["score_ns"] == row["score_ns"], where
        assert mine["adjusted"] == row["adjusted"], where
        if row["ns_value"] is None:  # KOPS prints nothing for an A50 in an IMP event
            assert (mine[value], theirs[value]) == (0.0, 0.0), where
            continue
        assert _dec(mine[value], "0.1") == _dec(row["ns_value"], "0.1"), where
        assert _dec(theirs[value], "0.1") == _dec(row["ew_value"], "0.1"), where


def _check_standings(folder: Path, standings: pl.DataFrame, value: str) -> None:
    expected = pl.read_csv(folder / "expected_standings.csv", schema_overrides={"pair": pl.String})
    assert sorted(standings["pair"].to_list()) == sorted(expected["pair"].to_list())
    got = {r["pair"]: r for r in standings.iter_rows(named=True)}
    for row in expected.iter_rows(named=True):
        mine = got[row["pair"]]
        assert _dec(mine[value], "0.01") == _dec(row["value"], "0.01"), row["pair"]
        assert mine["rank"] == row["rank"], row["pair"]


def _score(frames: dict[str, pl.DataFrame]):
    scores = score_events(frames)
    return (
        scores.tables["bridge_board_results"].collect(),
        scores.tables["bridge_standings"].collect(),
        scores.issues.collect(),
    )


@pytest.mark.parametrize("source", ["jsonl", "pbn"])
def test_pch1003_matchpoints_neuberg(source):
    frames = (
        _jsonl_frames(PCH) if source == "jsonl" else _pbn_frames(PCH, "PCH1003.pbn", "matchpoints")
    )
    boards, standings, issues = _score(frames)
    assert issues.is_empty()
    assert set(boards["mp_top"].to_list()) == {42.0}  # N = 22 tables
    _check_boards(PCH, boards, "pct")
    _check_standings(PCH, standings, "pct")
    # boards 7 and 8: M = 21 real scores, Neuberg; the A60/A40 is 60 % / 40 % of 42
    adjusted = boards.filter(pl.col("adjusted").is_not_null()).sort("board", "direction")
    assert adjusted["mp"].to_list() == [16.8, 25.2, 16.8, 25.2]  # EW, NS per board


@pytest.mark.parametrize("source", ["jsonl", "pbn"])
def test_sm0807_cavendish_avg(source):
    frames = (
        _jsonl_frames(SM) if source == "jsonl" else _pbn_frames(SM, "sm0807.pbn", "cavendish_avg")
    )
    boards, standings, issues = _score(frames)
    assert issues.is_empty()
    _check_boards(SM, boards, "imp")
    _check_standings(SM, standings, "total")
    # the Cavendish scale ends at 17 IMPs (board 22 compares scores 2080 points apart, 19 IMPs
    # on the full scale): without that cap the boards no longer match KOPS
    uncapped = score_events(frames, {"cavendish_cap": 24}).tables["bridge_board_results"]
    uncapped = uncapped.collect()
    with pytest.raises(AssertionError, match="board 22"):
        _check_boards(SM, uncapped, "imp")

    def differing(frame: pl.DataFrame) -> set[int]:
        capped = frame.join(boards, on=["board", "pair", "direction"], suffix="_capped")
        return set(capped.filter(pl.col("imp") != pl.col("imp_capped"))["board"])

    assert differing(uncapped) == {22}


def test_sm0807_pbn_names_the_pairs():
    parsed = parse_pbn((SM / "sm0807.pbn").read_bytes(), "sm0807.pbn", "SM0807")
    assert parsed.encoding == "latin-1"
    assert "Chorzów" in parsed.frames["bridge.event"]["extra"][0]
    real = _expected_boards(SM).filter(pl.col("adjusted").is_null())
    results = parsed.frames["bridge.result"]
    assert results["ns_pair"].str.replace("Para-", "").to_list() == real["ns_pair"].to_list()
    assert results["ew_pair"].str.replace("Para-", "").to_list() == real["ew_pair"].to_list()
