"""Synthetic raw logs of the Face-à-Face (contrée): `ff.match`, `ff.deal`, `ff.disconnect`.

What the logs look like (so that the pipeline meets every case of face_a_face.md):

- matches of the three types (`classique` 12 defence + 4 attack deals, `attaque`,
  `attaque_surcontrat` 16 attack deals) between two players or against the `BOT`, a few played
  out of the ranking (`ranked` false), some with a deferred start (`scheduled_at`);
- some cancelled: never started (no `started_at`), or started more than 10 minutes after the
  creation / the scheduled time; now and then a start exactly at the 10-minute limit;
- both players' `ff.deal` rows (the Bot's too): the same cards at both tables (`Hand`), contrée
  scores from `flows.tools.synthetic.contree.play_table`, the player's side taking the contract on
  attack deals and defending on defence deals; both players start each deal together;
- some late deals (over 4 / 3 minutes, now and then exactly at the limit), some never finished;
- `ff.disconnect` rows: short ones, exactly 6 minutes, longer ones and no reconnection
  (forfeits: the match ends then, the later deals are not played);
- rematches (same month, players and type, ranked) and a few corrupted lines a day.

The shape of a match and the time limits are those of `FaceAFaceOptions` (its defaults).
`ff_lines` draws everything from one `random.Random(seed)`: same arguments, same lines. It loops
over matches and deals because a match's deals are sequential in time. `ff_frames` is the
vectorised (numpy) variant for benchmarks at a million matches: same probabilities and time
limits, simpler deal scores, written straight to typed frames.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, date, datetime, time, timedelta

import numpy as np
import polars as pl

from flows.tools.synthetic.contree import (
    CARD_POINTS,
    FAILED_BASE,
    MIN_TO_MAKE,
    Hand,
    play_table,
    random_hand,
)
from flows.tools.synthetic.platform import BOT, PARIS, dumps, utc
from transforms.calendar import RAW_MONTH
from transforms.face_a_face.options import MATCH_TYPES, FaceAFaceOptions
from transforms.record_types import RECORD_TYPES

RULES = FaceAFaceOptions()  # the spec's limits and the shape of a match
TYPE_WEIGHTS = (0.5, 0.3, 0.2)  # of MATCH_TYPES
DEALS = RULES.deals_per_match
ATTACK_DEALS = RULES.attack_deals()
CLASSIQUE_ATTACK = ATTACK_DEALS["classique"]
CLASSIQUE_ROLES = ("defense",) * (DEALS - CLASSIQUE_ATTACK) + ("attack",) * CLASSIQUE_ATTACK
MATCHES_PER_PLAYER_DAY = 0.3
P_BOT = 0.15
P_UNRANKED = 0.08
P_DEFERRED = 0.10
P_NEVER_STARTED = 0.04
P_STARTED_LATE = 0.01  # started after the 10-minute limit: cancelled all the same
P_START_AT_LIMIT = 0.01
P_REMATCH = 0.05
P_DISCONNECT = 0.06
P_LATE_DEAL = 0.02
P_DEAL_AT_LIMIT = 0.005
P_NEVER_FINISHED = 0.004
CANCEL_AFTER_S = RULES.cancel_after_min * 60
LIMIT_S = {"attack": RULES.attack_limit_s, "defense": RULES.defense_limit_s}
FORFEIT_AFTER_S = RULES.forfeit_disconnect_min * 60
CORRUPT_PER_DAY = 3


def roles_of(match_type: str) -> tuple[str, ...]:
    return CLASSIQUE_ROLES if match_type == "classique" else ("attack",) * ATTACK_DEALS[match_type]


def _start_delay_s(rng: random.Random) -> int | None:
    """Seconds from creation (or scheduled time) to start; None: never started."""
    r = rng.random()
    if r < P_NEVER_STARTED:
        return None
    if r < P_NEVER_STARTED + P_STARTED_LATE:
        return CANCEL_AFTER_S + rng.randint(1, 600)
    if r < P_NEVER_STARTED + P_STARTED_LATE + P_START_AT_LIMIT:
        return CANCEL_AFTER_S
    return rng.randint(5, 300)


def _away_s(rng: random.Random) -> int | None:
    """Length of a disconnection; None: never came back."""
    r = rng.random()
    if r < 0.6:
        return rng.randint(10, 300)
    if r < 0.7:
        return FORFEIT_AFTER_S  # exactly at the limit: no forfeit
    if r < 0.85:
        return FORFEIT_AFTER_S + rng.randint(1, 600)
    return None


def _deal_seconds(rng: random.Random, role: str) -> int | None:
    """How long a player takes; None: never finished."""
    limit = LIMIT_S[role]
    r = rng.random()
    if r < P_NEVER_FINISHED:
        return None
    if r < P_NEVER_FINISHED + P_LATE_DEAL:
        return limit + rng.randint(1, 90)
    if r < P_NEVER_FINISHED + P_LATE_DEAL + P_DEAL_AT_LIMIT:
        return limit
    mean = 110 if role == "attack" else 80
    return int(min(max(rng.gauss(mean, mean / 3), 15), limit - 1))


def _hand_for(rng: random.Random, role: str) -> Hand:
    """Cards where the player's side (N-S) is the natural taker on attack, defender on defence."""
    hand = random_hand(rng)
    strong = hand.ns_card_points >= 81
    if strong != (role == "attack"):
        hand = Hand(CARD_POINTS - hand.ns_card_points, hand.belote, hand.trump)
    return hand


def _match_lines(
    rng: random.Random,
    match_id: str,
    match_type: str,
    a: str,
    b: str,
    ranked: bool,
    created: datetime,
    skill: dict[str, float],
) -> list[str]:
    scheduled = None
    if rng.random() < P_DEFERRED:
        scheduled = created + timedelta(minutes=rng.randint(30, 24 * 60))
    delay = _start_delay_s(rng)
    started = None if delay is None else (scheduled or created) + timedelta(seconds=delay)
    match = {"type": "ff.match", "match_id": match_id, "match_type": match_type}
    match |= {"player_a": a, "player_b": b, "ranked": ranked, "created_at": utc(created)}
    if scheduled is not None:
        match["scheduled_at"] = utc(scheduled)
    if started is None or delay > CANCEL_AFTER_S:  # cancelled: no deals
        if started is not None:
            match["started_at"] = utc(started)
        return [dumps(match)]
    match["started_at"] = utc(started)
    humans = [p for p in (a, b) if p != BOT]
    gone = None  # (player, deal_no, seconds into the deal, seconds away or None)
    if humans and rng.random() < P_DISCONNECT:
        gone = (rng.choice(humans), rng.randint(1, DEALS), rng.randint(5, 100), _away_s(rng))
    deal_lines, disconnect_lines = [], []
    cursor = started + timedelta(seconds=rng.randint(3, 20))
    ended = None
    for deal_no, role in enumerate(roles_of(match_type), start=1):
        hand = _hand_for(rng, role)
        ends = []
        for player in (a, b):
            seconds = 40 if player == BOT else _deal_seconds(rng, role)
            made, conceded, _ = play_table(rng, hand, skill.get(player, 0.0), 12.0)
            row = {"type": "ff.deal", "match_id": match_id, "deal_no": deal_no, "role": role}
            row |= {"player_id": player, "started_at": utc(cursor)}
            if gone is not None and gone[:2] == (player, deal_no):
                at = cursor + timedelta(seconds=gone[2])
                back = None if gone[3] is None else at + timedelta(seconds=gone[3])
                off = {"type": "ff.disconnect", "match_id": match_id, "player_id": player}
                off |= {"disconnected_at": utc(at)}
                if back is not None:
                    off["reconnected_at"] = utc(back)
                disconnect_lines.append(off)
                if back is None or gone[3] > FORFEIT_AFTER_S:  # forfeit: the match ends
                    ended = at + timedelta(seconds=FORFEIT_AFTER_S + rng.randint(0, 3))
                    deal_lines.append(row)
                    continue
                seconds = int((back - cursor).total_seconds()) + rng.randint(10, 60)
            if seconds is not None:
                row |= {"finished_at": utc(cursor + timedelta(seconds=seconds))}
                row |= {"points_made": made, "points_conceded": conceded}
            deal_lines.append(row)
            ends.append(cursor + timedelta(seconds=seconds if seconds is not None else 300))
        if ended is not None:  # a forfeit: the later deals are not played
            break
        cursor = max(ends) + timedelta(seconds=rng.randint(2, 15))
    match["ended_at"] = utc(ended if ended is not None else cursor)
    lines = [dumps(match)] + [dumps(r) for r in deal_lines]
    return lines + [dumps(r) for r in disconnect_lines]


def _corrupted(rng: random.Random, lines: list[str]) -> list[str]:
    """A few broken copies of the day's lines, each with a known quarantine reason."""
    out = []
    deal_lines = [line for line in lines if '"ff.deal"' in line and "points_made" in line]
    match_lines = [line for line in lines if '"ff.match"' in line]
    if not deal_lines or not match_lines:
        return out
    for k in range(CORRUPT_PER_DAY):
        kind = rng.choice(("invalid_json", "deal_no", "negative", "missing", "unknown_type"))
        if kind == "invalid_json":
            line = rng.choice(lines)
            out.append(line[: rng.randint(5, len(line) - 2)])
            continue
        rec = json.loads(rng.choice(match_lines if kind == "missing" else deal_lines))
        if kind == "deal_no":  # reason: deal_no 17 out of range 1..16
            rec["deal_no"] = 17
        elif kind == "negative":  # reason: negative points made
            rec["points_made"] = -1 - k
        elif kind == "missing":  # reason: missing field player_b
            del rec["player_b"]
        else:  # reason: unknown type 'ff.chat'
            rec = {"type": "ff.chat", "match_id": rec["match_id"], "text": "bien joué"}
        out.append(dumps(rec))
    return out


def ff_lines(seed: int, players: list[str], start: date, days: int) -> list[str]:
    """JSON Lines of `days` days of Face-à-Face from `start` (Paris dates), deterministic."""
    rng = random.Random(seed)
    skill = {p: rng.gauss(0, 6) for p in players}
    lines: list[str] = []
    month_keys: dict[str, list[tuple[str, str, str]]] = {}
    for offset in range(days):
        day = start + timedelta(days=offset)
        month = f"{day.year:04d}-{day.month:02d}"
        keys = month_keys.setdefault(month, [])
        count = max(1, round(len(players) * MATCHES_PER_PLAYER_DAY * rng.uniform(0.7, 1.3)))
        seconds = sorted(rng.randint(8 * 3600, 23 * 3600) for _ in range(count))
        day_lines: list[str] = []
        for n, second in enumerate(seconds, start=1):
            created = datetime.combine(day, time(), PARIS) + timedelta(seconds=second)
            if keys and rng.random() < P_REMATCH:
                a, b, match_type = rng.choice(keys)
            else:
                match_type = rng.choices(MATCH_TYPES, TYPE_WEIGHTS)[0]
                a = rng.choice(players)
                b = BOT if rng.random() < P_BOT or len(players) < 2 else a
                while b == a:
                    b = rng.choice(players)
            ranked = rng.random() >= P_UNRANKED
            if ranked:
                keys.append((a, b, match_type))
            match_id = f"F{day:%Y%m%d}-{n:04d}"
            day_lines += _match_lines(rng, match_id, match_type, a, b, ranked, created, skill)
        lines += day_lines + _corrupted(rng, day_lines)
    return lines


# --- vectorised variant for benchmarks ---------------------------------------------------


def ff_frames(
    seed: int,
    matches: int,
    players: int | None = None,
    start: date = date(2026, 1, 1),
    days: int = 365,
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(ff.match, ff.deal, ff.disconnect) bronze-shaped frames for `matches` matches.

    Same probabilities and limits as `ff_lines`; deal scores are drawn directly (a contract of
    80..160 made with card points, or failed: 160 + contract to the defence) instead of played
    from shared hands. Deterministic for a seed.
    """
    rng = np.random.default_rng(seed)
    n = matches
    players = players or max(2, n // 20)
    t0 = datetime.combine(start, time(8), PARIS).astimezone(UTC)
    created_s = np.sort(rng.integers(0, days * 86400, n))
    a_idx = rng.integers(0, players, n)
    b_idx = (a_idx + rng.integers(1, players, n)) % players
    bot = rng.random(n) < P_BOT
    match_type = rng.choice(len(MATCH_TYPES), n, p=TYPE_WEIGHTS)
    deferred = rng.random(n) < P_DEFERRED
    scheduled_s = created_s + np.where(deferred, rng.integers(1800, 86400, n), 0)
    r = rng.random(n)
    delay = np.where(
        r < P_STARTED_LATE, CANCEL_AFTER_S + rng.integers(1, 600, n), rng.integers(5, 300, n)
    )
    never = rng.random(n) < P_NEVER_STARTED
    started_s = scheduled_s + delay
    cancelled = never | (delay > CANCEL_AFTER_S)
    deal_gap = 200
    ended_s = started_s + DEALS * deal_gap + rng.integers(0, 60, n)

    width = len(str(n))
    ids = pl.Series("i", np.arange(n)).cast(pl.String).str.zfill(width)
    player_names = pl.Series(np.arange(players)).cast(pl.String).str.zfill(6)
    base = (
        pl.DataFrame(
            {
                "match_id": "F" + ids,
                "player_a": "P" + player_names.gather(a_idx),
                "player_b": pl.Series(np.where(bot, BOT, "")).cast(pl.String),
                "_b": "P" + player_names.gather(b_idx),
            }
        )
        .with_columns(
            pl.when(pl.col("player_b") == BOT)
            .then(pl.col("player_b"))
            .otherwise(pl.col("_b"))
            .alias("player_b")
        )
        .drop("_b")
    )

    def ts(seconds: np.ndarray, null: np.ndarray | None = None) -> pl.Series:
        s = pl.Series(seconds * 1_000_000 + int(t0.timestamp() * 1_000_000)).cast(
            pl.Datetime("us", "UTC")
        )
        return s if null is None else s.scatter(np.flatnonzero(null), None)

    match_frame = base.with_columns(
        pl.Series("match_type", np.array(MATCH_TYPES)[match_type]),
        pl.Series("ranked", rng.random(n) >= P_UNRANKED),
        ts(created_s).alias("created_at"),
        ts(scheduled_s, ~deferred).alias("scheduled_at"),
        ts(started_s, never).alias("started_at"),
        ts(ended_s, cancelled).alias("ended_at"),
    )
    played = np.flatnonzero(~cancelled)
    m = len(played)
    # deals: played matches × 16 deal numbers × the two players
    rows = m * DEALS * 2
    match_of_row = np.repeat(played, DEALS * 2)
    deal_no = np.tile(np.repeat(np.arange(1, DEALS + 1), 2), m)
    side_b = np.tile(np.array([False, True]), m * DEALS)
    attack = (match_type[match_of_row] != 0) | (deal_no > DEALS - CLASSIQUE_ATTACK)
    limit = np.where(attack, LIMIT_S["attack"], LIMIT_S["defense"])
    u = rng.random(rows)
    seconds = np.clip(rng.normal(np.where(attack, 110, 80), 30), 15, limit - 1).astype(np.int64)
    seconds = np.where(u < P_LATE_DEAL, limit + rng.integers(1, 90, rows), seconds)
    seconds = np.where((u >= P_LATE_DEAL) & (u < P_LATE_DEAL + P_DEAL_AT_LIMIT), limit, seconds)
    never_finished = u > 1 - P_NEVER_FINISHED
    deal_start = started_s[match_of_row] + 5 + (deal_no - 1) * deal_gap
    contract = rng.integers(8, 17, m * DEALS).repeat(2) * 10  # same contract at both tables
    cards = np.clip(rng.normal(np.where(attack, 100, 62), 25), 0, CARD_POINTS).astype(np.int64)
    taker_cards = np.where(attack, cards, CARD_POINTS - cards)
    made_it = taker_cards >= np.maximum(contract, MIN_TO_MAKE)
    taker_pts = np.where(made_it, taker_cards + contract, 0)
    defense_pts = np.where(made_it, CARD_POINTS - taker_cards, FAILED_BASE + contract)
    points_made = np.where(attack, taker_pts, defense_pts)
    points_conceded = np.where(attack, defense_pts, taker_pts)
    players_of_row = (
        pl.when(pl.Series(side_b))
        .then(base["player_b"].gather(match_of_row))
        .otherwise(base["player_a"].gather(match_of_row))
    )
    deal_frame = pl.DataFrame(
        {
            "match_id": base["match_id"].gather(match_of_row),
            "deal_no": deal_no,
            "role": np.where(attack, "attack", "defense"),
            "player_id": pl.select(players_of_row).to_series(),
            "started_at": ts(deal_start),
            "finished_at": ts(deal_start + seconds, never_finished),
            "points_made": pl.Series(points_made).scatter(np.flatnonzero(never_finished), None),
            "points_conceded": pl.Series(points_conceded).scatter(
                np.flatnonzero(never_finished), None
            ),
        }
    )
    # disconnections of player a in some played matches
    off = played[rng.random(m) < P_DISCONNECT]
    k = len(off)
    at_s = started_s[off] + rng.integers(60, DEALS * deal_gap - 60, k)
    v = rng.random(k)
    away = np.where(
        v < 0.6,
        rng.integers(10, 300, k),
        np.where(v < 0.7, FORFEIT_AFTER_S, FORFEIT_AFTER_S + rng.integers(1, 600, k)),
    )
    never_back = v >= 0.85
    disconnect_frame = pl.DataFrame(
        {
            "match_id": base["match_id"].gather(off),
            "player_id": base["player_a"].gather(off),
            "disconnected_at": ts(at_s),
            "reconnected_at": ts(at_s + away, never_back),
        }
    )
    return tuple(
        _bronze(frame, name)
        for frame, name in (
            (match_frame, "ff.match"),
            (deal_frame, "ff.deal"),
            (disconnect_frame, "ff.disconnect"),
        )
    )


def _bronze(frame: pl.DataFrame, record_type: str) -> pl.DataFrame:
    schema = RECORD_TYPES[record_type].schema()
    meta = {RAW_MONTH: None, "extra": None, "source_file": "bench", "line_no": 0, "delivery": 0}
    return frame.with_columns(pl.lit(v, schema[k]).alias(k) for k, v in meta.items()).select(
        pl.col(k).cast(t) for k, t in schema.items()
    )
