"""Realistic synthetic raw logs (`duplirank generate`, the benchmarks, the sample in data/sample).

A side tool beside the pipeline, not part of it: nothing in `flows`' run path imports it.

- `files.py`        `generate`: the per-day JSON Lines files of every game
- `simultane.py`    `simultane.deal` logs (tournaments, unfinished deals, corrupted lines)
- `face_a_face.py`  `ff.*` logs, and `ff_frames` (vectorised, for benchmarks)
- `bridge.py`       `bridge.*` pairs tournaments of every method
- `contree.py`      contrée scoring and one table's play, shared by the two contrée games
- `platform.py`     the platform's time zone and bot, player ids, how a record is written

Limits (time limits, the shape of a match, the bot's id, the time zone) are read from the
rules' option classes, never copied.
"""

from flows.tools.synthetic.files import generate

__all__ = ["generate"]
