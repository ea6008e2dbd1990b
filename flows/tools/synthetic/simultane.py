"""Synthetic raw logs of the Simultané (contrée): `simultane.deal` JSON Lines.

What the logs look like (so that the pipeline meets every case of simultane.md):

- several tournaments a day at fixed hours, Paris time (`tournament_start` written with its
  UTC offset, the other timestamps in UTC), each of 8 to 20 deals;
- a subset of the players in each tournament (each player has an activity level), one `BOT`
  row per deal (`is_bot` true), every human plays the deals one after the other;
- contrée deal scores that follow the game's scoring (`contree.contree_score`): the same cards
  on every table (`contree.Hand`), so the humans' scores vary around the bot's on the same deal;
- time-outs (status `timeout`, or `finished` with `finished_at` beyond the deal time limit of
  `SimultaneOptions`, 300 s), disconnections,
  quits (the player's later deals missing), now and then a bot row that did not finish (a deal
  with no reference);
- a few corrupted lines per day (`CORRUPTIONS`), each one known with the reason the
  validation must give it (`DayLog.corrupt`).

Everything is drawn from one `random.Random(seed)`: same arguments, same bytes. The code is a
plain loop over tournaments, players and deals because each player's deals are sequential in
time (a deal starts when the previous one ends) and a quit ends the player's tournament.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta

from flows.tools.synthetic.contree import play_table, random_hand
from flows.tools.synthetic.platform import BOT, PARIS, dumps, player_ids, utc
from transforms.simultane.options import SimultaneOptions

TOURNAMENT_HOURS = (time(10), time(14), time(18), time(21))  # Paris time
HOUR_ATTENDANCE = (0.55, 0.75, 1.0, 0.9)  # share of a player's activity at each hour
DEALS_PER_TOURNAMENT = (8, 20)
DEAL_TIME_LIMIT_S = SimultaneOptions().deal_time_limit_s

CORRUPTIONS = (
    "invalid_json",
    "missing_field",
    "negative_points",
    "wrong_type",
    "unknown_type",
    "duplicate_line",
    "conflicting_duplicate",
)


# --- the log ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Player:
    player_id: str
    skill: float  # card points taken above the bot's level, on average
    activity: float  # chance of playing a tournament at the busiest hour
    pace_s: float  # mean seconds per deal


@dataclass
class DayLog:
    """The lines of one day (Paris date of the tournaments) and the corrupted ones."""

    day: date
    lines: list[str]
    corrupt: list[tuple[int, str, str]] = field(default_factory=list)
    # (1-based line number, corruption kind, reason the validation gives)


@dataclass
class SimultaneLog:
    days: list[DayLog]
    unreferenced_deals: list[tuple[str, int]]  # (tournament_id, deal_no) whose bot row failed

    @property
    def lines(self) -> list[str]:
        return [line for day in self.days for line in day.lines]

    @property
    def corrupt_count(self) -> int:
        return sum(len(day.corrupt) for day in self.days)


def _tournament_rows(
    rng: random.Random, tournament_id: str, start: datetime, players: list[Player]
) -> tuple[list[tuple[datetime, str, int, dict]], list[int]]:
    """Rows of one tournament (event time, player, deal, record), deals whose bot row failed."""
    deals = rng.randint(*DEALS_PER_TOURNAMENT)
    hands = [random_hand(rng) for _ in range(deals)]
    head = {
        "type": "simultane.deal",
        "tournament_id": tournament_id,
        "tournament_start": start.isoformat(),
        "deals_in_tournament": deals,
    }
    rows = []
    bot_glitch = rng.randint(1, deals) if rng.random() < 0.05 else None
    cursor = start + timedelta(seconds=rng.randint(1, 5))
    for deal_no, hand in enumerate(hands, start=1):
        made, conceded, text = play_table(rng, hand, 0.0, 8.0)
        began = cursor
        cursor += timedelta(seconds=rng.randint(20, 60))
        record = head | {"deal_no": deal_no, "player_id": BOT, "is_bot": True}
        record |= {"started_at": utc(began)}
        if deal_no == bot_glitch:
            record |= {"status": "disconnected"}
        else:
            record |= {"finished_at": utc(cursor), "status": "finished"}
            record |= {"points_made": made, "points_conceded": conceded, "contract": text}
        rows.append((cursor, BOT, deal_no, record))
    for player in players:
        quit_at = rng.randint(1, deals) if rng.random() < 0.04 else None
        cursor = start + timedelta(seconds=rng.randint(2, 120))
        for deal_no, hand in enumerate(hands, start=1):
            made, conceded, text = play_table(rng, hand, player.skill, 12.0)
            began = cursor
            seconds = max(15.0, rng.gauss(player.pace_s, player.pace_s / 3))
            record = head | {"deal_no": deal_no, "player_id": player.player_id, "is_bot": False}
            record |= {"started_at": utc(began)}
            r = rng.random()
            if deal_no == quit_at:
                cursor += timedelta(seconds=rng.randint(5, 200))
                record |= {"status": "quit"}
            elif r < 0.006:
                cursor += timedelta(seconds=DEAL_TIME_LIMIT_S + rng.randint(0, 3))
                record |= {"status": "timeout"}
            elif r < 0.010:
                cursor += timedelta(seconds=rng.randint(20, 400))
                record |= {"status": "disconnected"}
            else:
                if r < 0.016:  # finished, but after the time limit: unfinished for scoring
                    seconds = rng.randint(DEAL_TIME_LIMIT_S + 1, DEAL_TIME_LIMIT_S + 120)
                cursor += timedelta(seconds=round(seconds))
                record |= {"finished_at": utc(cursor), "status": "finished"}
                record |= {"points_made": made, "points_conceded": conceded, "contract": text}
            rows.append((cursor, player.player_id, deal_no, record))
            if deal_no == quit_at:
                break
            cursor += timedelta(seconds=rng.randint(2, 20))
    rows.sort(key=lambda row: row[:3])  # the server logs a row when the deal ends
    return rows, [] if bot_glitch is None else [bot_glitch]


def _corrupt_day(rng: random.Random, day: date, records: list[dict], kinds: list[str]) -> DayLog:
    """Lines of one day with the given corruptions; the bot rows are left intact."""
    entries: list[list] = [[dumps(r), None, None, r] for r in records]  # text, kind, reason, rec
    humans = [i for i, r in enumerate(records) if not r["is_bot"]]
    finished = [i for i in humans if records[i]["status"] == "finished"]
    used: set[int] = set()
    if len(finished) < 2 * len(kinds):  # too small a day to corrupt without emptying it
        kinds = []

    def pick(pool: list[int]) -> int:
        i = rng.choice([i for i in pool if i not in used])
        used.add(i)
        return i

    inserts: list[tuple[int, list]] = []  # (after index, entry) ; entry[2] refers to a source
    for kind in kinds:
        if kind == "invalid_json":
            e = entries[pick(humans)]
            e[0], e[1], e[2] = e[0][: rng.randint(10, len(e[0]) - 2)], kind, "invalid JSON"
        elif kind == "missing_field":
            i = pick(finished)
            rec = dict(records[i])
            name = rng.choice(("tournament_id", "started_at", "player_id", "points_made"))
            del rec[name]
            entries[i][:3] = [dumps(rec), kind, f"missing field {name}"]
        elif kind == "negative_points":
            i = pick(finished)
            rec = dict(records[i])
            name = rng.choice(("points_made", "points_conceded"))
            rec[name] = -(rec[name] or 10)
            entries[i][:3] = [dumps(rec), kind, f"negative {name.replace('_', ' ')}"]
        elif kind == "wrong_type":
            i = pick(humans)
            rec = dict(records[i])
            name = rng.choice(("deal_no", "is_bot", "started_at"))
            if name == "deal_no":
                rec[name], reason = str(rec[name]), "field deal_no must be an integer"
            elif name == "is_bot":
                rec[name], reason = "false", "field is_bot must be true or false"
            else:
                stamp = datetime.fromisoformat(rec[name]).timestamp()
                rec[name], reason = int(stamp), "field started_at must be an ISO-8601 timestamp"
            entries[i][:3] = [dumps(rec), kind, reason]
        elif kind == "unknown_type":
            i = rng.randrange(len(records))
            rec = records[i]
            chat = {"type": "simultane.chat", "tournament_id": rec["tournament_id"]}
            chat |= {"player_id": rec["player_id"], "at": rec["started_at"], "text": "bien joué"}
            inserts.append((i, [dumps(chat), kind, "unknown type 'simultane.chat'", None]))
        elif kind == "duplicate_line":
            i = pick(humans)  # the original stays valid; its copy is re-sent later
            later = rng.randint(i, len(records) - 1)
            inserts.append((later, [entries[i][0], kind, ("duplicate", id(entries[i])), None]))
        elif kind == "conflicting_duplicate":
            i = pick(finished)
            rec = dict(records[i])
            rec["points_made"] += 10
            later = rng.randint(i, len(records) - 1)
            inserts.append((later, [dumps(rec), kind, ("conflict", id(entries[i])), None]))
    for after, entry in sorted(inserts, key=lambda x: x[0], reverse=True):
        entries.insert(after + 1, entry)
    line_of = {id(e): n for n, e in enumerate(entries, start=1)}
    key = "tournament_id, deal_no, player_id"
    corrupt = []
    for n, (_, kind, reason, _) in enumerate(entries, start=1):
        if kind is None:
            continue
        if isinstance(reason, tuple):
            source = line_of[reason[1]]
            if reason[0] == "duplicate":
                reason = f"duplicate of line {source}"
            else:
                reason = f"conflicting duplicate of line {source} (same {key})"
        corrupt.append((n, kind, reason))
    return DayLog(day, [e[0] for e in entries], corrupt)


def simultane_log(
    seed: int, players: int, start: date, days: int, corrupt_rate: float = 0.003
) -> SimultaneLog:
    """The Simultané logs of `days` days from `start`, per day, with what was corrupted.

    Each day has at least three corrupted lines (more for big days, `corrupt_rate` of the
    lines); the kinds of `CORRUPTIONS` come in turn across the days.
    """
    rng = random.Random(seed)
    roster = [
        Player(pid, rng.gauss(0, 8), rng.uniform(0.2, 0.9), rng.uniform(60, 150))
        for pid in player_ids(players)
    ]
    out: list[DayLog] = []
    unreferenced: list[tuple[str, int]] = []
    turn = 0
    for d in range(days):
        day = start + timedelta(days=d)
        records = []
        for hour, attendance in zip(TOURNAMENT_HOURS, HOUR_ATTENDANCE, strict=True):
            begins = datetime.combine(day, hour, tzinfo=PARIS)
            tournament_id = f"SIM-{day:%Y%m%d}-{hour:%H%M}"
            present = [p for p in roster if rng.random() < p.activity * attendance]
            rows, failed_bot = _tournament_rows(rng, tournament_id, begins, present)
            unreferenced += [(tournament_id, deal_no) for deal_no in failed_bot or []]
            records += [row[3] for row in rows]
        count = max(3, round(len(records) * corrupt_rate))
        kinds = [CORRUPTIONS[(turn + k) % len(CORRUPTIONS)] for k in range(count)]
        day_log = _corrupt_day(rng, day, records, kinds)
        turn += len(day_log.corrupt)
        out.append(day_log)
    return SimultaneLog(out, unreferenced)


def simultane_lines(seed: int, players: int, start: date, days: int) -> list[str]:
    """Raw `simultane.deal` JSON Lines (no trailing newlines), days in order."""
    return simultane_log(seed, players, start, days).lines
