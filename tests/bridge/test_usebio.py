"""USEBIO 1.2 input (bridge.md, USEBIO input): a Mitchell written as USEBIO and as PBN gives the
same tables; every event type and artificial spelling; unknown elements are reported; unsafe
XML is refused."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from flows.tools.score import score_file
from transforms.bridge.event import score_events
from transforms.bridge.pbn import parse_pbn
from transforms.bridge.usebio import parse_usebio

DATA = Path(__file__).parent / "data"


def _scored(frames):
    tables, issues = score_events(frames).collect()
    assert issues.is_empty()
    return tables


def _usebio_mitchell():
    return parse_usebio((DATA / "mitchell.xml").read_bytes(), "mitchell.xml", "mitchell")


def test_the_event_and_its_metadata_are_read():
    parsed = _usebio_mitchell()
    event = parsed.frames["bridge.event"].row(0, named=True)
    assert (event["scoring"], str(event["date"]), event["movement"]) == (
        "matchpoints",
        "2026-11-03",
        "two_winner",
    )
    assert json.loads(event["extra"])["program"] == "Compscore3"
    assert parsed.unknown == {"FOO_BAR": 1}
    assert parsed.skipped == []
    results = parsed.frames["bridge.result"]
    assert results.height == 12
    first = json.loads(results["extra"][0])
    assert first["deal"] == "N:AKQ2.KQJ5.A3.T98 JT9.A2.KQJ4.7654 8765.T9876.T2.AK 43.43.98765.QJ32"
    assert first["reported_ns"] == 5.0


def test_a_mitchell_has_two_fields_with_names_and_the_programs_figures():
    standings = _scored(_usebio_mitchell().frames)["bridge_standings"]
    assert set(standings["field"]) == {"NS", "EW"}
    by_pair = {r["pair"]: r for r in standings.iter_rows(named=True)}
    assert by_pair["1NS"]["names"] == "Anne Martin & Paul Roux"
    assert (by_pair["1NS"]["rank"], by_pair["2EW"]["rank"]) == (1, 1)  # a winner each
    # the program's own percentage is kept beside ours: the difference is visible
    assert (by_pair["2EW"]["pct"], by_pair["2EW"]["reported_pct"]) == (88.33, 88.34)
    same = standings.filter(pl.col("pair") != "2EW")
    assert same["pct"].to_list() == same["reported_pct"].to_list()
    assert same["rank"].to_list() == same["reported_rank"].to_list()


def test_the_programs_board_figures_are_kept_beside_ours():
    boards = _scored(_usebio_mitchell().frames)["bridge_board_results"]
    ns = boards.filter(pl.col("direction") == "NS")
    assert ns["reported_points"].null_count() == 0
    assert ns["reported_points"].to_list() == ns["mp"].to_list()


def test_the_same_event_as_pbn_and_as_usebio_gives_the_same_tables():
    pbn = parse_pbn((DATA / "mitchell.pbn").read_bytes(), "mitchell.pbn", "mitchell")
    assert pbn.skipped == []
    from_pbn = _scored(pbn.frames)
    from_usebio = _scored(_usebio_mitchell().frames)
    keys = {"bridge_standings": ["pair"], "bridge_board_results": ["board", "pair"]}
    for name, key in keys.items():
        a = from_pbn[name].drop("reported_points", strict=False).sort(key)
        b = from_usebio[name].drop("reported_points", strict=False).sort(key)
        assert a.equals(b), name
    assert set(from_pbn["bridge_standings"]["field"]) == {"NS", "EW"}  # its TotalScoreTable


def usebio(
    event_type: str, lines: list[str], scoring_method: str = "", winner: str = "1", extra: str = ""
) -> bytes:
    """A small USEBIO file: one board, the given traveller lines (NS pair i+1 against EW pair
    i+5, SCORE as given)."""
    body = "".join(
        f"<TRAVELLER_LINE><NS_PAIR_NUMBER>{i + 1}</NS_PAIR_NUMBER>"
        f"<EW_PAIR_NUMBER>{i + 5}</EW_PAIR_NUMBER><SCORE>{score}</SCORE>{extra}</TRAVELLER_LINE>"
        for i, score in enumerate(lines)
    )
    return (
        f'<?xml version="1.0"?><USEBIO Version="1.2"><EVENT EVENT_TYPE="{event_type}">'
        f"<DATE>01/12/2026</DATE><WINNER_TYPE>{winner}</WINNER_TYPE>"
        f"<SCORING_METHOD>{scoring_method}</SCORING_METHOD>"
        f"<BOARD><BOARD_NUMBER>1</BOARD_NUMBER>{body}</BOARD></EVENT></USEBIO>"
    ).encode()


@pytest.mark.parametrize(
    ("event_type", "scoring_method", "method"),
    [
        ("MP_PAIRS", "", "matchpoints"),
        ("BUTLER_PAIRS", "", "butler"),
        ("CROSS_IMP", "", "cavendish"),
        ("CROSS_IMP", "AVERAGE", "cavendish_avg"),
    ],
)
def test_every_event_type(event_type, scoring_method, method):
    parsed = parse_usebio(usebio(event_type, ["420", "-50", "170"], scoring_method), "f", "E")
    assert parsed.frames["bridge.event"]["scoring"].item() == method
    tables = _scored(parsed.frames)
    assert tables["bridge_standings"]["method"].unique().to_list() == [method]
    assert tables["bridge_standings"].height == 6


def test_an_event_type_that_is_not_pairs_is_refused():
    with pytest.raises(ValueError, match="TEAMS"):
        parse_usebio(usebio("TEAMS", ["420"]), "f", "E")


@pytest.mark.parametrize(
    ("spelling", "ns_pct", "ew_pct"),
    [
        ("A5050", 50, 50),
        ("A6040", 60, 40),
        ("A4060", 40, 60),
        ("A6060", 60, 60),
        ("A4040", 40, 40),
        ("A60/A40", 60, 40),
        ("AVE+", 60, 40),
        ("AVE-", 40, 60),
    ],
)
def test_each_artificial_spelling(spelling, ns_pct, ew_pct):
    parsed = parse_usebio(usebio("MP_PAIRS", ["420", "-50", "170", spelling]), "f", "E")
    boards = _scored(parsed.frames)["bridge_board_results"]
    artificial = boards.filter(pl.col("adjusted").is_not_null())
    assert dict(zip(artificial["direction"], artificial["pct"], strict=True)) == {
        "NS": ns_pct,
        "EW": ew_pct,
    }


def test_an_unknown_element_is_read_past_and_reported():
    data = usebio("MP_PAIRS", ["420", "-50"], extra="<NEW_THING><X>1</X></NEW_THING>")
    parsed = parse_usebio(data, "f", "E")
    assert parsed.unknown == {"NEW_THING": 2, "X": 2}
    assert parsed.frames["bridge.result"]["score_ns"].to_list() == [420, -50]


@pytest.mark.parametrize(
    "data",
    [
        b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 '
        b'"&lol;&lol;&lol;">]><USEBIO>&lol2;</USEBIO>',
        b'<!DOCTYPE x SYSTEM "file:///etc/passwd"><USEBIO/>',
    ],
)
def test_doctype_and_entities_are_refused(data):
    with pytest.raises(ValueError, match="DOCTYPE or entities"):
        parse_usebio(data, "f", "E")


def test_malformed_xml_and_other_roots_are_user_errors():
    with pytest.raises(ValueError, match="not well-formed"):
        parse_usebio(b"<USEBIO><EVENT></USEBIO>", "f", "E")
    with pytest.raises(ValueError, match="root element"):
        parse_usebio(b"<PBN/>", "f", "E")


def test_a_howell_keeps_plain_pair_numbers():
    parsed = parse_usebio(usebio("MP_PAIRS", ["420", "-50"], winner="1"), "f", "E")
    assert parsed.frames["bridge.result"]["ns_pair"].to_list() == ["1", "2"]


def test_score_prints_each_fields_standings(tmp_path):
    path = tmp_path / "mitchell.xml"
    path.write_bytes((DATA / "mitchell.xml").read_bytes())
    text = score_file(path, None, [], False, "table")
    ns, ew = text.index("field NS"), text.index("field EW")
    assert ns < ew
    assert "Anne Martin & Paul Roux" in text[ns:ew]
    assert "Eric Morel & Julie Faure" in text[ew:]
    assert "unknown USEBIO element <FOO_BAR> ignored" in text
    rows = json.loads(score_file(path, None, [], False, "json"))
    assert {r["field"] for r in rows} == {"NS", "EW"} and len(rows) == 8


def test_usebio_files_in_the_landing_folder_are_bridge_events(tmp_path):
    from tests.ingest.cases import reasons, run, table

    landing = tmp_path / "landing"
    landing.mkdir()
    good = landing / "club-1103.xml"
    good.write_bytes((DATA / "mitchell.xml").read_bytes())
    bad = landing / "lol.xml"
    bad.write_bytes(b'<!DOCTYPE x [<!ENTITY a "a">]><USEBIO>&a;</USEBIO>')
    result, wh = run(tmp_path, landing)
    events = table(wh, "bridge_event")
    assert events.select("event_id", "movement").rows() == [("club-1103", "two_winner")]
    assert table(wh, "bridge_result").height == 12
    assert reasons(wh, good) == [(1, "unknown USEBIO element <FOO_BAR> read past (1×)")]
    assert reasons(wh, bad) == [(1, "USEBIO file refused: it declares a DOCTYPE or entities")]
    status = {Path(f.file).name: f.status for f in result.files}
    assert status == {"club-1103.xml": "ingested", "lol.xml": "ingested"}


def test_the_pbn_total_score_table_says_two_winner():
    """Without its TotalScoreTable the PBN's pairs 1-4 sit both ways (NS 1 and EW 1 would be
    one pair): one field. With it (a Direction per pair) NS 1 and EW 1 are two pairs, two
    fields; a TotalScoreTable without directions says one winner."""
    text = (DATA / "mitchell.pbn").read_text(encoding="utf-8")
    head, table = text.split("[TotalScoreTable", 1)
    rest = table.split("\n\n", 1)[1]
    without = _scored(parse_pbn((head + rest).encode(), "m.pbn", "M").frames)
    assert without["bridge_standings"]["field"].is_null().all()
    assert sorted(without["bridge_standings"]["pair"]) == ["1", "2", "3", "4"]
    with_table = _scored(parse_pbn(text.encode(), "m.pbn", "M").frames)["bridge_standings"]
    assert with_table.group_by("field").len().sort("field").rows() == [("EW", 4), ("NS", 4)]
    no_direction = text.replace("Direction\\2R;", "").replace(" NS ", " ").replace(" EW ", " ")
    parsed = parse_pbn(no_direction.encode(), "m.pbn", "M")
    assert json.loads(parsed.frames["bridge.event"]["extra"][0])["winner_type"] == 1
    assert _scored(parsed.frames)["bridge_standings"]["field"].is_null().all()


def test_duplirank_score_prints_a_usebio_files_fields(capsys):
    from flows import cli

    assert cli.main(["score", str(DATA / "mitchell.xml")]) == 0
    out = capsys.readouterr().out
    assert "mitchell 2026-11-03 — matchpoints — field NS" in out
    assert "mitchell 2026-11-03 — matchpoints — field EW" in out
    assert out.count("| mitchell |") == 8
