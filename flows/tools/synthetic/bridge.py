"""Synthetic bridge pairs tournaments for `duplirank generate` and the benchmark.

`bridge_lines(seed, events, start, days)` gives deterministic JSON Lines (same seed -> same
bytes; `random.Random(seed)` only): `bridge.event` (several methods and options, 3 to 40
tables, sometimes two sections), `bridge.result` travellers (mostly contract + declarer +
result; some `score_ns`, a few both, a few artificial `adjusted` scores, a rare score that
contradicts its contract or is not a multiple of 10), `bridge.penalty` lines, and a few corrupt
lines (broken JSON, missing fields). The NS scores of score-only lines are computed by the one
contract-scoring rule (`transforms.bridge.contracts`), in one vectorised pass.
"""

from __future__ import annotations

import json
import random
from datetime import date, timedelta

import polars as pl

from transforms.bridge.boards import board_vulnerability
from transforms.bridge.contracts import with_score_ns
from transforms.bridge.options import MP_METHODS

METHOD_WEIGHTS = {
    "matchpoints": 50,
    "butler": 25,
    "sunday_times": 7,
    "cavendish_avg": 8,
    "cavendish": 5,
}
STRAINS = ("C", "D", "H", "S", "NT")
ADJUSTED = ("A60/A40", "A50", "A40/A40", "A40/A60", "A50/A50")
# (tricks over the contract, weight): most contracts make exactly
RESULT_WEIGHTS = ((0, 44), (1, 24), (-1, 18), (2, 5), (-2, 6), (-3, 2), (3, 1))


def bridge_lines(seed: int, events: int, start: date, days: int) -> list[str]:
    """JSON Lines of `events` events dated over `days` days from `start`."""
    rng = random.Random(seed)
    records = bridge_records(rng, seed, events, start, days)
    lines: list[str] = []
    for record in records:
        line = json.dumps(record, ensure_ascii=False)
        if record["type"] == "bridge.result" and rng.random() < 0.002:
            # corrupt: a line cut in the middle, or a required field missing
            if rng.random() < 0.5:
                line = line[: len(line) // 2]
            else:
                line = json.dumps({k: v for k, v in record.items() if k != "ns_pair"})
        lines.append(line)
    return lines


def bridge_records(
    rng: random.Random,
    seed: int,
    events: int,
    start: date,
    days: int,
    methods: dict[str, int] | None = None,
    variety: bool = True,
) -> list[dict]:
    """The records (dicts) of the events; `methods` = weights of the methods to draw from;
    `variety=False` leaves out options, penalties and oddities (the benchmark's plain nights)."""
    methods = methods or METHOD_WEIGHTS | {"three_tables": 0}
    records: list[dict] = []
    results: list[dict] = []
    for i in range(events):
        day = start + timedelta(days=(i * max(days, 1)) // max(events, 1))
        event_id = f"BR{seed}-{day:%Y%m%d}-{i:04d}"
        tables = _tables(rng)
        if tables == 3 and "three_tables" in methods and rng.random() < 0.8:
            method = "three_tables"
        else:
            method = rng.choices(list(methods), weights=list(methods.values()))[0]
        rounds = 3 if tables == 3 else rng.randint(3, min(9, tables))
        per_round = rng.choice((2, 3, 4))
        event = {
            "type": "bridge.event",
            "event_id": event_id,
            "date": day.isoformat(),
            "scoring": method,
        }
        round_field = rng.random() < 0.5
        if not round_field:
            event["boards_per_round"] = per_round
        if variety:
            options = _options(rng, method)
            if options:
                event["options"] = options
        records.append(event)
        sections = 2 if tables >= 16 and rng.random() < 0.2 else 1
        deals = [_deal(rng) for _ in range(rounds * per_round)]
        for r in range(rounds):
            for t in range(tables):
                section = None if sections == 1 else ("A" if t < tables // 2 else "B")
                ew = tables + (t + r) % tables + 1
                board_set = (t + r) % rounds
                for b in range(board_set * per_round, (board_set + 1) * per_round):
                    line = {
                        "type": "bridge.result",
                        "event_id": event_id,
                        "board": b + 1,
                        "ns_pair": str(t + 1),
                        "ew_pair": str(ew),
                    }
                    if section:
                        line["section"] = section
                    if round_field:
                        line["round"] = r + 1
                    _play(rng, line, deals[b], variety)
                    results.append(line)
                    records.append(line)
        if variety:
            records += _penalties(rng, event_id, method, tables)
    _fill_scores(results)
    return records


def _tables(rng: random.Random) -> int:
    if rng.random() < 0.12:
        return 3
    return min(40, max(4, int(rng.lognormvariate(2.4, 0.45))))


def _options(rng: random.Random, method: str) -> dict | None:
    draw = rng.random()
    if method in ("butler", "sunday_times"):
        if draw < 0.15:
            return {"bog": True}
        if draw < 0.25:
            return {"vp": True}
        if draw < 0.3:
            return {"out": 1}
    if method == "matchpoints" and draw < 0.05:
        return {"neuberg": False}
    if method == "cavendish_avg" and draw < 0.2:
        return {"vp": True}
    return None


def _deal(rng: random.Random) -> tuple[str, int, str]:
    """The board's most usual contract: (NS or EW declaring, level, strain); level 0 = pass."""
    side = rng.choice(("NS", "EW"))
    draw = rng.random()
    if draw < 0.03:
        return side, 0, ""
    if draw < 0.45:
        return side, rng.randint(1, 3), rng.choice(STRAINS)
    if draw < 0.88:
        strain = rng.choice(("NT", "H", "S", "H", "S", "C", "D"))
        return side, {"NT": 3, "H": 4, "S": 4, "C": 5, "D": 5}[strain], strain
    return side, 6 if rng.random() < 0.8 else 7, rng.choice(STRAINS)


def _play(rng: random.Random, line: dict, deal: tuple[str, int, str], variety: bool) -> None:
    """Fills contract/declarer/result (or score_ns, or an artificial score) of one table."""
    side, level, strain = deal
    if variety and rng.random() < 0.005:
        line["adjusted"] = rng.choice(ADJUSTED)
        return
    if level == 0 or (level <= 2 and rng.random() < 0.02):
        # a passed-out board: records.py wants a score_ns when there is no declarer/result
        line["contract"] = "Pass"
        line["score_ns"] = 0
        return
    draw = rng.random()
    if draw < 0.2:
        level = min(7, max(1, level + rng.choice((-1, 1))))
    elif draw < 0.28:
        strain = rng.choice(STRAINS)
    doubled = rng.choices(("", "X", "XX"), weights=(90, 9, 1))[0]
    over = rng.choices([r for r, _ in RESULT_WEIGHTS], weights=[w for _, w in RESULT_WEIGHTS])[0]
    over = min(over, 7 - level)
    line["contract"] = f"{level}{strain}{doubled}"
    line["declarer"] = rng.choice(("N", "S") if side == "NS" else ("E", "W"))
    line["result"] = "=" if over == 0 else f"{over:+d}"
    kind = rng.random()
    if kind < 0.1:
        line["_score_only"] = True
    elif kind < 0.13:
        line["_score_too"] = True
    elif variety and kind < 0.1315:
        line["_score_wrong"] = True


def _fill_scores(results: list[dict]) -> None:
    """score_ns of the lines marked for it, from the contract-scoring rule in one pass."""
    marked = [
        r for r in results if any(k in r for k in ("_score_only", "_score_too", "_score_wrong"))
    ]
    if not marked:
        return
    frame = pl.DataFrame(
        {
            "contract": [r["contract"] for r in marked],
            "declarer": [r["declarer"] for r in marked],
            "result": [r["result"] for r in marked],
            "board": [r["board"] for r in marked],
        }
    ).with_columns(board_vulnerability(pl.col("board")).alias("vulnerable"))
    scores = with_score_ns(frame)["score_ns"]
    for record, value in zip(marked, scores.to_list(), strict=True):
        if record.pop("_score_only", False):
            for key in ("contract", "declarer", "result"):
                del record[key]
            record["score_ns"] = value
        elif record.pop("_score_too", False):
            record["score_ns"] = value
        elif record.pop("_score_wrong", False):
            record["score_ns"] = value + 5  # not a multiple of 10, contradicts the contract


def _penalties(rng: random.Random, event_id: str, method: str, tables: int) -> list[dict]:
    lines = []
    for _ in range(rng.choices((0, 1, 2), weights=(70, 22, 8))[0]):
        penalty = {
            "type": "bridge.penalty",
            "event_id": event_id,
            "pair": str(rng.randint(1, 2 * tables)),
            "kind": rng.choices(("p", "z", "m", "w"), weights=(5, 3, 1, 2))[0],
        }
        if rng.random() < 0.5:
            penalty["board"] = rng.randint(1, 9)
        imp_event = method not in MP_METHODS
        if imp_event and rng.random() < 0.9:
            penalty["amount"] = rng.choice((1, 2, 3))
        if rng.random() < 0.3:
            penalty["note"] = rng.choice(("slow play", "late arrival", "board fouled"))
        lines.append(penalty)
    return lines
