"""The synthetic bridge logs: deterministic, varied, partly corrupt, and scorable."""

from __future__ import annotations

import json
from datetime import date

import polars as pl

from flows.ingest import validate_lines
from flows.tools.synthetic.bridge import bridge_lines
from transforms.bridge.event import score_events

START = date(2026, 11, 1)


def test_same_seed_same_bytes():
    assert bridge_lines(3, 12, START, 4) == bridge_lines(3, 12, START, 4)
    assert bridge_lines(3, 12, START, 4) != bridge_lines(4, 12, START, 4)


def test_varied_corrupt_and_scorable():
    lines = bridge_lines(11, 60, START, 6)
    validated = validate_lines(lines, "bridge.jsonl")
    reasons = {q["reason"] for q in validated.quarantine}
    assert "invalid JSON" in reasons and "missing field ns_pair" in reasons
    assert validated.accepted + len(validated.quarantine) == len(lines)
    frames = validated.frames()
    events = frames["bridge.event"]
    assert set(events["scoring"]) == {
        "three_tables",
        "matchpoints",
        "butler",
        "cavendish",
        "cavendish_avg",
        "sunday_times",
    }
    assert events["date"].min() == START and events["date"].max() <= date(2026, 11, 6)
    results = frames["bridge.result"]
    tables = results.group_by("event_id", "board").len()["len"]
    assert tables.min() >= 2 and tables.max() <= 40
    assert results["adjusted"].drop_nulls().len() > 0
    assert results.filter(pl.col("contract").is_null())["score_ns"].drop_nulls().len() > 0
    scores = score_events(frames)
    standings = scores.tables["bridge_standings"].collect()
    assert set(standings["event_id"]) == set(events["event_id"])
    kinds = set(scores.issues.collect()["kind"])
    assert "score_not_multiple_of_10" in kinds
    assert json.loads(lines[0])["type"] == "bridge.event"
