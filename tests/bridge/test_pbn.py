"""PBN reading: ScoreTable travellers, one game per table, encodings, a real RealBridge export."""

from __future__ import annotations

from datetime import date

import polars as pl

from tests_support import ORACLES
from transforms.bridge.event import score_events
from transforms.bridge.pbn import decode_pbn, parse_pbn
from transforms.record_types import RECORD_TYPES

NO_PENALTIES = pl.LazyFrame(schema=RECORD_TYPES["bridge.penalty"].schema())

SCORE_TABLE = r"""% PBN 2.1
% <META name=ScoringType content="IMP;Butler-2;Mean">
[Event "Klubowy"]
[Date "2026.11.03"]
[Board "2"]
[Dealer "E"]
[Vulnerable "NS"]
[ScoreTable "PairId_NS\2R;PairId_EW\2R;Contract\5L;Declarer\1R;Result\2R;Score_NS\6R;IMP_NS\6R"]
 1  2 "4S"  N 10    -    -
 3  4 "4S"  N  9    -    -
 5  6 "3NT" S  9    -    -
 7  8 -     - -     A60  -
 9 10 "2H"  W  8  110    -

[Event "#"]
[Board "3"]
[Vulnerable "EW"]
[ScoreTable "PairId_NS\2R;PairId_EW\2R;Contract\5L;Declarer\1R;Result\2R;Score_NS\6R"]
 1  4 Pass  - -     0
"""


def test_score_table_travellers():
    parsed = parse_pbn(SCORE_TABLE, "club.pbn", "CLUB")
    event = parsed.frames["bridge.event"].row(0, named=True)
    assert (event["scoring"], event["date"]) == ("butler", date(2026, 11, 3))
    results = parsed.frames["bridge.result"]
    assert results["ns_pair"].to_list() == ["1", "3", "5", "7", "9", "1"]
    assert results["contract"].to_list() == ["4S", "4S", "3NT", None, "2H", "Pass"]
    assert results["result"].to_list() == ["=", "-1", "=", None, "=", None]
    assert results["adjusted"].to_list() == [None, None, None, "A60", None, None]
    assert results["score_ns"].to_list() == [None, None, None, None, 110, 0]
    scores = score_events(parsed.frames | {"bridge.result": results})
    boards = (
        scores.tables["bridge_board_results"]
        .filter((pl.col("direction") == "NS") & (pl.col("board") == 2))
        .collect()
        .sort("pair")
    )
    # vulnerability NS given (board 2's cycle agrees): 4S= 620, 4S−1 −100, 3NT= 600
    assert boards["score_ns"].to_list() == [620, -100, 600, None, 110]  # the given score wins
    assert scores.issues.collect()["kind"].to_list() == ["score_contradicts_contract"]


def test_decoding_utf8_cp1250_latin1():
    assert decode_pbn("Łódź".encode()) == ("Łódź", "utf-8")
    assert decode_pbn('[Event "Łódź"]'.encode("cp1250")) == ('[Event "Łódź"]', "cp1250")
    assert decode_pbn("Chorzów".encode("latin-1")) == ("Chorzów", "latin-1")


def test_realbridge_teams_export():
    path = ORACLES / "pbn_realbridge_teams" / "example2.pbn"
    parsed = parse_pbn(path.read_bytes(), path.name, "RB")
    assert parsed.encoding == "utf-8"
    assert parsed.skipped == []
    event = parsed.frames["bridge.event"].row(0, named=True)
    assert (event["scoring"], event["date"]) == ("butler", date(2021, 8, 23))
    results = parsed.frames["bridge.result"]
    assert len(results) == 299
    first, second = results.row(0, named=True), results.row(1, named=True)
    assert (first["board"], first["contract"], first["declarer"], first["score_ns"]) == (
        11,
        "Pass",
        None,
        0,
    )
    assert first["ns_pair"] == "Markus Knob#39415-Clemens Wanha#184195"
    assert (second["contract"], second["declarer"], second["result"], second["score_ns"]) == (
        "1NT",
        "N",
        "+1",
        120,
    )
    scores = score_events(parsed.frames)
    # every given [Score] agrees with its contract, declarer, tricks and [Vulnerable]
    assert scores.issues.collect().is_empty()
