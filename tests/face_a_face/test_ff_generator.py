"""The synthetic Face-à-Face logs meet every case of face_a_face.md, deterministically."""

from datetime import date

import polars as pl
import pytest

from flows.ingest import validate_lines
from flows.tools.synthetic.face_a_face import ff_frames, ff_lines
from transforms.face_a_face import (
    FaceAFaceOptions,
    elo_history,
    monthly_ranking,
    score_matches,
    with_elo,
)

PLAYERS = [f"P{n:04d}" for n in range(1, 61)]
OPTS = FaceAFaceOptions()


@pytest.fixture(scope="module")
def lines():
    return ff_lines(5, PLAYERS, date(2026, 3, 28), 10)


@pytest.fixture(scope="module")
def scored(lines):
    frames = {k: v.lazy() for k, v in validate_lines(lines, "ff.jsonl").frames().items()}
    s = score_matches(frames, OPTS)
    return (
        s.tables["ff_match_scores"].collect(),
        s.tables["ff_deal_results"].collect(),
        s.issues.collect(),
    )


def test_same_seed_same_lines(lines):
    assert ff_lines(5, PLAYERS, date(2026, 3, 28), 10) == lines
    assert ff_lines(6, PLAYERS, date(2026, 3, 28), 10) != lines


def test_only_the_corrupted_lines_are_quarantined(lines):
    v = validate_lines(lines, "ff.jsonl")
    reasons = {q["reason"] for q in v.quarantine}
    assert reasons <= {
        "invalid JSON",
        "deal_no 17 out of range 1..16",
        "negative points made",
        "missing field player_b",
        "unknown type 'ff.chat'",
    }
    assert 0 < len(v.quarantine) <= 3 * 10
    assert v.accepted + len(v.quarantine) == v.lines_read == len(lines)


def test_every_case_is_there(scored):
    matches, deals, issues = scored
    assert set(matches["match_type"]) == {"classique", "attaque", "attaque_surcontrat"}
    assert set(matches["status"]) == {"played", "cancelled", "forfeit"}
    assert (matches["player_b"] == "BOT").sum() > 0
    assert (~matches["ranked"]).sum() > 0
    assert matches["scheduled_at"].is_not_null().sum() > 0
    assert (matches["outcome_a"] == "draw").sum() > 0
    assert deals["unfinished_a"].sum() > 0
    assert set(issues["kind"]) == {"ff_rematch"}  # clean data otherwise


def test_vectorised_frames_are_deterministic_and_scorable():
    m1, d1, x1 = ff_frames(3, 2000)
    m2, d2, x2 = ff_frames(3, 2000)
    assert m1.equals(m2) and d1.equals(d2) and x1.equals(x2)
    s = score_matches({"ff.match": m1, "ff.deal": d1, "ff.disconnect": x1}, OPTS)
    matches = s.tables["ff_match_scores"].collect()
    assert set(matches["status"]) == {"played", "cancelled", "forfeit"}
    assert d1.height == 32 * (matches["status"] != "cancelled").sum()
    assert s.issues.collect().filter(pl.col("kind") != "ff_rematch").height == 0


def test_outputs_do_not_depend_on_the_order_of_input_rows(lines):
    frames = validate_lines(lines, "ff.jsonl").frames()
    kinds = ("ff.match", "ff.deal", "ff.disconnect")

    def tables(order_seed: int | None):
        inputs = [
            frames[k]
            if order_seed is None
            else frames[k].sample(fraction=1.0, shuffle=True, seed=order_seed)
            for k in kinds
        ]
        s = score_matches(dict(zip(kinds, inputs, strict=True)), OPTS)
        elo = elo_history(s.tables["ff_match_scores"], OPTS)
        matches = with_elo(s.tables["ff_match_scores"], elo, OPTS)
        ranking = monthly_ranking(matches, elo, OPTS)
        return [f.collect() for f in (s.tables["ff_deal_results"], matches, s.issues, elo, ranking)]

    for first, second in zip(tables(None), tables(3), strict=True):
        assert first.equals(second)
