"""What an event file says beside the travellers: the players' names of each pair and the
scoring program's own published figures (USEBIO's `TOTAL_SCORE`, `PERCENTAGE`, `PLACE`, and
each line's `NS_MATCH_POINTS`...). They are kept as given, beside duplirank's own values
(`reported_*` columns), so a difference is visible and never hidden.

Where they travel in bronze: a line's `extra` JSON holds `reported_ns` / `reported_ew`; an
event's `extra` JSON holds `pairs`, a list of objects `{"pair", "section", "names", "total",
"pct", "rank"}` (each optional but `pair`).
"""

from __future__ import annotations

import json

import polars as pl

PAIR_FACTS_SCHEMA: dict[str, pl.DataType] = {
    "event_id": pl.String(),
    "section": pl.String(),
    "pair": pl.String(),
    "names": pl.String(),
    "reported_total": pl.Float64(),
    "reported_pct": pl.Float64(),
    "reported_rank": pl.Int64(),
}


def reported_points(extra: pl.Expr | None, ns: bool) -> pl.Expr:
    """`reported_points` of one side of a line: the program's MP or IMP figure for that side."""
    if extra is None:
        return pl.lit(None, pl.Float64).alias("reported_points")
    path = "$.reported_ns" if ns else "$.reported_ew"
    return extra.str.json_path_match(path).cast(pl.Float64, strict=False).alias("reported_points")


def pair_facts(events: pl.DataFrame) -> pl.DataFrame:
    """(event_id, section, pair, names, reported_total, reported_pct, reported_rank) of the
    events' `extra` JSON `pairs` lists (a loop over events: one JSON document each)."""
    rows = []
    for event_id, extra in events.select("event_id", "extra").iter_rows():
        if not extra or '"pairs"' not in extra:
            continue
        try:
            pairs = json.loads(extra).get("pairs") or []
        except (json.JSONDecodeError, AttributeError):
            continue
        for item in pairs:
            if not isinstance(item, dict) or item.get("pair") is None:
                continue
            rows.append(
                {
                    "event_id": event_id,
                    "section": item.get("section") or None,
                    "pair": str(item["pair"]),
                    "names": item.get("names") or None,
                    "reported_total": _number(item.get("total")),
                    "reported_pct": _number(item.get("pct")),
                    "reported_rank": _integer(item.get("rank")),
                }
            )
    return pl.DataFrame(rows, schema=PAIR_FACTS_SCHEMA, orient="row").unique(
        ["event_id", "section", "pair"], keep="last", maintain_order=True
    )


def _number(value) -> float | None:
    try:
        return None if value is None or value == "" else float(value)
    except (TypeError, ValueError):
        return None


def _integer(value) -> int | None:
    try:  # a place may be written "3=" (a tie)
        return None if value is None else int(str(value).strip().rstrip("=").strip())
    except ValueError:
        return None
