"""Type the JSON text of each field as its record type declares it, with Polars expressions.

Every field of a line comes as its JSON text (`"abc"`, `17`, `true`, `{…}`, `NaN`, or null
when absent). `typed_columns` gives each field's value (null when the text does not decode)
and two flags: `_bad_<field>` (given but not decodable) and `_out_<field>` (a time outside the
run's plausible window). Reasons are worded only for the rows that fail (`decode_reason`,
`window_reason`), so the common path is a few string scans per field.

A JSON string is its text without the quotes, or Polars' JSON decoding when it has escapes; an
integer must be integral (`17.0` is 17) and fit in 64 bits (`2**63` and `1e30` are out of
range: the reason names the value as written); a timestamp is ISO-8601 with a UTC offset
(`Z`, `+01:00`, `+0100`, `+01`; seconds and fractions optional), a date `YYYY-MM-DD`.
"""

from __future__ import annotations

from functools import cache

import polars as pl

from flows.ingest.options import Window
from transforms.record_types import RecordType, out_of_range

TS_FORMAT = '"%Y-%m-%dT%H:%M:%S%.f%#z"'  # the common case, read with its quotes
# the commonest layout of all, in UTC to the second: read by Polars' parser of fixed layouts
# (~4x faster than chrono's general one, which TS_FORMAT needs); the others by TS_FORMAT
TS_ZULU = '"%Y-%m-%dT%H:%M:%SZ"'
TS_FALLBACKS = (
    "%Y-%m-%dT%H:%M:%S%.f%#z",
    "%Y-%m-%d %H:%M:%S%.f%#z",
    "%Y-%m-%dT%H:%M%#z",
    "%Y-%m-%d %H:%M%#z",
)  # fmt: skip  (`%+` is not used: it drops offsets)
INT64_LIMIT = 2.0**63
NOT_A_NUMBER = r"^-?(?i:nan|inf|infinity)$"


def text(field: str) -> pl.Expr:
    return pl.col(f"_t_{field}")


def string_value(t: pl.Expr) -> pl.Expr:
    """The value of a JSON string text; null when the text is not a string."""
    is_string = t.str.starts_with('"')
    escaped = is_string & t.str.contains("\\", literal=True)
    decoded = pl.when(escaped).then(t).str.json_decode(pl.String)
    return pl.when(escaped).then(decoded).when(is_string).then(t.str.strip_chars('"'))


def _to_datetime(t: pl.Expr, fmt: str) -> pl.Expr:
    return t.str.to_datetime(fmt, strict=False, time_unit="us", time_zone="UTC")


def fast_value(rt: RecordType, field: str) -> pl.Expr:
    """The typed value of a field in the common case (null when absent, and for the rare
    texts that need `repair`: escaped strings, `17.0`, other timestamp layouts)."""
    t = text(field)
    kind = rt.kind(field)
    if kind == "str":  # without a backslash no `"` is inside: strip the two quotes
        plain = t.str.starts_with('"') & ~t.str.contains("\\", literal=True)
        return pl.when(plain).then(t.str.strip_chars('"'))
    if kind == "int":
        return t.cast(pl.Int64, strict=False)
    if kind == "num":
        number = t.cast(pl.Float64, strict=False)
        return pl.when(number.is_finite()).then(number)
    if kind == "bool":
        return pl.when(t == "true").then(True).when(t == "false").then(False)
    if kind == "ts":  # the texts of other layouts: `fast_fallback`
        return _to_datetime(pl.when(t.str.ends_with('Z"')).then(t), TS_ZULU)
    if kind == "date":
        return t.str.to_date('"%Y-%m-%d"', strict=False)
    if kind == "obj":
        return pl.when(t.str.starts_with("{")).then(t)
    raise AssertionError(kind)


def fast_fallback(rt: RecordType, field: str) -> pl.Expr | None:
    """The fast value of the texts `fast_value` reads in a second pass (the value it gave
    null): a timestamp in another layout than `TS_ZULU`'s, read by `TS_FORMAT`."""
    if rt.kind(field) != "ts":
        return None
    value = pl.col(field)
    return pl.coalesce(value, _to_datetime(pl.when(value.is_null()).then(text(field)), TS_FORMAT))


def repaired_value(rt: RecordType, field: str) -> pl.Expr | None:
    """The value of the texts `fast_value` leaves aside, for the rows that failed it."""
    t = text(field)
    kind = rt.kind(field)
    if kind == "str":
        return string_value(t)
    if kind == "int":
        number = t.cast(pl.Float64, strict=False)
        integral = number.is_finite() & (number == number.floor()) & (number.abs() < INT64_LIMIT)
        return pl.when(integral).then(number.cast(pl.Int64))
    if kind == "ts":
        return pl.coalesce(*(_to_datetime(string_value(t), f) for f in TS_FALLBACKS))
    return None


def typed(rt: RecordType, rows: pl.DataFrame, window: Window | None) -> pl.DataFrame:
    """Each field's value, `_bad_<field>` (given, not decoded) and `_out_<field>` (times and
    dates outside the window). `_bad_` rows go through `repair` before they are rejected."""
    values, fallbacks, flags = _typed_exprs(rt)
    if fallbacks:
        rows = rows.with_columns(values)
        values = fallbacks
    return rows.with_columns(values).with_columns(*flags, *window_flags(rt, window))


@cache
def _typed_exprs(rt: RecordType) -> tuple[list[pl.Expr], list[pl.Expr], list[pl.Expr]]:
    """(values, their fallbacks, `_bad_` flags): built once per record type, used for every
    chunk."""
    values = [fast_value(rt, field).alias(field) for field in rt.fields]
    fallbacks = [e.alias(f) for f in rt.fields if (e := fast_fallback(rt, f)) is not None]
    bad = [(text(f).is_not_null() & pl.col(f).is_null()).alias(f"_bad_{f}") for f in rt.fields]
    return values, fallbacks, bad


@cache
def window_flags(rt: RecordType, window: Window | None) -> list[pl.Expr]:
    """`_out_<field>`: a time or date given outside the plausible window."""
    if window is None:
        return []
    exprs = []
    for field in rt.fields:
        kind = rt.kind(field)
        if kind in ("ts", "date"):
            first, end = window.first, window.end
            if kind == "date":
                first, end = first.date(), end.date()
            v = pl.col(field)
            exprs.append(((v < first) | (v >= end)).fill_null(False).alias(f"_out_{field}"))
    return exprs


def repair(rt: RecordType, rows: pl.DataFrame, window: Window | None) -> pl.DataFrame:
    """Rows with a field `fast_value` did not decode, decoded the slow way where it can be
    (only the fields that failed in these rows: a few rows, a few expressions)."""
    failed = rows.select(pl.col(f"_bad_{f}").any() for f in rt.fields).row(0)
    fields = [f for f, bad in zip(rt.fields, failed, strict=True) if bad]
    values, flags = _repair_exprs(rt, tuple(fields))
    if not values:
        return rows
    windowed = [e for e in window_flags(rt, window) if e.meta.output_name()[5:] in fields]
    return rows.with_columns(values).with_columns(*flags, *windowed)


@cache
def _repair_exprs(rt: RecordType, fields: tuple[str, ...]) -> tuple[list[pl.Expr], list[pl.Expr]]:
    fields = [f for f in fields if repaired_value(rt, f) is not None]
    values = [pl.coalesce(f, repaired_value(rt, f)).alias(f) for f in fields]
    bad = [(text(f).is_not_null() & pl.col(f).is_null()).alias(f"_bad_{f}") for f in fields]
    return values, bad


def decode_reason(rt: RecordType, field: str) -> pl.Expr:
    """Why a field's text does not decode (for rows where `_bad_<field>` is set)."""
    t = text(field)
    kind = rt.kind(field)
    is_string = t.str.starts_with('"')
    wrong = {
        "str": f"field {field} must be a string",
        "int": f"field {field} must be an integer",
        "num": f"field {field} must be a number",
        "bool": f"field {field} must be true or false",
        "ts": f"field {field} must be an ISO-8601 timestamp",
        "date": f"field {field} is not a date YYYY-MM-DD",
        "obj": f"field {field} must be an object",
    }[kind]
    reason = pl.when(t.str.contains(NOT_A_NUMBER)).then(
        pl.format(f"field {field} is {{}}: not a number", t)
    )
    if kind == "ts":
        no_offset = f"field {field} is not an ISO-8601 timestamp with offset"
        reason = reason.when(is_string).then(pl.lit(no_offset))
    if kind in ("int", "num"):
        number = t.cast(pl.Float64, strict=False)
        big = number.is_infinite() | (number.abs() >= INT64_LIMIT)
        column = rt.fields[field]
        shown = pl.when(number < 0).then(out_of_range(field, column, t, below=True))
        reason = reason.when(big).then(shown.otherwise(out_of_range(field, column, t, False)))
    return reason.otherwise(pl.lit(wrong))


def window_reason(field: str, window: Window) -> pl.Expr:
    shown = pl.coalesce(string_value(text(field)), pl.col(field).cast(pl.String))
    return pl.format(f"{field} {{}} outside the plausible window {window.text}", shown)
