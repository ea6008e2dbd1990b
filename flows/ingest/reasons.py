"""The words of a rejected line's reason: a line that is no record of a known type
(`line_reason`), the first failing check of a record (`ordered_checks`, in the order reasons
are chosen), invalid JSON (`invalid_json_reason`: a NUL byte, a lone surrogate), and NaN or
Infinity in an object (`non_finite_reason`); the quarantined text of a line (`raw_texts`)."""

from __future__ import annotations

import json
import re
from functools import cache

import numpy as np
import polars as pl
import pyarrow as pa

from flows.ingest import decode
from flows.ingest.line_split import lines_at
from flows.ingest.options import Window
from transforms.record_types import RecordType

LONE_SURROGATE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])|(?<![89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


@cache
def ordered_checks(rt: RecordType, window: Window | None) -> list[tuple[str, bool, pl.Expr, str]]:
    """(column, negate, reason, rule) of every check in the order reasons are chosen: field
    by field as declared (not decodable, missing, its own rules, outside the window), then
    the cross-field rules. The check fails where its boolean column is true (`_bad_`, `_out_`
    flags), or false when `negate` (a rule column: true when valid)."""
    checks = []
    rules = rt.rules()
    for name in rt.fields:
        checks.append((f"_bad_{name}", False, decode.decode_reason(rt, name), f"{name}|type"))
        checks += [(rule, True, reason, rule) for rule, f, reason in rules if f == name]
        if window is not None and rt.kind(name) in ("ts", "date"):
            reason = decode.window_reason(name, window)
            checks.append((f"_out_{name}", False, reason, f"{name}|window"))
    checks += [(rule, True, reason, rule) for rule, f, reason in rules if f is None]
    return checks


@cache
def line_reason(encoding: str) -> pl.Expr:
    """(reason, rule) of a line that is no record of a known type (built once)."""
    problem, type_text, type_name = pl.col("problem"), pl.col("type"), pl.col("_type")
    encoding = "UTF-8" if encoding == "utf-8" else f"valid {encoding.upper()}"
    checks = [
        (problem == "not_utf8", pl.lit(f"not {encoding}"), "not_utf8"),
        (problem == "empty_line", pl.lit("empty line"), "empty_line"),
        (problem == "invalid_json", pl.lit("invalid JSON"), "invalid_json"),
        (problem == "not_object", pl.lit("not a JSON object"), "not_object"),
        (type_text.is_null(), pl.lit("missing field type"), "type|nullability"),
        (
            type_name.is_null(),
            pl.format("field type must be a string (got {})", type_text.str.slice(0, 40)),
            "type|type",
        ),
        (pl.lit(True), pl.format("unknown type '{}'", type_name.str.slice(0, 40)), "unknown_type"),
    ]
    return first_of([(c, pl.struct(r.alias("reason"), rule=pl.lit(k))) for c, r, k in checks])


def first_of(cases: list[tuple[pl.Expr, pl.Expr]]) -> pl.Expr:
    """The value of the first case whose condition holds (null when none does)."""
    expr = pl.when(cases[0][0].fill_null(False)).then(cases[0][1])
    for condition, then in cases[1:]:
        expr = expr.when(condition.fill_null(False)).then(then)
    return expr


def raw_texts(raw: pa.Array, positions: np.ndarray) -> pl.Series:
    """The text of some lines without their line end (invalid UTF-8 shown with U+FFFD)."""
    return _texts(lines_at(raw, positions))  # quarantined lines: few


def _texts(lines: list[bytes]) -> pl.Series:
    text = pl.Series([b.decode("utf-8", "replace") for b in lines], dtype=pl.String)
    return text.str.strip_suffix("\n").str.strip_suffix("\r")


def invalid_json_reason(text: str) -> str:
    """Name what makes a line invalid JSON when it is one of the usual suspects."""
    nul = text.find("\x00")
    if nul >= 0:
        return f"NUL byte at column {nul + 1}: not JSON text"
    surrogate = LONE_SURROGATE.search(text)
    if surrogate:
        return f"lone surrogate {surrogate.group(0)} in a string: not valid Unicode"
    return "invalid JSON"


class _Constant(float):
    """NaN or Infinity as read by Python's json (which accepts them)."""


def non_finite_reason(text: str | None, column: str) -> str | None:
    """`field X is NaN: not a number` when the JSON text holds NaN or ±Infinity."""
    if text is None:
        return None
    found: list[str] = []

    def constant(name: str) -> _Constant:
        found.append(name)
        return _Constant(0.0)

    value = json.loads(text, parse_constant=constant)
    if not found:
        return None
    if column != "extra":
        return f"field {column[3:]} contains {found[0]}: not a number"
    key = next(k for k, v in value.items() if _holds_constant(v))
    verb = "is" if isinstance(value[key], _Constant) else "contains"
    return f"field {key} {verb} {found[0]}: not a number"


def _holds_constant(value) -> bool:
    if isinstance(value, dict):
        return any(_holds_constant(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_constant(v) for v in value)
    return isinstance(value, _Constant)
