"""What the generators share about the game platform: its time zone, its bot, the players'
ids, and how a server writes a record (UTC timestamps, compact JSON).

The time zone and the bot's id are the defaults of the rules' option classes, so the logs meet
the limits the pipeline applies by default.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from transforms.face_a_face.options import FaceAFaceOptions
from transforms.simultane.options import SimultaneOptions

PARIS = ZoneInfo(SimultaneOptions().timezone)  # platform time zone: days, tournament hours
BOT = FaceAFaceOptions().bot_id  # the platform's bot, the same player in both games


def player_ids(players: int) -> list[str]:
    width = max(4, len(str(players)))
    return [f"P{n:0{width}d}" for n in range(1, players + 1)]


def utc(ts: datetime) -> str:
    return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def dumps(obj: dict) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
