"""Helpers for the bridge tests: bronze-shaped frames from short literal rows."""

from __future__ import annotations

from datetime import date

import polars as pl
import pytest

from transforms.bridge.event import BridgeScores, score_events
from transforms.record_types import RECORD_TYPES

EVENT_SCHEMA = RECORD_TYPES["bridge.event"].schema()
RESULT_SCHEMA = RECORD_TYPES["bridge.result"].schema()
PENALTY_SCHEMA = RECORD_TYPES["bridge.penalty"].schema()


def events_frame(events: list[dict]) -> pl.LazyFrame:
    return pl.DataFrame(
        [{name: event.get(name) for name in EVENT_SCHEMA} for event in events],
        schema=EVENT_SCHEMA,
        orient="row",
    ).lazy()


def results_frame(rows: list[dict], event_id: str = "E1") -> pl.LazyFrame:
    return _bronze(rows, event_id, RESULT_SCHEMA)


def penalties_frame(rows: list[dict], event_id: str = "E1") -> pl.LazyFrame:
    return _bronze(rows, event_id, PENALTY_SCHEMA)


def _bronze(rows: list[dict], event_id: str, schema: dict) -> pl.LazyFrame:
    """Rows of one event in a bronze schema (missing fields null)."""
    full = [{"event_id": event_id} | row for row in rows]
    return pl.DataFrame(
        [{name: row.get(name) for name in schema} for row in full], schema=schema, orient="row"
    ).lazy()


def board_scores(board: int, scores: list[int | str], first_pair: int = 1) -> list[dict]:
    """One board's travellers: table i is NS pair `2i+1` against EW pair `2i+2`; a text
    score is an artificial one (`A60/A40`)."""
    rows = []
    for i, score in enumerate(scores):
        row = {
            "board": board,
            "ns_pair": str(first_pair + 2 * i),
            "ew_pair": str(first_pair + 2 * i + 1),
        }
        if isinstance(score, str):
            row["adjusted"] = score
        else:
            row["score_ns"] = score
        rows.append(row)
    return rows


def score(
    method: str,
    rows: list[dict],
    penalties: list[dict] | None = None,
    event_options: str | None = None,
    boards_per_round: int | None = None,
    movement: str | None = None,
    extra: str | None = None,
    **overrides,
) -> BridgeScores:
    """One event E1 of `method` (options `event_options`, JSON) with these traveller lines,
    scored with the caller's `overrides` (option=value)."""
    event = {
        "event_id": "E1",
        "date": date(2026, 11, 3),
        "scoring": method,
        "options": event_options,
        "boards_per_round": boards_per_round,
        "movement": movement,
        "extra": extra,
    }
    inputs = {
        "bridge.event": events_frame([event]),
        "bridge.result": results_frame(rows),
        "bridge.penalty": penalties_frame(penalties or []),
    }
    return score_events(inputs, overrides)


def ns_values(scores: BridgeScores, column: str, board: int = 1) -> list:
    """The NS values of one board in table order (pair 1, 3, 5, ...)."""
    frame = (
        scores.tables["bridge_board_results"]
        .filter((pl.col("direction") == "NS") & (pl.col("board") == board))
        .collect()
    )
    return frame.sort(pl.col("pair").cast(pl.Int64))[column].to_list()


def ew_values(scores: BridgeScores, column: str, board: int = 1) -> list:
    frame = (
        scores.tables["bridge_board_results"]
        .filter((pl.col("direction") == "EW") & (pl.col("board") == board))
        .collect()
    )
    return frame.sort(pl.col("pair").cast(pl.Int64))[column].to_list()


@pytest.fixture
def no_penalties() -> pl.LazyFrame:
    return penalties_frame([])
