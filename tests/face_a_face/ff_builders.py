"""Small builders of bronze-shaped ff.* frames for the Face-à-Face tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl

from transforms.record_types import RECORD_TYPES

T0 = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
DEAL_GAP = timedelta(seconds=200)
CLASSIQUE_ROLES = ["defense"] * 12 + ["attack"] * 4


def frame(record_type: str, rows: list[dict]) -> pl.LazyFrame:
    schema = RECORD_TYPES[record_type].schema()
    full = [
        {name: row.get(name) for name in schema}
        | {"source_file": "test", "line_no": i, "delivery": 0}
        for i, row in enumerate(rows, start=1)
    ]
    return pl.DataFrame(full, schema=schema, orient="row").lazy()


class History:
    """Accumulates matches, deals and disconnections, then gives the three bronze frames."""

    def __init__(self) -> None:
        self.match_rows: list[dict] = []
        self.deal_rows: list[dict] = []
        self.disconnect_rows: list[dict] = []

    def match(
        self,
        match_id: str,
        a: str,
        b: str,
        d_a: list[int] | None = None,
        d_b: list[int] | None = None,
        match_type: str = "classique",
        ranked: bool = True,
        created: datetime = T0,
        start_after: timedelta | None = timedelta(minutes=1),
        scheduled: datetime | None = None,
        took_a: dict[int, timedelta | None] | None = None,
        took_b: dict[int, timedelta | None] | None = None,
        roles: list[str] | None = None,
        deals: bool = True,
    ) -> datetime | None:
        """One match; D per deal for each player (default all 0); returns its end."""
        started = None if start_after is None else (scheduled or created) + start_after
        ended = None if started is None else started + 16 * DEAL_GAP
        self.match_rows.append(
            {
                "match_id": match_id,
                "match_type": match_type,
                "player_a": a,
                "player_b": b,
                "ranked": ranked,
                "created_at": created,
                "scheduled_at": scheduled,
                "started_at": started,
                "ended_at": ended,
            }
        )
        if started is None or not deals:
            return ended
        if roles is None:
            roles = CLASSIQUE_ROLES if match_type == "classique" else ["attack"] * 16
        for player, ds, took in ((a, d_a, took_a), (b, d_b, took_b)):
            ds = ds if ds is not None else [0] * 16
            for no, d in enumerate(ds, start=1):
                if d is None:  # no row for this deal
                    continue
                deal_start = started + (no - 1) * DEAL_GAP
                duration = (took or {}).get(no, timedelta(seconds=60))
                self.deal_rows.append(
                    {
                        "match_id": match_id,
                        "deal_no": no,
                        "role": roles[no - 1],
                        "player_id": player,
                        "started_at": deal_start,
                        "finished_at": None if duration is None else deal_start + duration,
                        "points_made": max(d, 0) + 10,
                        "points_conceded": max(-d, 0) + 10,
                    }
                )
        return ended

    def disconnect(self, match_id: str, player: str, at: datetime, back: datetime | None):
        self.disconnect_rows.append(
            {
                "match_id": match_id,
                "player_id": player,
                "disconnected_at": at,
                "reconnected_at": back,
            }
        )

    def frames(self) -> dict[str, pl.LazyFrame]:
        """The inputs of `score_matches`: bronze frames by record type."""
        return {
            "ff.match": frame("ff.match", self.match_rows),
            "ff.deal": frame("ff.deal", self.deal_rows),
            "ff.disconnect": frame("ff.disconnect", self.disconnect_rows),
        }
