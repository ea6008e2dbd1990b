"""The raw record types of data.md, each declared once.

A record type is a dataframely schema: its fields (type, required or not), ranges, choices and
cross-field rules, each rule with the one-line reason a failing line is quarantined with. From
that one declaration come the bronze schema (`RECORD_TYPES[name].schema()`), the decoding of
the JSON fields (`kind`), the checks (`declaration.filter`) and the reasons (`reason`).

Plausibility bounds (data.md, issue 8): a contrée side's points within 0..3,000 (simultane.md:
a deal's stake T = F + L reaches ~2,000 with contré or capot; no contrée score goes above
3,000 for one side), bridge NS scores within ±7,600 (the largest score of the game), counts
within reason (a Simultané tournament has 8-20 deals: at most 200; a board or round number at
most 999), penalty amounts within ±1,000 (IMPs or percent). Timestamps are checked against a
window around the run (a setting, not a property of the record type: `flows.ingest`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import polars as pl

from transforms.bridge.contracts import is_passed_out
from transforms.calendar import RAW_MONTH


def _dataframely():
    """dataframely, imported without SQLAlchemy when nothing has imported it yet: dataframely
    imports SQLAlchemy (installed for Prefect's server) only for its SQL column types, which
    duplirank does not use, and it is most of dataframely's import time. A later
    `import sqlalchemy` (Prefect) loads it as usual."""
    if "dataframely" in sys.modules or "sqlalchemy" in sys.modules:
        import dataframely

        return dataframely
    sys.modules["sqlalchemy"] = None  # type: ignore[assignment]  (ImportError on import)
    try:
        import dataframely
    finally:
        if sys.modules.get("sqlalchemy", 0) is None:
            del sys.modules["sqlalchemy"]
    return dataframely


dy = _dataframely()

TS = pl.Datetime("us", "UTC")
MAX_CONTREE_POINTS = 3_000
MAX_BRIDGE_SCORE = 7_600
MAX_DEALS_IN_TOURNAMENT = 200
MAX_BOARD = 999
MAX_PENALTY = 1_000.0

BRONZE_META: dict[str, pl.DataType] = {
    RAW_MONTH: pl.String(),  # the storage partition: the raw month (transforms/calendar.py)
    "extra": pl.String(),  # unknown fields of the line, as a JSON object
    "source_file": pl.String(),
    "line_no": pl.Int64(),
    "delivery": pl.Int64(),
}


# --------------------------------------------------------------------------- field builders
def text(nullable: bool = False, choices: tuple[str, ...] | None = None) -> dy.String:
    """A string field; a required one must not be blank; `choices` lists its allowed values."""
    check: dict[str, Callable[[pl.Expr], pl.Expr]] = {}
    if not nullable:
        check["not_blank"] = lambda c: c.str.strip_chars() != ""
    if choices is not None:
        check["choices"] = lambda c: c.is_in(choices)
    return dy.String(nullable=nullable, check=check or None, metadata={"choices": choices})


def json_object(nullable: bool = True) -> dy.String:
    """A JSON object field, kept as its JSON text."""
    return dy.String(nullable=nullable, metadata={"kind": "obj"})


def integer(lo: int, hi: int | None = None, nullable: bool = False) -> dy.Int64:
    return dy.Int64(nullable=nullable, min=lo, max=hi)


def timestamp(nullable: bool = False) -> dy.Datetime:
    """ISO-8601 with a UTC offset, stored in UTC (a timestamp without offset is ambiguous)."""
    return dy.Datetime(nullable=nullable, time_zone="UTC", time_unit="us")


def rule(reason: Callable[[], pl.Expr]):
    """A cross-field rule (dataframely) with the reason of the rows that fail it."""

    def decorate(validation_fn):
        factory = dy.rule()(validation_fn)
        factory.reason = reason
        return factory

    return decorate


def _missing_of(*names: str) -> pl.Expr:
    """`missing field X` for the first of `names` that is null."""
    first = pl.when(pl.col(names[0]).is_null()).then(pl.lit(names[0]))
    for name in names[1:]:
        first = first.when(pl.col(name).is_null()).then(pl.lit(name))
    return pl.format("missing field {}", first.otherwise(pl.lit(names[-1])))


def _after(end: str, start: str) -> pl.Expr:
    return pl.col(end).is_null() | pl.col(start).is_null() | (pl.col(end) >= pl.col(start))


# --------------------------------------------------------------------------- record types
class Line(dy.Schema):
    """Every record is checked with the number of the line it came from (to name it)."""

    line_no = dy.Int64()


class SimultaneDeal(Line):
    name: ClassVar[str] = "simultane.deal"
    key: ClassVar[tuple[str, ...]] = ("tournament_id", "deal_no", "player_id")

    tournament_id = text()
    tournament_start = timestamp()
    deals_in_tournament = integer(1, MAX_DEALS_IN_TOURNAMENT)
    deal_no = integer(1)
    player_id = text()
    is_bot = dy.Bool()
    started_at = timestamp()
    finished_at = timestamp(nullable=True)
    status = text(choices=("finished", "timeout", "disconnected", "quit"))
    points_made = integer(0, MAX_CONTREE_POINTS, nullable=True)
    points_conceded = integer(0, MAX_CONTREE_POINTS, nullable=True)
    contract = text(nullable=True)

    @rule(lambda: _missing_of("points_made", "points_conceded"))
    def finished_needs_points(cls) -> pl.Expr:
        points = pl.col("points_made").is_not_null() & pl.col("points_conceded").is_not_null()
        return (pl.col("status") != "finished") | points

    @rule(lambda: pl.format("deal_no {} out of range 1..{}", "deal_no", "deals_in_tournament"))
    def deal_no_within_tournament(cls) -> pl.Expr:
        return pl.col("deal_no") <= pl.col("deals_in_tournament")

    @rule(lambda: pl.lit("finished_at before started_at"))
    def finished_after_started(cls) -> pl.Expr:
        return _after("finished_at", "started_at")


class FfMatch(Line):
    name: ClassVar[str] = "ff.match"
    key: ClassVar[tuple[str, ...]] = ("match_id",)

    match_id = text()
    match_type = text(choices=("classique", "attaque", "attaque_surcontrat"))
    player_a = text()
    player_b = text()
    ranked = dy.Bool()
    created_at = timestamp()
    scheduled_at = timestamp(nullable=True)
    started_at = timestamp(nullable=True)
    ended_at = timestamp(nullable=True)

    @rule(lambda: pl.lit("player_a and player_b are the same"))
    def two_players(cls) -> pl.Expr:
        return pl.col("player_a") != pl.col("player_b")

    @rule(lambda: pl.lit("ended_at before started_at"))
    def ended_after_started(cls) -> pl.Expr:
        return _after("ended_at", "started_at")


class FfDeal(Line):
    name: ClassVar[str] = "ff.deal"
    key: ClassVar[tuple[str, ...]] = ("match_id", "deal_no", "player_id")

    match_id = text()
    deal_no = integer(1, 16)
    role = text(choices=("attack", "defense"))
    player_id = text()
    started_at = timestamp()
    finished_at = timestamp(nullable=True)
    points_made = integer(0, MAX_CONTREE_POINTS, nullable=True)
    points_conceded = integer(0, MAX_CONTREE_POINTS, nullable=True)

    @rule(lambda: pl.lit("points_made and points_conceded must be given together"))
    def points_together(cls) -> pl.Expr:
        return pl.col("points_made").is_null() == pl.col("points_conceded").is_null()

    @rule(lambda: pl.lit("finished_at before started_at"))
    def finished_after_started(cls) -> pl.Expr:
        return _after("finished_at", "started_at")


class FfDisconnect(Line):
    name: ClassVar[str] = "ff.disconnect"
    key: ClassVar[tuple[str, ...]] = ("match_id", "player_id", "disconnected_at")

    match_id = text()
    player_id = text()
    disconnected_at = timestamp()
    reconnected_at = timestamp(nullable=True)

    @rule(lambda: pl.lit("reconnected_at before disconnected_at"))
    def reconnected_after(cls) -> pl.Expr:
        return _after("reconnected_at", "disconnected_at")


class BridgeEvent(Line):
    name: ClassVar[str] = "bridge.event"
    key: ClassVar[tuple[str, ...]] = ("event_id",)

    event_id = text()
    date = dy.Date()
    scoring = text(
        choices=(
            "three_tables",
            "matchpoints",
            "butler",
            "cavendish",
            "cavendish_avg",
            "sunday_times",
        )
    )
    options = json_object()
    boards_per_round = integer(1, MAX_BOARD, nullable=True)
    movement = text(nullable=True)


def _passed_out() -> pl.Expr:
    return is_passed_out(pl.col("contract"))


def _bridge_score_missing() -> pl.Expr:
    return (
        pl.when(pl.col("contract").is_null())
        .then(pl.lit("missing score: give score_ns, contract+declarer+result, or adjusted"))
        .otherwise(_missing_of("declarer", "result"))
    )


class BridgeResult(Line):
    name: ClassVar[str] = "bridge.result"
    key: ClassVar[tuple[str, ...]] = ("event_id", "section", "board", "ns_pair", "ew_pair")

    event_id = text()
    section = text(nullable=True)
    board = integer(1, MAX_BOARD)
    round = integer(1, MAX_BOARD, nullable=True)
    ns_pair = text()
    ew_pair = text()
    score_ns = integer(-MAX_BRIDGE_SCORE, MAX_BRIDGE_SCORE, nullable=True)
    contract = text(nullable=True)
    declarer = text(nullable=True, choices=("N", "E", "S", "W"))
    result = text(nullable=True)
    adjusted = text(nullable=True)

    @rule(lambda: pl.lit("ns_pair and ew_pair are the same"))
    def two_pairs(cls) -> pl.Expr:
        return pl.col("ns_pair") != pl.col("ew_pair")

    @rule(_bridge_score_missing)
    def has_score(cls) -> pl.Expr:
        played = pl.col("contract").is_not_null() & (
            _passed_out() | (pl.col("declarer").is_not_null() & pl.col("result").is_not_null())
        )
        return pl.col("score_ns").is_not_null() | played | pl.col("adjusted").is_not_null()


class BridgePenalty(Line):
    name: ClassVar[str] = "bridge.penalty"
    key: ClassVar[tuple[str, ...]] = ("event_id", "pair", "kind", "board", "note")

    event_id = text()
    pair = text()
    kind = text(choices=("p", "z", "m", "w"))
    board = integer(1, MAX_BOARD, nullable=True)
    amount = dy.Float64(nullable=True, min=-MAX_PENALTY, max=MAX_PENALTY)
    note = text(nullable=True)


# --------------------------------------------------------------------------- the registry
KINDS = {dy.String: "str", dy.Int64: "int", dy.Bool: "bool", dy.Datetime: "ts",
         dy.Date: "date", dy.Float64: "num"}  # fmt: skip


@dataclass(frozen=True)
class Parent:
    record_type: str  # the parent's record type
    column: str  # the key column the child shares with it
    noun: str  # `unknown <noun> <id>` when the parent is nowhere


@dataclass(frozen=True)
class RecordType:
    declaration: type[dy.Schema]
    parent: Parent | None = None

    @property
    def name(self) -> str:
        return self.declaration.name

    @property
    def key(self) -> tuple[str, ...]:
        """Identifies "the same record" across deliveries."""
        return self.declaration.key

    @property
    def bronze_name(self) -> str:
        return self.name.replace(".", "_")

    @cached_property
    def fields(self) -> dict[str, dy.Column]:
        """The record's own fields (the declaration also checks `line_no`)."""
        return {k: v for k, v in self.declaration.columns().items() if k not in BRONZE_META}

    @cached_property
    def kinds(self) -> dict[str, str]:
        return {
            name: (column.metadata or {}).get("kind") or KINDS[type(column)]
            for name, column in self.fields.items()
        }

    def kind(self, field: str) -> str:
        """How the JSON value is decoded: str, int, bool, ts, date, num or obj (JSON text)."""
        return self.kinds[field]

    def schema(self) -> dict[str, pl.DataType]:
        """Bronze columns: the fields, then the metadata of the line they came from."""
        return {name: col.dtype for name, col in self.fields.items()} | BRONZE_META

    @cached_property
    def column_names(self) -> list[str]:
        """The columns the declaration checks (`line_no` and the fields)."""
        return self.declaration.column_names()

    def rule_exprs(self) -> dict[str, pl.Expr]:
        """Every rule of the declaration (per field and cross-field) as the boolean
        expression dataframely evaluates (true: valid; null: counted as valid) — what its
        `filter` checks, without its bookkeeping, for a screen of many rows at once."""
        rules = self.declaration._validation_rules(with_cast=False)  # dataframely 3.1
        return {name: rule.expr for name, rule in rules.items()}

    def rules(self) -> list[tuple[str, str | None, pl.Expr]]:
        """(dataframely rule name, field or None, reason) in the order reasons are chosen:
        field by field as declared (missing, then its own checks), then cross-field rules."""
        out = []
        for name, column in self.fields.items():
            rule_names = ["nullability"] + list(column.validation_rules(pl.col(name)))
            for rule_name in dict.fromkeys(rule_names):
                if rule_name == "nullability" and column.nullable:
                    continue
                out.append((f"{name}|{rule_name}", name, field_reason(name, column, rule_name)))
        for attr, value in vars(self.declaration).items():
            if hasattr(value, "reason"):
                out.append((attr, None, value.reason()))
        return out


def field_reason(name: str, column: dy.Column, rule_name: str) -> pl.Expr:
    """The reason a value of a field fails one of its own checks."""
    value = pl.col(name).cast(pl.String)
    if rule_name == "nullability":
        return pl.lit(f"missing field {name}")
    if rule_name == "check__not_blank":
        return pl.lit(f"field {name} is empty")
    if rule_name == "check__choices":
        allowed = ", ".join(column.metadata["choices"])
        return pl.format(f"{name} '{{}}' not one of {allowed}", value)
    if rule_name in ("nan", "inf"):
        return pl.format(f"field {name} is {{}}: not a number", value)
    if rule_name in ("min", "max"):
        return out_of_range(name, column, value, below=rule_name == "min")
    raise AssertionError(f"no reason for rule {rule_name} of {name}")


def out_of_range(name: str, column: dy.Column, value: pl.Expr, below: bool) -> pl.Expr:
    """`negative points made` (a count from 0), else `deal_no 17 out of range 1..16`."""
    if below and column.min == 0:
        return pl.lit(f"negative {name.replace('_', ' ')}")
    lo = "" if column.min is None else f"{column.min:g}"
    hi = "+" if column.max is None else f"..{column.max:g}"
    return pl.format(f"{name} {{}} out of range {lo}{hi}", value)


RECORD_TYPES: dict[str, RecordType] = {
    rt.name: rt
    for rt in (
        RecordType(SimultaneDeal),
        RecordType(FfMatch),
        RecordType(FfDeal, Parent("ff.match", "match_id", "match")),
        RecordType(FfDisconnect, Parent("ff.match", "match_id", "match")),
        RecordType(BridgeEvent),
        RecordType(BridgeResult, Parent("bridge.event", "event_id", "event")),
        RecordType(BridgePenalty, Parent("bridge.event", "event_id", "event")),
    )
}
