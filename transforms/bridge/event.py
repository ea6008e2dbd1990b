"""The single entry point of bridge scoring: an event's (or many events') traveller lines and
penalties -> `bridge_board_results`, `bridge_standings` and `data_issues` rows.

Options: defaults < the event's own `options` JSON < the caller's `BridgeOptions` (fields the
caller changed from the defaults). Events sharing the same resolved options are scored together
in one vectorised pass over their (event, section, board) groups; the only Python loop is over
the distinct option sets (a handful), never over rows.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date

import polars as pl

from transforms.bridge.butler import butler
from transforms.bridge.cavendish import cavendish
from transforms.bridge.frames import packed, packed_bounds
from transforms.bridge.matchpoints import matchpoints
from transforms.bridge.options import MP_METHODS, BridgeOptions
from transforms.bridge.penalties import penalty_points
from transforms.bridge.rounds import PAIR_KEY, assign_rounds
from transforms.bridge.sunday_times import sunday_times
from transforms.bridge.three_tables import three_tables
from transforms.bridge.travellers import LINE_KEYS, traveller_issues, traveller_lines
from transforms.bridge.vp import add_vp
from transforms.issues import DATA_ISSUES_SCHEMA
from transforms.record_types import RECORD_TYPES

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
}

STANDINGS_SCHEMA: dict[str, pl.DataType] = {
    "month": pl.String(),
    "event_id": pl.String(),
    "section": pl.String(),
    "pair": pl.String(),
    "method": pl.String(),
    "total": pl.Float64(),
    "max": pl.Float64(),
    "pct": pl.Float64(),
    "rank": pl.Int64(),
    "imps": pl.Float64(),
    "vp": pl.Float64(),
    "penalties": pl.Float64(),
    "boards": pl.Int64(),
}


# The columns of `bridge.result` the scorer reads (plus a given `vulnerable` if any).
RESULT_COLUMNS = (
    "event_id", "section", "board", "round", "ns_pair", "ew_pair", "score_ns", "contract",
    "declarer", "result", "adjusted", "extra", "vulnerable",
)  # fmt: skip


IMP_DIGITS = 12  # IMP sums are rounded to 1e-12: float noise off, fractions kept


@dataclass(frozen=True)
class EventScores:
    board_results: pl.LazyFrame  # bridge_board_results
    standings: pl.LazyFrame  # bridge_standings
    issues: pl.LazyFrame  # data_issues rows


def resolve_options(event: dict, options: BridgeOptions | None = None) -> BridgeOptions:
    """The event's options: defaults < its `options` JSON < the caller's changes; `method`
    filled with the event's `scoring` unless given."""
    resolved = BridgeOptions.from_event(event.get("options")).merged(options)
    return replace(resolved, method=resolved.method or event["scoring"])


def score_event(
    event: dict,
    results: pl.LazyFrame,
    penalties: pl.LazyFrame,
    options: BridgeOptions | None = None,
) -> EventScores:
    """Scores one `bridge.event` row (a dict) from its bronze results and penalties."""
    schema = RECORD_TYPES["bridge.event"].schema()
    row = {name: event.get(name) for name in schema if name in event}
    if isinstance(row.get("date"), str):
        row["date"] = date.fromisoformat(row["date"])
    frame = pl.DataFrame([row], schema={name: schema[name] for name in row}, orient="row")
    return score_events(frame.lazy(), results, penalties, options)


def score_events(
    events: pl.LazyFrame | pl.DataFrame,
    results: pl.LazyFrame,
    penalties: pl.LazyFrame,
    options: BridgeOptions | None = None,
) -> EventScores:
    """Scores many events at once, one vectorised pass per distinct set of resolved options."""
    events = events.lazy() if isinstance(events, pl.DataFrame) else events
    for name in ("options", "boards_per_round"):
        if name not in events.collect_schema().names():
            events = events.with_columns(pl.lit(None).alias(name))
    event_rows = (
        events.select("event_id", "date", "scoring", "options", "boards_per_round")
        .unique("event_id", keep="last")
        .sort("event_id")
        .collect()
    )
    # options are resolved once per distinct (scoring, options, ...) row, not once per event
    settings = ["scoring", "options"]
    distinct = event_rows.select(settings).unique(maintain_order=True)
    resolved = [resolve_options(row, options) for row in distinct.iter_rows(named=True)]
    by_options = list(dict.fromkeys(resolved))
    distinct = distinct.with_columns(
        pl.Series("option_set", [by_options.index(r) for r in resolved], dtype=pl.Int64)
    )
    info = event_rows.join(distinct, on=settings, how="left", nulls_equal=True).select(
        "event_id",
        pl.col("date").dt.strftime("%Y-%m").alias("month"),
        pl.col("boards_per_round").cast(pl.Int64),
        "option_set",
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
    if not parts:
        return EventScores(
            pl.LazyFrame(schema=BOARD_RESULTS_SCHEMA),
            pl.LazyFrame(schema=STANDINGS_SCHEMA),
            pl.LazyFrame(schema=DATA_ISSUES_SCHEMA),
        )
    return EventScores(
        pl.concat([p.board_results for p in parts]),
        pl.concat([p.standings for p in parts]),
        pl.concat([p.issues for p in parts]),
    )


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
        return matchpoints(lines, opts.neuberg)
    if method == "three_tables":
        return three_tables(lines, opts.missing_as_average)
    if method == "butler":
        return butler(lines, opts)
    if method == "sunday_times":
        return sunday_times(lines, opts)
    if method in ("cavendish", "cavendish_avg"):
        return cavendish(lines, opts, averaged=method == "cavendish_avg")
    raise ValueError(f"unknown method {method!r}")


def _pair_view(scored: pl.LazyFrame, side: str, mp: bool) -> pl.LazyFrame:
    ns = side == "NS"
    own, other = ("ns_pair", "ew_pair") if ns else ("ew_pair", "ns_pair")
    suffix, other_suffix = ("ns", "ew") if ns else ("ew", "ns")
    values = (
        [
            pl.col(f"mp_{suffix}_x100").alias("mp_x100"),
            pl.col("top_x100"),
            pl.lit(None, pl.Float64).alias("imp"),
        ]
        if mp
        else [
            pl.lit(None, pl.Int64).alias("mp_x100"),
            pl.lit(None, pl.Int64).alias("top_x100"),
            pl.col(f"imp_{suffix}").alias("imp"),
        ]
    )
    names = scored.collect_schema().names()
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
        .join(info.with_row_index("ev").with_columns(pl.col("ev").cast(pl.Int64)), on="event_id",
              how="left")
    )  # fmt: skip
    if lines["ev"].null_count():  # lines of events not given are not scored
        lines = lines.filter(pl.col("ev").is_not_null())
    return traveller_lines(lines)


def _score_group(
    opts: BridgeOptions, info: pl.DataFrame, lines: pl.DataFrame, penalties: pl.LazyFrame
) -> EventScores:
    method = opts.method
    mp = method in MP_METHODS
    ids = info["event_id"]
    line_issues = traveller_issues(lines.lazy())
    usable = lines if lines["usable"].all() else lines.filter(pl.col("usable"))
    scored = _with_method_values(usable, opts).with_row_index("line_row")
    pair_boards = assign_rounds(
        pl.concat([_pair_view(scored.lazy(), "NS", mp), _pair_view(scored.lazy(), "EW", mp)])
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
    vp = opts.vp and method in ("butler", "sunday_times", "cavendish_avg")
    # the totals stream over the pair rows (the board results are materialised once, by the
    # caller's collect)
    if mp:
        totals = pair_boards.group_by(PAIR_KEY).agg(
            pl.col("row").first(),
            pl.len().cast(pl.Int64).alias("boards"),
            pl.col("real").sum().alias("real_boards"),
            pl.col("mp_x100").sum().alias("total_x100"),
            pl.col("top_x100").max().alias("top_x100"),
        )
    else:
        totals = _imp_totals(pair_boards, _round_key(scored), opts, vp)
    totals = _with_pair_names(totals.collect(), scored)
    standings = _standings(totals.lazy(), penalty_totals, mp, vp, method)
    issues = _issues(line_issues, penalty_issues, info, opts, vp)
    return EventScores(board_results, standings, issues)


def _round_key(scored: pl.DataFrame) -> pl.Expr:
    """One key per (pair, round) of the pair rows of `scored`. A round number is at most the
    largest of the given rounds, of the board numbers (rounds from boards per round) and of the
    number of lines (rounds counted from opponent changes)."""
    if not scored.schema["ns_key"].is_integer():
        return pl.struct(PAIR_KEY, "round").alias("round_key")
    columns = [pl.col(name) for name in ("ns_key", "ew_key", "round", "board")]
    ns, ew, rounds, boards = packed_bounds(scored, columns)
    pair = (min(ns[0], ew[0]), max(ns[1], ew[1]))
    most = max(rounds[1], boards[1], scored.height)
    return packed([pl.col(PAIR_KEY), pl.col("round")], [pair, (0, most)], "round_key")


def _imp_totals(
    pair_boards: pl.LazyFrame, round_key: pl.Expr, opts: BridgeOptions, vp: bool
) -> pl.LazyFrame:
    """Per pair: the round totals (capped at cap_base + boards, or converted to VP), summed."""
    rounds = pair_boards.group_by(round_key).agg(
        pl.col(PAIR_KEY).first(),
        pl.col("row").first(),
        pl.len().cast(pl.Int64).alias("boards"),
        pl.col("real").sum().alias("real_boards"),
        # averaged Cavendish values are fractions: a float sum carries noise (1e-15) that
        # depends on the summing order; rounded off so totals, caps and VP are exact
        pl.col("imp").sum().round(IMP_DIGITS).alias("imps"),
    )
    capped = opts.method in ("butler", "sunday_times") and not opts.bog and not vp
    if capped:
        rounds = rounds.with_columns(
            pl.min_horizontal("imps", opts.cap_base + pl.col("boards")).alias("imps")
        )
    if vp:
        rounds = add_vp(rounds)
    else:
        rounds = rounds.with_columns(pl.lit(None, pl.Int64).alias("vp_x100"))
    return rounds.group_by(PAIR_KEY).agg(
        pl.col("row").first(),
        pl.col("boards").sum(),
        pl.col("real_boards").sum(),
        pl.col("imps").sum().round(IMP_DIGITS),
        hundredths(pl.col("vp_x100").sum()).alias("vp")
        if vp
        else pl.lit(None, pl.Float64).alias("vp"),
        pl.len().cast(pl.Int64).alias("rounds"),
    )


def _with_pair_names(totals: pl.DataFrame, scored: pl.DataFrame) -> pl.DataFrame:
    """Totals grouped by a pair's integer key get the pair's names back from one of its rows
    (`row` = 2 × scored line + 1 for the EW side): a gather, much cheaper than carrying the
    texts through the group-bys."""
    rows = totals["row"]
    names = scored.select("event_id", "section", "month", "ev", "ns_pair", "ew_pair")[rows // 2]
    pair = pl.when(rows % 2 == 0).then(pl.col("ns_pair")).otherwise(pl.col("ew_pair"))
    names = names.with_columns(pair.alias("pair")).drop("ns_pair", "ew_pair")
    return pl.concat([totals.drop("row"), names], how="horizontal")


def _standings(
    totals: pl.LazyFrame, penalty_totals: pl.LazyFrame, mp: bool, vp: bool, method: str
) -> pl.LazyFrame:
    """Pairs with at least one real score (a pair with only artificial scores is a phantom or a
    sit-out and is not ranked); equal totals share a rank."""
    frame = (
        totals.filter(pl.col("real_boards") > 0)
        .join(penalty_totals, on=["event_id", "pair"], how="left")
        .with_columns(pl.col("penalties_x100").fill_null(0))
    )
    group = ["ev", "section"]
    if mp:
        total_x100 = pl.col("total_x100") + pl.col("penalties_x100")
        most = pl.col("boards") * pl.col("top_x100")
        # % to 0.01, half up, exactly: 10000·total / max
        pct_x100 = (2 * 10000 * total_x100 + most) // (2 * most)
        frame = frame.with_columns(
            hundredths(total_x100).alias("total"),
            hundredths(most).alias("max"),
            hundredths(pct_x100).alias("pct"),
            total_x100.rank("min", descending=True).over(group).cast(pl.Int64).alias("rank"),
            pl.lit(None, pl.Float64).alias("imps"),
            pl.lit(None, pl.Float64).alias("vp"),
        )
    else:
        base = pl.col("vp") if vp else pl.col("imps")
        total = base + pl.col("penalties_x100") / 100
        frame = frame.with_columns(
            total.alias("total"),
            (20.0 * pl.col("rounds") if vp else pl.lit(None, pl.Float64)).alias("max"),
            pl.lit(None, pl.Float64).alias("pct"),
            total.round(6).rank("min", descending=True).over(group).cast(pl.Int64).alias("rank"),
        )
    return frame.select(
        "month",
        "event_id",
        "section",
        "pair",
        pl.lit(method).alias("method"),
        "total",
        "max",
        "pct",
        "rank",
        "imps",
        "vp",
        hundredths(pl.col("penalties_x100")).alias("penalties"),
        "boards",
    )


def _issues(
    line_issues: pl.LazyFrame,
    penalty_issues: pl.LazyFrame,
    info: pl.DataFrame,
    opts: BridgeOptions,
    vp: bool,
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
    if opts.vp and not vp:
        parts.append(
            info.lazy().select(
                "month",
                pl.lit("vp_not_allowed").alias("kind"),
                pl.struct("event_id").struct.json_encode().alias("keys"),
                pl.lit(f"no VP conversion in method {opts.method}; IMP totals kept").alias(
                    "detail"
                ),
            )
        )
    return pl.concat(parts).with_columns(pl.col("month").cast(pl.String))


def hundredths(value: pl.Expr) -> pl.Expr:
    """An integer count of hundredths as the nearest float (Polars divides by multiplying by
    the reciprocal, so 1587 / 100 would print 15.870000000000001)."""
    return (value / 100).round(2)
