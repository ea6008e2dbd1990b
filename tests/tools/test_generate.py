"""The synthetic log generators: contrée scoring, Simultané logs, the per-day files."""

from __future__ import annotations

import gzip
import json
import random
from datetime import date, datetime
from zoneinfo import ZoneInfo

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from flows.ingest import validate_lines
from flows.tools.synthetic import files
from flows.tools.synthetic.contree import Contract, contree_deal_score, contree_score
from flows.tools.synthetic.files import generate, split_by_day
from flows.tools.synthetic.platform import BOT
from flows.tools.synthetic.simultane import (
    CORRUPTIONS,
    TOURNAMENT_HOURS,
    simultane_lines,
    simultane_log,
)
from tests_support import SAMPLE

START = date(2026, 10, 30)  # three days over the end of October and the start of November


@pytest.fixture(scope="module")
def log():
    return simultane_log(11, 30, START, 3)


@pytest.fixture(scope="module")
def deals(log) -> pl.DataFrame:
    frames = [validate_lines(day.lines, f"d{n}").frames() for n, day in enumerate(log.days)]
    return pl.concat([f["simultane.deal"] for f in frames])


# --- contrée scoring ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("contract", "cards", "belote", "expected"),
    [
        (Contract(100), 110, None, (210, 52)),  # the bot's table of simultane.md
        (Contract(100), 120, None, (220, 42)),  # the human who made 120
        (Contract(100), 70, None, (0, 260)),  # failed: 160 + 100 to the defenders
        (Contract(100), 70, "defense", (0, 280)),  # failed, belote
        (Contract(100, coinche=2), 110, None, (310, 52)),  # contré: contract × 2
        (Contract(120, coinche=4), 90, None, (0, 640)),  # surcontré and failed: 160 + 480
        (Contract(250), 162, None, (412, 0)),  # capot made
        (Contract(250), 152, None, (0, 410)),  # capot failed
        (Contract(80), 62, "taker", (162, 100)),  # belote completes 82
        (Contract(80), 81, None, (0, 240)),  # 80 is not enough: more than half (82) needed
        (Contract(None), 0, None, (0, 0)),  # all four passed
    ],
)
def test_contree_score(contract, cards, belote, expected):
    assert contree_score(contract, cards, belote) == expected


contracts = st.builds(
    Contract,
    st.sampled_from([None, 80, 90, 100, 110, 120, 130, 140, 150, 160, 250]),
    st.sampled_from(["NS", "EW"]),
    st.sampled_from([1, 2, 4]),
)


@given(contracts, st.integers(0, 162), st.sampled_from([None, "taker", "defense"]))
def test_contree_score_invariants(contract, cards, belote):
    taker, defense = contree_score(contract, cards, belote)
    assert taker >= 0 and defense >= 0
    if contract.value is None:
        assert (taker, defense) == (0, 0)
        return
    stake = contract.value * contract.coinche
    bonus = 20 if belote else 0
    if taker == 0:  # failed
        assert defense == 160 + stake + bonus
    else:  # made
        assert taker >= stake + cards
        assert taker + defense == 162 + stake + bonus


def test_contree_deal_score_outcomes():
    rng = random.Random(3)
    seen = {"passe": 0, "made": 0, "failed": 0, "contré": 0}
    for _ in range(3000):
        made, conceded, text = contree_deal_score(rng)
        assert made >= 0 and conceded >= 0
        if text == "passe":
            assert (made, conceded) == (0, 0)
            seen["passe"] += 1
            continue
        parts = text.split(" ")  # e.g. "110♥ S", "capot♠ E X", "90♦ N XX"
        value, seat = parts[0][:-1], parts[1]
        coinche = {"X": 2, "XX": 4}[parts[2]] if len(parts) == 3 else 1
        stake = (250 if value == "capot" else int(value)) * coinche
        ours = seat in ("N", "S")
        taker, defense = (made, conceded) if ours else (conceded, made)
        if taker == 0:  # a failed contract: the taker's side scores nothing
            assert defense in (160 + stake, 180 + stake)
            seen["failed"] += 1
        else:
            assert taker + defense in (162 + stake, 182 + stake)
            seen["made"] += 1
        seen["contré"] += coinche > 1
    assert all(count > 30 for count in seen.values()), seen


# --- Simultané logs ----------------------------------------------------------------------------


def test_same_seed_same_lines_other_seed_other_lines():
    first = simultane_lines(5, 12, START, 2)
    assert first == simultane_lines(5, 12, START, 2)
    assert first != simultane_lines(6, 12, START, 2)


def test_corrupt_lines_quarantined_with_their_reason(log):
    assert log.corrupt_count >= 9
    assert {kind for day in log.days for _, kind, _ in day.corrupt} == set(CORRUPTIONS)
    for day in log.days:
        checked = validate_lines(day.lines, "day.jsonl")
        got = [(q["line_no"], q["reason"]) for q in checked.quarantine]
        assert got == [(n, reason) for n, _, reason in day.corrupt]
        assert checked.accepted == len(day.lines) - len(day.corrupt)


def test_one_bot_row_per_deal(deals):
    per_deal = deals.group_by("tournament_id", "deal_no").agg(
        bots=pl.col("is_bot").sum(),
        bot_ids=pl.col("player_id").filter(pl.col("is_bot")).unique(),
        deals=pl.col("deals_in_tournament").first(),
    )
    assert per_deal["bots"].to_list() == [1] * per_deal.height
    assert per_deal["bot_ids"].to_list() == [[BOT]] * per_deal.height
    tournaments = per_deal.group_by("tournament_id").agg(pl.len(), pl.col("deals").first())
    assert (tournaments["len"] == tournaments["deals"]).all()  # every deal has its bot row
    assert tournaments.height == 3 * len(TOURNAMENT_HOURS)


def test_tournaments_at_fixed_paris_hours_over_two_months(deals):
    starts = deals["tournament_start"].unique().dt.convert_time_zone("Europe/Paris")
    assert set(starts.dt.hour().to_list()) == {h.hour for h in TOURNAMENT_HOURS}
    months = deals["tournament_start"].dt.convert_time_zone("Europe/Paris").dt.strftime("%Y-%m")
    assert sorted(months.unique().to_list()) == ["2026-10", "2026-11"]


def test_unfinished_and_quit_rows_exist(log, deals):
    humans = deals.filter(~pl.col("is_bot"))
    statuses = humans.group_by("status").len()
    counts = dict(zip(statuses["status"], statuses["len"], strict=True))
    assert counts["finished"] > 1000
    assert counts["timeout"] > 0 and counts["disconnected"] > 0 and counts["quit"] > 0
    late = humans.filter(
        pl.col("status") == "finished",
        (pl.col("finished_at") - pl.col("started_at")).dt.total_seconds() > 300,
    )
    assert late.height > 0
    unfinished = humans.filter(pl.col("status") != "finished")
    assert unfinished["finished_at"].null_count() == unfinished.height
    assert unfinished["points_made"].null_count() == unfinished.height
    # a quit ends the player's tournament: no later deal
    quits = humans.filter(pl.col("status") == "quit").select(
        "tournament_id", "player_id", quit_deal="deal_no"
    )
    after = humans.join(quits, on=["tournament_id", "player_id"]).filter(
        pl.col("deal_no") > pl.col("quit_deal")
    )
    assert quits.height > 0 and after.height == 0
    bot_unfinished = deals.filter(pl.col("is_bot"), pl.col("status") != "finished")
    assert bot_unfinished.height > 0  # a deal with no reference (seed 11 has one)
    assert sorted(bot_unfinished.select("tournament_id", "deal_no").rows()) == sorted(
        log.unreferenced_deals
    )


def test_humans_play_sequentially_and_around_the_bot(deals):
    bot = deals.filter(pl.col("is_bot"), pl.col("status") == "finished").select(
        "tournament_id", "deal_no", fb="points_made", lb="points_conceded"
    )
    humans = deals.filter(~pl.col("is_bot"), pl.col("status") == "finished")
    stakes = humans.join(bot, on=["tournament_id", "deal_no"]).with_columns(
        t=pl.col("points_made") + pl.col("points_conceded") + pl.col("fb") + pl.col("lb")
    )
    pct = stakes.filter(pl.col("t") > 0).select(
        200 * (pl.col("points_made") + pl.col("lb")) / pl.col("t")
    )
    assert 90 < pct.to_series().median() < 110  # P = 200 (F_i + L_b) / (T_i + T_b)
    order = humans.sort("tournament_id", "player_id", "deal_no").with_columns(
        prev_end=pl.col("finished_at").shift().over("tournament_id", "player_id")
    )
    assert order.filter(pl.col("started_at") < pl.col("prev_end")).height == 0
    players = humans.group_by("player_id").len()
    assert players.filter(pl.col("len") >= 40).height >= 5  # several 20-deal blocks


# --- the per-day files -------------------------------------------------------------------------


def _read(path) -> bytes:
    return path.read_bytes()


def test_generate_same_seed_same_bytes(tmp_path):
    a = generate(tmp_path / "a", players=12, days=2, seed=9, start=START)
    b = generate(tmp_path / "b", players=12, days=2, seed=9, start=START)
    c = generate(tmp_path / "c", players=12, days=2, seed=10, start=START)
    assert [p.name for p in a] == [p.name for p in b]
    assert [_read(p) for p in a] == [_read(p) for p in b]
    assert [_read(p) for p in a] != [_read(p) for p in c]
    names = [p.name for p in a if p.name.startswith("simultane")]
    assert names == ["simultane-2026-10-30.jsonl", "simultane-2026-10-31.jsonl.gz"]
    gz = tmp_path / "a" / "simultane-2026-10-31.jsonl.gz"
    assert _read(gz)[:2] == b"\x1f\x8b"
    lines = gzip.decompress(_read(gz)).decode().splitlines()
    assert lines == simultane_log(9, 12, START, 2).days[1].lines


def test_generate_splits_other_games_per_paris_day(tmp_path, monkeypatch):
    def ff_lines(seed, players, start, days):
        match = {"type": "ff.match", "match_id": "M1", "created_at": "2026-10-30T23:30:00Z"}
        deal = {"type": "ff.deal", "match_id": "M1", "deal_no": 1}
        late = {"type": "ff.match", "match_id": "M2", "created_at": "2026-10-30T21:00:00Z"}
        return [json.dumps(match), json.dumps(deal), "{broken", json.dumps(late)]

    monkeypatch.setattr(files, "ff_lines", ff_lines)
    monkeypatch.setattr(files, "bridge_lines", lambda seed, events, start, days: [])
    written = generate(tmp_path, players=5, days=1, seed=1, start=START)
    assert sorted(p.name for p in written) == [
        "ff-2026-10-30.jsonl",
        "ff-2026-10-31.jsonl.gz",
        "simultane-2026-10-30.jsonl",
    ]
    assert (tmp_path / "ff-2026-10-30.jsonl").read_text().count("\n") == 1
    assert gzip.decompress(_read(tmp_path / "ff-2026-10-31.jsonl.gz")).count(b"\n") == 3


def test_split_by_day_follows_ids_and_previous_line():
    paris = ZoneInfo("Europe/Paris")
    evening = datetime(2026, 11, 3, 23, 50, tzinfo=paris).isoformat()
    lines = [
        json.dumps({"type": "bridge.event", "event_id": "E1", "date": "2026-11-02"}),
        json.dumps({"type": "ff.match", "match_id": "M", "created_at": evening}),
        json.dumps({"type": "bridge.result", "event_id": "E1", "board": 1}),
        "not json",
        json.dumps({"type": "ff.deal", "match_id": "M", "started_at": "2026-11-03T23:05:00Z"}),
    ]
    assert split_by_day(lines, START) == {
        date(2026, 11, 2): [lines[0], lines[2], lines[3]],
        date(2026, 11, 3): [lines[1], lines[4]],  # after midnight, with its match
    }


def test_the_committed_sample_is_what_generate_writes(tmp_path):
    """`data/sample/` (what `make run` reads) is `duplirank generate --players 40 --days 3
    --seed 1 --start 2026-10-30`, byte for byte: a change of the generators shows here."""
    sample = SAMPLE
    written = generate(tmp_path, players=40, days=3, seed=1, start=START)
    assert sorted(p.name for p in written) == sorted(p.name for p in sample.iterdir())
    for path in written:
        assert path.read_bytes() == (sample / path.name).read_bytes(), path.name
