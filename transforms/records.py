"""Raw record types of data.md and their validation.

`validate_lines` turns the lines of one delivered file into typed rows per record type plus
quarantine rows, each with a one-line reason. Every line ends in exactly one of the two, so
`lines read = rows accepted + rows quarantined` holds by construction.

Parsing is a loop over lines (json.loads per line) because every rejected line needs its own
reason; everything after it (scoring, aggregates) is vectorised.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

import polars as pl

from transforms.bridge.contracts import PASSED_OUT

TS = pl.Datetime("us", "UTC")


@dataclass(frozen=True)
class Field:
    name: str
    kind: str  # "str", "int", "bool", "ts", "date", "num", "obj"
    required: bool = True
    choices: tuple[str, ...] | None = None
    min_value: int | None = None
    max_value: int | None = None


def _f(name: str, kind: str, required: bool = True, **kw) -> Field:
    return Field(name, kind, required, **kw)


@dataclass(frozen=True)
class RecordType:
    name: str
    fields: tuple[Field, ...]
    key: tuple[str, ...]  # identifies "the same record" across deliveries
    checks: tuple = field(default=())  # functions row -> reason | None

    @property
    def bronze_name(self) -> str:
        return self.name.replace(".", "_")

    def schema(self) -> dict[str, pl.DataType]:
        dtypes = {
            "str": pl.String(),
            "int": pl.Int64(),
            "bool": pl.Boolean(),
            "ts": TS,
            "date": pl.Date(),
            "num": pl.Float64(),
            "obj": pl.String(),  # kept as JSON text
        }
        cols = {f.name: dtypes[f.kind] for f in self.fields}
        return cols | BRONZE_META


BRONZE_META: dict[str, pl.DataType] = {
    "raw_month": pl.String(),  # the storage partition (transforms/calendar.py)
    "extra": pl.String(),
    "source_file": pl.String(),
    "line_no": pl.Int64(),
    "delivery": pl.Int64(),
}

QUARANTINE_SCHEMA: dict[str, pl.DataType] = {
    "file": pl.String(),
    "line_no": pl.Int64(),
    "raw": pl.String(),
    "reason": pl.String(),
}


def _finished_needs_points(row: dict) -> str | None:
    if row["status"] == "finished":
        for name in ("points_made", "points_conceded"):
            if row.get(name) is None:
                return f"missing field {name}"
    return None


def _deal_no_within_tournament(row: dict) -> str | None:
    if row["deal_no"] > row["deals_in_tournament"]:
        return f"deal_no {row['deal_no']} out of range 1..{row['deals_in_tournament']}"
    return None


def _finished_after_started(row: dict, start: str = "started_at", end: str = "finished_at"):
    if row.get(end) is not None and row[end] < row[start]:
        return f"{end} before {start}"
    return None


def _ff_points_together(row: dict) -> str | None:
    if (row.get("points_made") is None) != (row.get("points_conceded") is None):
        return "points_made and points_conceded must be given together"
    return None


def _bridge_result_has_score(row: dict) -> str | None:
    contract = row.get("contract")
    passed_out = contract is not None and contract.strip().upper() in PASSED_OUT
    has_contract = passed_out or all(
        row.get(k) is not None for k in ("contract", "declarer", "result")
    )
    if row.get("score_ns") is None and not has_contract and row.get("adjusted") is None:
        if contract is not None:
            return "missing field " + ("declarer" if row.get("declarer") is None else "result")
        return "missing score: give score_ns, contract+declarer+result, or adjusted"
    return None


def _reconnected_after(row: dict) -> str | None:
    return _finished_after_started(row, "disconnected_at", "reconnected_at")


RECORD_TYPES: dict[str, RecordType] = {
    rt.name: rt
    for rt in (
        RecordType(
            "simultane.deal",
            (
                _f("tournament_id", "str"),
                _f("tournament_start", "ts"),
                _f("deals_in_tournament", "int", min_value=1),
                _f("deal_no", "int", min_value=1),
                _f("player_id", "str"),
                _f("is_bot", "bool"),
                _f("started_at", "ts"),
                _f("finished_at", "ts", False),
                _f(
                    "status",
                    "str",
                    choices=("finished", "timeout", "disconnected", "quit"),
                ),
                _f("points_made", "int", False, min_value=0),
                _f("points_conceded", "int", False, min_value=0),
                _f("contract", "str", False),
            ),
            key=("tournament_id", "deal_no", "player_id"),
            checks=(_finished_needs_points, _deal_no_within_tournament, _finished_after_started),
        ),
        RecordType(
            "ff.match",
            (
                _f("match_id", "str"),
                _f("match_type", "str", choices=("classique", "attaque", "attaque_surcontrat")),
                _f("player_a", "str"),
                _f("player_b", "str"),
                _f("ranked", "bool"),
                _f("created_at", "ts"),
                _f("scheduled_at", "ts", False),
                _f("started_at", "ts", False),
                _f("ended_at", "ts", False),
            ),
            key=("match_id",),
            checks=(
                lambda r: (
                    "player_a and player_b are the same" if r["player_a"] == r["player_b"] else None
                ),
                lambda r: (
                    _finished_after_started(r, "started_at", "ended_at")
                    if r.get("started_at") is not None
                    else None
                ),
            ),
        ),
        RecordType(
            "ff.deal",
            (
                _f("match_id", "str"),
                _f("deal_no", "int", min_value=1, max_value=16),
                _f("role", "str", choices=("attack", "defense")),
                _f("player_id", "str"),
                _f("started_at", "ts"),
                _f("finished_at", "ts", False),
                _f("points_made", "int", False, min_value=0),
                _f("points_conceded", "int", False, min_value=0),
            ),
            key=("match_id", "deal_no", "player_id"),
            checks=(_ff_points_together, _finished_after_started),
        ),
        RecordType(
            "ff.disconnect",
            (
                _f("match_id", "str"),
                _f("player_id", "str"),
                _f("disconnected_at", "ts"),
                _f("reconnected_at", "ts", False),
            ),
            key=("match_id", "player_id", "disconnected_at"),
            checks=(_reconnected_after,),
        ),
        RecordType(
            "bridge.event",
            (
                _f("event_id", "str"),
                _f("date", "date"),
                _f(
                    "scoring",
                    "str",
                    choices=(
                        "three_tables",
                        "matchpoints",
                        "butler",
                        "cavendish",
                        "cavendish_avg",
                        "sunday_times",
                    ),
                ),
                _f("options", "obj", False),
                _f("boards_per_round", "int", False, min_value=1),
                _f("movement", "str", False),
            ),
            key=("event_id",),
        ),
        RecordType(
            "bridge.result",
            (
                _f("event_id", "str"),
                _f("section", "str", False),
                _f("board", "int", min_value=1),
                _f("round", "int", False, min_value=1),
                _f("ns_pair", "str"),
                _f("ew_pair", "str"),
                _f("score_ns", "int", False),
                _f("contract", "str", False),
                _f("declarer", "str", False, choices=("N", "E", "S", "W")),
                _f("result", "str", False),
                _f("adjusted", "str", False),
            ),
            key=("event_id", "section", "board", "ns_pair", "ew_pair"),
            checks=(_bridge_result_has_score,),
        ),
        RecordType(
            "bridge.penalty",
            (
                _f("event_id", "str"),
                _f("pair", "str"),
                _f("kind", "str", choices=("p", "z", "m", "w")),
                _f("board", "int", False, min_value=1),
                _f("amount", "num", False),
                _f("note", "str", False),
            ),
            key=("event_id", "pair", "kind", "board", "note"),
        ),
    )
}


def parse_timestamp(value: str) -> datetime:
    """ISO-8601 with an offset, as UTC. A timestamp without offset is ambiguous: rejected."""
    ts = datetime.fromisoformat(value)
    if ts.tzinfo is None:
        raise ValueError("no UTC offset")
    return ts.astimezone(UTC)


def _coerce(f: Field, value):
    """The typed value, or raise ValueError with a reason."""
    if f.kind == "str":
        if not isinstance(value, str):
            raise ValueError(f"field {f.name} must be a string")
        if not value.strip() and f.required:
            raise ValueError(f"field {f.name} is empty")
        if f.choices is not None and value not in f.choices:
            raise ValueError(f"{f.name} {value!r} not one of {', '.join(f.choices)}")
        return value
    if f.kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                raise ValueError(f"field {f.name} must be an integer")
        if f.min_value is not None and value < f.min_value:
            if f.min_value == 0:
                raise ValueError(f"negative {f.name.replace('_', ' ')}")
            hi = f"..{f.max_value}" if f.max_value is not None else "+"
            raise ValueError(f"{f.name} {value} out of range {f.min_value}{hi}")
        if f.max_value is not None and value > f.max_value:
            raise ValueError(f"{f.name} {value} out of range {f.min_value}..{f.max_value}")
        return value
    if f.kind == "num":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"field {f.name} must be a number")
        return float(value)
    if f.kind == "bool":
        if not isinstance(value, bool):
            raise ValueError(f"field {f.name} must be true or false")
        return value
    if f.kind == "ts":
        if not isinstance(value, str):
            raise ValueError(f"field {f.name} must be an ISO-8601 timestamp")
        try:
            return parse_timestamp(value)
        except ValueError:
            raise ValueError(f"field {f.name} is not an ISO-8601 timestamp with offset") from None
    if f.kind == "date":
        try:
            return date.fromisoformat(value)
        except (TypeError, ValueError):
            raise ValueError(f"field {f.name} is not a date YYYY-MM-DD") from None
    if f.kind == "obj":
        if not isinstance(value, dict):
            raise ValueError(f"field {f.name} must be an object")
        return json.dumps(value, sort_keys=True)
    raise AssertionError(f.kind)


def validate_record(rt: RecordType, obj: dict) -> dict:
    """Typed row of one record, or ValueError with the reason."""
    row = {}
    for f in rt.fields:
        value = obj.get(f.name)
        if value is None:
            if f.required:
                raise ValueError(f"missing field {f.name}")
            row[f.name] = None
            continue
        row[f.name] = _coerce(f, value)
    for check in rt.checks:
        reason = check(row)
        if reason:
            raise ValueError(reason)
    known = {f.name for f in rt.fields} | {"type"}
    extra = {k: v for k, v in obj.items() if k not in known}
    row["extra"] = json.dumps(extra, sort_keys=True, ensure_ascii=False) if extra else None
    return row


@dataclass
class Validated:
    """Rows of one file: typed rows per record type, and quarantined lines."""

    rows: dict[str, list[dict]]
    quarantine: list[dict]
    lines_read: int

    def frames(self) -> dict[str, pl.DataFrame]:
        return {
            name: pl.DataFrame(rows, schema=RECORD_TYPES[name].schema(), orient="row")
            for name, rows in self.rows.items()
            if rows
        }

    def quarantine_frame(self) -> pl.DataFrame:
        return pl.DataFrame(self.quarantine, schema=QUARANTINE_SCHEMA, orient="row")

    @property
    def accepted(self) -> int:
        return sum(len(r) for r in self.rows.values())


def validate_lines(
    lines: Iterable[bytes | str],
    source: str,
    delivery: int = 0,
    known_types: Iterable[str] | None = None,
) -> Validated:
    """Validate the raw lines of one file.

    `known_types` limits which record types are accepted (the others are quarantined as
    `unknown type`); by default all of RECORD_TYPES. Blank lines count as read and are
    quarantined (`empty line`) so that the per-file identity always holds.
    """
    types = RECORD_TYPES if known_types is None else {t: RECORD_TYPES[t] for t in known_types}
    rows: dict[str, list[dict]] = {}
    quarantine: list[dict] = []
    first_seen: dict[str, int] = {}
    key_seen: dict[tuple, int] = {}
    n = 0
    for n, line in enumerate(lines, start=1):
        if isinstance(line, bytes):
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError:
                quarantine.append(
                    {
                        "file": source,
                        "line_no": n,
                        "raw": line.decode("utf-8", "replace"),
                        "reason": "not UTF-8",
                    }
                )
                continue
        else:
            text = line
        text = text.rstrip("\r\n")

        def reject(reason: str, raw: str = text, line_no: int = n) -> None:
            quarantine.append({"file": source, "line_no": line_no, "raw": raw, "reason": reason})

        if not text.strip():
            reject("empty line")
            continue
        if text in first_seen:
            reject(f"duplicate of line {first_seen[text]}")
            continue
        first_seen[text] = n
        try:
            obj = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            reject("invalid JSON")
            continue
        if not isinstance(obj, dict):
            reject("not a JSON object")
            continue
        rtype = obj.get("type")
        if not isinstance(rtype, str):
            reject("missing field type")
            continue
        rt = types.get(rtype)
        if rt is None:
            reject(f"unknown type {rtype[:40]!r}")
            continue
        try:
            row = validate_record(rt, obj)
        except ValueError as err:
            reject(str(err))
            continue
        key = (rt.name, *(row[k] for k in rt.key))
        if key in key_seen:
            reject(f"conflicting duplicate of line {key_seen[key]} (same {', '.join(rt.key)})")
            continue
        key_seen[key] = n
        row |= {"raw_month": None, "source_file": source, "line_no": n, "delivery": delivery}
        rows.setdefault(rt.name, []).append(row)
    return Validated(rows, quarantine, n)
