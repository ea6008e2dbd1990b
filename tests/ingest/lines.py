"""Small raw JSON Lines for the pipeline tests."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta


def deal(
    tournament: str,
    deal_no: int,
    player: str,
    made: int,
    conceded: int,
    *,
    deals: int = 2,
    start: datetime = datetime(2026, 11, 3, 19, 0, tzinfo=UTC),
    status: str = "finished",
    seconds: int = 60,
    **extra,
) -> dict:
    started = start + timedelta(minutes=5 * (deal_no - 1))
    row = {
        "type": "simultane.deal",
        "tournament_id": tournament,
        "tournament_start": start.isoformat().replace("+00:00", "Z"),
        "deals_in_tournament": deals,
        "deal_no": deal_no,
        "player_id": player,
        "is_bot": player == "BOT",
        "started_at": started.isoformat(),
        "finished_at": (started + timedelta(seconds=seconds)).isoformat(),
        "status": status,
        "points_made": made,
        "points_conceded": conceded,
    }
    return row | extra


def tournament(tournament_id: str, start: datetime, players: dict[str, list[tuple[int, int]]]):
    """Lines of one tournament: {player: [(made, conceded) per deal]} (include "BOT")."""
    deals = len(next(iter(players.values())))
    return [
        json.dumps(deal(tournament_id, n + 1, p, *scores[n], deals=deals, start=start))
        for p, scores in players.items()
        for n in range(deals)
    ]


def write(path, lines: list[str]) -> None:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
