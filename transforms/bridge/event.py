"""The single entry point of bridge scoring: an event's (or many events') traveller lines and
penalties -> `bridge_board_results`, `bridge_standings` and `data_issues` rows.

Options: defaults < the event's own `options` JSON < the caller's overrides
(`options.resolve_options`, the one precedence rule). Events sharing the same resolved options
are scored together in one vectorised pass over their (event, section, board) groups; the only
Python loop is over the distinct option sets (a handful), never over rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from transforms.bridge.butler import butler
from transforms.bridge.cavendish import cavendish
from transforms.bridge.fields import two_winner
from transforms.bridge.frames import hundredths
from transforms.bridge.matchpoints import matchpoints
from transforms.bridge.options import MP_METHODS, BridgeOptions, resolve_options
from transforms.bridge.penalties import penalty_points
from transforms.bridge.reported import pair_facts, reported_points
from transforms.bridge.rounds import assign_rounds
from transforms.bridge.standings import STANDINGS_SCHEMA, pair_standings
from transforms.bridge.sunday_times import sunday_times
from transforms.bridge.three_tables import three_tables, unscored_boards
from transforms.bridge.travellers import LINE_KEYS, traveller_issues, traveller_lines
from transforms.calendar import date_month_expr
from transforms.issues import data_issues
from transforms.record_types import RECORD_TYPES
from transforms.scores import Scores

BOARD_RESULTS_SCHEMA: dict[str, pl.DataType] = {
    "month": pl.String(),
    "event_id": pl.String(),
    "section": pl.String(),
    "board": pl.Int64(),
    "pair": pl.String(),
    "direction": pl.String(),
    "round": pl.Int64(),
    "opponent": pl.String(),
    "method": pl.String(),
    "contract": pl.String(),
    "declarer": pl.String(),
    "result": pl.String(),
    "score": pl.Int64(),
    "score_ns": pl.Int64(),
    "mp": pl.Float64(),
    "mp_top": pl.Float64(),
    "pct": pl.Float64(),
    "imp": pl.Float64(),
    "datum": pl.Int64(),
    "adjusted": pl.String(),
    "computed_score": pl.Boolean(),
    "reported_points": pl.Float64(),
}


# The columns of `bridge.result` the scorer reads (plus a given `vulnerable` if any).
RESULT_COLUMNS = (
    "event_id", "section", "board", "round", "ns_pair", "ew_pair", "score_ns", "contract",
    "declarer", "result", "adjusted", "extra", "vulnerable",
)  # fmt: skip


class BridgeScores(Scores):
    """`tables`: `bridge_board_results` (pair × board) and `bridge_standings` (pair × event);
    `issues`: `data_issues` rows."""


TABLES = ("bridge_board_results", "bridge_standings")
INPUTS = ("bridge.event", "bridge.result", "bridge.penalty")


def score_events(
    inputs: Mapping[str, pl.LazyFrame | pl.DataFrame],
    overrides: Mapping[str, Any] | None = None,
) -> BridgeScores:
    """Scores the events of `inputs` (bronze `bridge.event`, `bridge.result`, `bridge.penalty`
    rows, re-deliveries resolved) at once, one vectorised pass per distinct set of resolved
    options. `overrides`: option names to values that win over every event's own options
    (`options.resolve_options`). An event whose own options cannot be read is not scored and
    is reported (`bad_event_options`); a bad override is the caller's error (ValueError)."""
    events, results, penalties = (_input(inputs, name) for name in INPUTS)
    BridgeOptions.from_mapping(overrides or {})  # the caller's own mistakes raise here
    for name in ("options", "boards_per_round", "movement", "extra"):
        if name not in events.collect_schema().names():
            events = events.with_columns(pl.lit(None, pl.String).alias(name))
    event_rows = (
        events.select(
            "event_id", "date", "scoring", "options", "boards_per_round", "movement", "extra"
        )
        .unique("event_id", keep="last")
        .sort("event_id")
        .collect()
        .with_columns(date_month_expr("date").alias("month"))
    )
    # options are resolved once per distinct (scoring, options) row, not once per event
    settings = ["scoring", "options"]
    distinct = event_rows.select(settings).unique(maintain_order=True)
    resolved: list[BridgeOptions | str] = []
    for row in distinct.iter_rows(named=True):
        try:
            resolved.append(resolve_options(row, overrides))
        except ValueError as err:  # the event's own options: a data issue, not a crash
            resolved.append(str(err))
    by_options = [r for r in dict.fromkeys(resolved) if isinstance(r, BridgeOptions)]
    distinct = distinct.with_columns(
        pl.Series("option_set", [_set_of(r, by_options) for r in resolved], dtype=pl.Int64),
        pl.Series(
            "options_error", [r if isinstance(r, str) else None for r in resolved], dtype=pl.String
        ),
    )
    event_rows = event_rows.join(distinct, on=settings, how="left", nulls_equal=True)
    info = (
        event_rows.filter(pl.col("option_set").is_not_null())
        .select(
            "event_id",
            "month",
            pl.col("boards_per_round").cast(pl.Int64),
            "option_set",
            "movement",
            "extra",
        )
        .with_row_index("ev")
        .with_columns(pl.col("ev").cast(pl.Int64))
    )
    info = info.with_columns(
        pl.Series(
            "two_winner",
            [two_winner(m, x) for m, x in zip(info["movement"], info["extra"], strict=True)],
            dtype=pl.Boolean,
        )
    ).drop("movement")
    option_issues = data_issues(
        event_rows.lazy().filter(pl.col("options_error").is_not_null()),
        "bad_event_options",
        ["event_id"],
        pl.format("event not scored: {}", pl.col("options_error")),
    )
    all_lines = _traveller_lines(info, results) if by_options else None
    parts = [
        _score_group(
            opts,
            info.filter(pl.col("option_set") == n),
            all_lines.filter(pl.col("option_set") == n) if len(by_options) > 1 else all_lines,
            penalties,
        )
        for n, opts in enumerate(by_options)
    ]
    tables = {
        name: pl.concat([p.tables[name] for p in parts]) if parts else pl.LazyFrame(schema=schema)
        for name, schema in zip(TABLES, (BOARD_RESULTS_SCHEMA, STANDINGS_SCHEMA), strict=True)
    }
    tables["bridge_standings"] = _with_pair_facts(tables["bridge_standings"], info)
    issues = pl.concat([option_issues, *[p.issues for p in parts]])
    return BridgeScores(tables, issues)


def _input(inputs: Mapping[str, pl.LazyFrame | pl.DataFrame], record_type: str) -> pl.LazyFrame:
    if record_type not in inputs:
        if record_type == "bridge.penalty":  # an event file without penalties
            return pl.LazyFrame(schema=RECORD_TYPES[record_type].schema())
        raise KeyError(f"score_events needs the {record_type} rows")
    return inputs[record_type].lazy()


def _with_pair_facts(standings: pl.LazyFrame, info: pl.DataFrame) -> pl.LazyFrame:
    """The players' names and the scoring program's own figures that the event file gives
    (`reported.pair_facts`) beside each standing."""
    facts = pair_facts(info.select("event_id", "extra"))
    columns = list(STANDINGS_SCHEMA)
    return (
        standings.drop(*[c for c in facts.columns if c not in ("event_id", "section", "pair")])
        .join(facts.lazy(), on=["event_id", "section", "pair"], how="left", nulls_equal=True)
        .select(columns)
    )


def _set_of(resolved: BridgeOptions | str, by_options: list[BridgeOptions]) -> int | None:
    return by_options.index(resolved) if isinstance(resolved, BridgeOptions) else None


# What the methods read of a traveller line (`frames`, `travellers.traveller_lines`).
METHOD_INPUT = ["line_id", "ev", "gid", "m", "below", "ties", "order", "real", "score_ns",
                "adj_ns", "adj_ew"]  # fmt: skip


def _with_method_values(lines: pl.DataFrame, opts: BridgeOptions) -> pl.DataFrame:
    """`lines` and the method's columns. The method runs on the few columns it reads and its
    new columns are put beside the lines (running it on all of them would copy them all)."""
    values = _method_values(lines.lazy().select(METHOD_INPUT), opts).collect()
    if not values["line_id"].equals(lines["line_id"]):  # a join inside may reorder the rows
        values = values.sort("line_id")
        if not values["line_id"].equals(lines["line_id"]):
            raise RuntimeError("method values do not line up with the traveller lines")
    new = [name for name in values.columns if name not in METHOD_INPUT]
    return lines.hstack(values.select(new).get_columns())


def _method_values(lines: pl.LazyFrame, opts: BridgeOptions) -> pl.LazyFrame:
    method = opts.method
    if method == "matchpoints":
        return matchpoints(lines, opts.neuberg, exact=opts.pct_rounding == "exact")
    if method == "three_tables":
        return three_tables(lines, opts.missing_as_average)
    if method == "butler":
        return butler(lines, opts)
    if method == "sunday_times":
        return sunday_times(lines, opts)
    if method in ("cavendish", "cavendish_avg"):
        return cavendish(lines, opts, averaged=method == "cavendish_avg")
    raise ValueError(f"unknown method {method!r}")


def _pair_view(scored: pl.LazyFrame, side: str, mp: bool, reported: bool) -> pl.LazyFrame:
    ns = side == "NS"
    own, other = ("ns_pair", "ew_pair") if ns else ("ew_pair", "ns_pair")
    suffix, other_suffix = ("ns", "ew") if ns else ("ew", "ns")
    names = scored.collect_schema().names()
    exact = "mp_den" in names  # option pct_rounding=exact (`matchpoints`)
    values = (
        [
            pl.col(f"mp_{suffix}_x100").alias("mp_x100"),
            pl.col("top_x100"),
            pl.lit(None, pl.Float64).alias("imp"),
            pl.col(f"mp_{suffix}_num" if exact else f"mp_{suffix}_x100").alias("mp_num"),
            (pl.col("mp_den") if exact else pl.lit(1, pl.Int64)).alias("mp_den"),
        ]
        if mp
        else [
            pl.lit(None, pl.Int64).alias("mp_x100"),
            pl.lit(None, pl.Int64).alias("top_x100"),
            pl.col(f"imp_{suffix}").alias("imp"),
            pl.lit(None, pl.Int64).alias("mp_num"),
            pl.lit(None, pl.Int64).alias("mp_den"),
        ]
    )
    return scored.select(
        "event_id",
        "section",
        "board",
        pl.col(own).alias("pair"),
        pl.lit(side).alias("direction"),
        "round",
        pl.col(other).alias("opponent"),
        "contract",
        "declarer",
        "result",
        pl.when(pl.col("real")).then(pl.col("score_ns") * (1 if ns else -1)).alias("score"),
        pl.when(pl.col("real")).then(pl.col("score_ns")).alias("score_ns"),
        *values,
        (pl.col("datum") if "datum" in names else pl.lit(None, pl.Int64)).alias("datum"),
        "adjusted",
        "computed_score",
        reported_points(pl.col("extra") if reported else None, ns),
        "real",
        "month",
        "boards_per_round",
        "ev",
        pl.col(f"{suffix}_key").alias("pair_key"),
        pl.col(f"{other_suffix}_key").alias("opponent_key"),
        # the scored line and the side this row comes from (see `_with_pair_names`)
        (2 * pl.col("line_row") + (0 if ns else 1)).alias("row"),
    )


def _traveller_lines(info: pl.DataFrame, results: pl.LazyFrame) -> pl.DataFrame:
    """The traveller lines of the events, with their month and round size, materialised once:
    the method values, the three outputs (and the nightly's separate collects) derive from
    them instead of re-running the text parsing each."""
    names = results.collect_schema().names()
    wanted = [c for c in RESULT_COLUMNS if c in names]
    lines = (
        results.select(wanted)
        .collect()
        # a left join and a filter: an inner join here costs several times more
        .join(
            info.select("event_id", "month", "boards_per_round", "option_set", "ev"),
            on="event_id",
            how="left",
        )
    )
    if lines["ev"].null_count():  # lines of events not given are not scored
        lines = lines.filter(pl.col("ev").is_not_null())
    return traveller_lines(lines)


def _score_group(
    opts: BridgeOptions, info: pl.DataFrame, lines: pl.DataFrame, penalties: pl.LazyFrame
) -> BridgeScores:
    method = opts.method
    mp = method in MP_METHODS
    ids = info["event_id"]
    line_issues = traveller_issues(lines.lazy())
    usable = lines if lines["usable"].all() else lines.filter(pl.col("usable"))
    scored = _with_method_values(usable, opts).with_row_index("line_row")
    # the scoring program's own figures, when the file has them (USEBIO)
    reported = "extra" in scored.columns and bool(
        scored["extra"].str.contains("reported_", literal=True).any()
    )
    pair_boards = assign_rounds(
        pl.concat([_pair_view(scored.lazy(), side, mp, reported) for side in ("NS", "EW")])
    )
    board_results = pair_boards.select(
        "month",
        "event_id",
        "section",
        "board",
        "pair",
        "direction",
        "round",
        "opponent",
        pl.lit(method).alias("method"),
        "contract",
        "declarer",
        "result",
        "score",
        "score_ns",
        hundredths(pl.col("mp_x100")).alias("mp"),
        hundredths(pl.col("top_x100")).alias("mp_top"),
        (pl.col("mp_x100") * 100 / pl.col("top_x100")).alias("pct"),
        "imp",
        "datum",
        "adjusted",
        "computed_score",
        "reported_points",
    )

    tops = (
        scored.lazy()
        .group_by("ev")
        .agg(
            pl.col("event_id").first(),
            (pl.col("top_x100").max() if mp else pl.lit(None, pl.Int64)).alias("top_x100"),
        )
    )
    penalty_totals, penalty_issues = penalty_points(
        penalties.filter(pl.col("event_id").is_in(ids.implode())), tops, opts, not mp
    )
    standings = pair_standings(pair_boards, scored, penalty_totals, opts, info)
    board_issues = (
        unscored_boards(scored.lazy(), opts.missing_as_average)
        if method == "three_tables"
        else None
    )
    issues = _issues(line_issues, penalty_issues, board_issues, info, opts)
    return BridgeScores(dict(zip(TABLES, (board_results, standings), strict=True)), issues)


def _issues(
    line_issues: pl.LazyFrame,
    penalty_issues: pl.LazyFrame,
    board_issues: pl.LazyFrame | None,
    info: pl.DataFrame,
    opts: BridgeOptions,
) -> pl.LazyFrame:
    keys = pl.struct(*[pl.col(k).cast(pl.String) for k in LINE_KEYS]).struct.json_encode()
    parts = [
        line_issues.join(info.lazy(), on="event_id", how="left").select(
            "month", "kind", keys.alias("keys"), "detail"
        ),
        penalty_issues.join(info.lazy(), on="event_id", how="left").select(
            "month",
            "kind",
            pl.struct(pl.col("event_id"), pl.col("pair"), pl.col("board").cast(pl.String))
            .struct.json_encode()
            .alias("keys"),
            "detail",
        ),
    ]
    if board_issues is not None:
        board_keys = pl.struct("event_id", "section", pl.col("board").cast(pl.String))
        parts.append(
            board_issues.join(info.lazy(), on="event_id", how="left").select(
                "month", "kind", board_keys.struct.json_encode().alias("keys"), "detail"
            )
        )
    if opts.vp and not opts.converts_to_vp:
        parts.append(
            info.lazy().select(
                "month",
                pl.lit("vp_not_allowed").alias("kind"),
                pl.struct("event_id").struct.json_encode().alias("keys"),
                pl.lit(f"no VP conversion in method {opts.method}; totals kept unconverted").alias(
                    "detail"
                ),
            )
        )
    return pl.concat(parts).with_columns(pl.col("month").cast(pl.String))
