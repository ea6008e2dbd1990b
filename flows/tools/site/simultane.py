"""Pages of the Simultané individuel: monthly ranking, daily standings, each tournament
(standings, winners, the deal-by-deal grid with top and bulle), each player (the Performance
Simultané curve, % actuel, the 20-deal results, the months, the tournaments).

Templates: `simultane/month.html.j2`, `day.html.j2`, `tournament.html.j2`, `player.html.j2`.
The rows of every page's tables come from one row format over all the rows of a kind
(`tables.grouped_rows`); the grid, the largest table of the site, from a matrix of fragments
(`deal_grids`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator

import numpy as np
import polars as pl

from flows.tools.chart import IN_WINDOW, NEXT_TO_LEAVE, OUT_OF_WINDOW, PCT_ACTUEL
from flows.tools.site import markup, paths
from flows.tools.site.fmt import (
    MISSING,
    escape,
    local_time,
    minute,
    num,
    num_scaled,
    number,
    scaled,
    text,
    yes_no,
)
from flows.tools.site.labels import month_name
from flows.tools.site.model import (
    NO_PREVIOUS,
    Previous,
    Reuse,
    fingerprints,
    rows_of,
    split_unchanged,
)
from flows.tools.site.render import Page, page
from flows.tools.site.svg import NO_CHART, simultane_curves
from flows.tools.site.tables import (
    Col,
    Rows,
    columns,
    grouped_rows,
    live_rank,
    rank_cell,
    row_items,
)

MONTHS_DIR = "simultane/0000-00/"  # (any month: the months' folders are siblings)
TOURNAMENTS_DIR = "simultane/tournois/"
PLAYERS_DIR = "simultane/joueurs/"
PLAYER_LINK = pl.concat_str(
    pl.lit("simultane/joueurs/"), paths.slug_expr("player_id"), pl.lit(".html")
)  # (site path, the index's links)
TOURNAMENT_LINK = pl.concat_str(
    pl.lit("simultane/tournois/"), paths.slug_expr("tournament_id"), pl.lit(".html")
)


def player_href(folder: str) -> pl.Expr:
    """The link to a player's page from a page of `folder`."""
    way = paths.rel(folder, PLAYERS_DIR)
    return pl.concat_str(pl.lit(way), paths.slug_expr("player_id"), pl.lit(".html"))


def tournament_href(folder: str) -> pl.Expr:
    way = paths.rel(folder, TOURNAMENTS_DIR)
    return pl.concat_str(pl.lit(way), paths.slug_expr("tournament_id"), pl.lit(".html"))


def month_href(folder: str) -> pl.Expr:
    way = paths.rel(folder, "simultane/")
    return pl.concat_str(pl.lit(way), pl.col("month"), pl.lit("/index.html"))


def parts(
    t: dict,
    w: dict,
    lang: str,
    timezone: str,
    window_results: int,
    previous: Previous = NO_PREVIOUS,
) -> list[Callable[[], Iterator[Page | Reuse]]]:
    """The pages of the Simultané in two parts that share nothing but the tables, to be made
    at the same time: the months, days and tournaments; the players."""
    monthly = t["simultane_monthly"]
    results = t["simultane_tournament_results"]
    if monthly is None or results is None:
        return []
    months = months_of(monthly, results)
    if not months:
        return []
    daily = t["simultane_daily"]
    deals = t["simultane_deal_results"]
    crumb = (w["simultane"], paths.sim_month(months[-1]))
    names = {m: month_name(m, lang) for m in months}

    def events() -> Iterator[Page | Reuse]:
        tournaments = tournament_summary(results, deals, timezone)
        yield from month_pages(monthly, tournaments, daily, w, lang, previous, names)
        if daily is not None:
            yield from day_pages(daily, tournaments, w, lang, crumb, previous, names)
        yield from tournament_pages(results, deals, tournaments, w, lang, crumb, previous, names)

    def players() -> Iterator[Page | Reuse]:
        blocks = t["simultane_blocks"]
        args = (w, lang, timezone, window_results, crumb, previous)
        return player_pages(monthly, results, blocks, *args)

    return [events, players]


def months_of(monthly: pl.DataFrame | None, results: pl.DataFrame | None) -> list[str]:
    found: set[str] = set()
    for frame in (monthly, results):
        if frame is not None:
            found |= set(frame["month"].drop_nulls().unique().to_list())
    return sorted(found)


def tournament_summary(results: pl.DataFrame, deals: pl.DataFrame | None, timezone: str):
    """One row per tournament: start (local), day, month, humans, deals, winners (text)."""
    humans = ~pl.col("is_bot")
    winners = pl.col("player_id").filter(pl.col("is_winner") & humans).sort().str.join(", ")
    summary = results.group_by("tournament_id").agg(
        pl.col("month").first(),
        pl.col("tournament_start").first(),
        humans.sum().alias("humans"),
        winners.alias("winners"),
        pl.col("top").max().alias("top_total"),
    )
    if deals is not None and not deals.is_empty():
        n_deals = deals.group_by("tournament_id").agg(pl.col("deal_no").max().alias("deals"))
        summary = summary.join(n_deals, on="tournament_id", how="left")
    else:
        summary = summary.with_columns(deals=pl.lit(None, pl.Int64))
    return summary.with_columns(
        start=local_time(pl.col("tournament_start"), timezone),
        day=local_time(pl.col("tournament_start"), timezone, "%Y-%m-%d"),
        link=TOURNAMENT_LINK,
    ).sort("tournament_start", "tournament_id")


def _tournament_cols(w: dict, folder: str) -> list[Col]:
    winners = pl.when(pl.col("winners") == "").then(pl.lit(w["bot"])).otherwise("winners")
    return [
        Col(w["start"], pl.col("start")),
        Col(w["tournament"], pl.col("tournament_id"), href=tournament_href(folder), th=True),
        Col(w["players"], text(pl.col("humans")), num=True),
        Col(w["deals"], text(pl.col("deals")), num=True),
        Col(w["winners"], winners),
    ]


def _month_name(names: dict | None) -> pl.Expr:
    return pl.col("month").replace_strict(names or {}, default=pl.col("month"))


def _text(value) -> str:
    return MISSING if value is None else str(value)


def month_pages(
    monthly,
    tournaments,
    daily,
    w,
    lang,
    previous: Previous = NO_PREVIOUS,
    names: dict | None = None,
) -> Iterator[Page | Reuse]:
    """A page per month (ranking, days, tournaments); a month whose rows did not change keeps
    its page (a past month, most nights)."""
    days = None
    if daily is not None:
        day = pl.col("date").cast(pl.String)
        days = daily.select(day.str.slice(0, 7).alias("month"), "date").unique()
    shown = pl.concat([monthly["month"], tournaments["month"]]).drop_nulls().unique()
    fps = fingerprints("month", monthly, tournaments, *([days] if days is not None else []))
    reuse, todo = split_unchanged(
        fps.filter(pl.col("month").is_in(shown.implode())), "month", paths.sim_month, previous
    )
    yield from reuse
    if todo.is_empty():
        return
    monthly = rows_of(monthly, "month", todo, reuse)
    tournaments = rows_of(tournaments, "month", todo, reuse)
    cols = ranking_cols(w, lang)
    ranked = monthly.sort("month", "rank_indice", "player_id", nulls_last=True)
    ranking = grouped_rows(
        ranked, ["month"], row_items(cols, "", row_id=paths.player_row_anchor_expr())
    ).blocks()
    t_cols = _tournament_cols(w, MONTHS_DIR)
    listed = tournaments.sort("month", "tournament_start", "tournament_id")
    listed = grouped_rows(listed, ["month"], row_items(t_cols, "")).blocks()
    days_of = _days_of(daily)
    players = dict(monthly.group_by("month").len().iter_rows())
    held = dict(tournaments.group_by("month").len().iter_rows())
    for month, fingerprint in todo.sort("month").iter_rows():
        name = (names or {}).get(month, month)
        yield page(
            f"simultane/{month}/index.html",
            "simultane/month.html.j2",
            fingerprint,
            title=f"{w['simultane']} — {name}",
            crumbs=[(w["home"], paths.INDEX)],
            name=name,
            facts=[
                (w["month"], name),
                (w["players"], str(players.get(month, 0))),
                (w["tournaments"], str(held.get(month, 0))),
            ],
            cols=columns(cols),
            ranking=ranking.get(month, ""),
            days=days_of.get(month),
            tournament_cols=columns(t_cols),
            tournaments=listed.get(month, ""),
        )


def ranking_cols(w: dict, lang: str) -> list[Col]:
    """The columns of a month's ranking."""
    return [
        Col(w["rank"], text(pl.col("rank_indice")), num=True),
        Col(w["player"], pl.col("player_id"), href=player_href(MONTHS_DIR), th=True),
        Col(w["indice"], number(pl.col("indice"), 2, lang), num=True),
        Col(w["victoire"], number(pl.col("victoire"), 2, lang), num=True),
        Col(w["n_tournaments"], text(pl.col("tournaments")), num=True),
        Col(w["wins"], text(pl.col("wins")), num=True),
        Col(w["pct_actuel"], number(pl.col("pct_actuel"), 1, lang), num=True),
        Col(w["representative"], yes_no(pl.col("representative"), w)),
    ]


def _days_of(daily: pl.DataFrame | None) -> dict[str, list[str]]:
    """{month: its days with standings, in order}."""
    days_of: dict[str, list[str]] = {}
    if daily is not None:
        for day in daily["date"].cast(pl.String).unique().sort().to_list():
            days_of.setdefault(day[:7], []).append(day)
    return days_of


def day_pages(
    daily, tournaments, w, lang, crumb, previous: Previous = NO_PREVIOUS, names: dict | None = None
) -> Iterator[Page | Reuse]:
    """A page per day (the month's standings that evening, the day's tournaments); a past day
    keeps its page."""
    daily = daily.with_columns(day=pl.col("date").cast(pl.String))
    tournaments = tournaments.filter(pl.col("day").is_in(daily["day"].unique().implode()))
    fps = fingerprints("day", daily, tournaments)
    reuse, todo = split_unchanged(fps, "day", paths.sim_day, previous)
    yield from reuse
    if todo.is_empty():
        return
    daily = rows_of(daily, "day", todo, reuse)
    tournaments = rows_of(tournaments, "day", todo, reuse)
    cols = [
        Col(w["rank"], text(pl.col("rank")), num=True),
        Col(w["player"], pl.col("player_id"), href=player_href(MONTHS_DIR), th=True),
        Col(w["indice"], number(pl.col("indice"), 2, lang), num=True),
        Col(w["victoire"], number(pl.col("victoire"), 2, lang), num=True),
        Col(w["n_tournaments"], text(pl.col("tournaments")), num=True),
        Col(w["wins"], text(pl.col("wins")), num=True),
    ]
    standings = daily.with_columns(
        rank=pl.col("indice").rank("min", descending=True).over("date").cast(pl.Int64),
    ).sort("day", "rank", "player_id")
    by_day = grouped_rows(standings, ["day"], row_items(cols, "")).blocks()
    t_cols = _tournament_cols(w, MONTHS_DIR)
    listed = tournaments.sort("day", "tournament_start", "tournament_id")
    listed = grouped_rows(listed, ["day"], row_items(t_cols, "")).blocks()
    for day, fingerprint in todo.sort("day").iter_rows():
        month = day[:7]
        crumbs = [
            (w["home"], paths.INDEX),
            crumb,
            ((names or {}).get(month, month), paths.sim_month(month)),
        ]
        yield page(
            paths.sim_day(day),
            "simultane/day.html.j2",
            fingerprint,
            title=f"{w['daily_standings']} — {day}",
            crumbs=crumbs,
            day=day,
            cols=columns(cols),
            standings=by_day.get(day, ""),
            tournament_cols=columns(t_cols),
            tournaments=listed.get(day, ""),
        )


def tournament_pages(
    results, deals, tournaments, w, lang, crumb, previous, names: dict | None = None
) -> Iterator[Page | Reuse]:
    """A page per tournament; one whose rows did not change keeps its page (the grids are
    the largest pages of the site)."""
    fps = fingerprints("tournament_id", results, *([deals] if deals is not None else []))
    reuse, todo = split_unchanged(
        fps, "tournament_id", lambda t: paths.sim_tournament(paths.slug(t)), previous
    )
    yield from reuse
    if todo.is_empty():
        return
    results = rows_of(results, "tournament_id", todo, reuse)
    tournaments = rows_of(tournaments, "tournament_id", todo, reuse)
    deals = rows_of(deals, "tournament_id", todo, reuse)
    ordered = results.sort("tournament_id", "rank", "player_id")
    cols = standing_cols(w, lang)
    row_cls = (
        pl.when(pl.col("is_bot"))
        .then(pl.lit("bot"))
        .when(pl.col("is_winner"))
        .then(pl.lit("winner"))
        .otherwise(pl.lit(""))
    )
    standings = grouped_rows(ordered, ["tournament_id"], row_items(cols, "", row_cls)).blocks()
    grids = None
    if deals is not None and not deals.is_empty():
        grids = deal_grids(ordered, deals, tournaments, w, lang).blocks()
    frame = todo.join(tournaments, on="tournament_id", how="left").sort(
        "tournament_start", "tournament_id"
    )
    for row in frame.iter_rows(named=True):
        tournament_id, month = row["tournament_id"], row["month"]
        crumbs = [
            (w["home"], paths.INDEX),
            crumb,
            ((names or {}).get(month, month), paths.sim_month(month)),
        ]
        yield page(
            paths.sim_tournament(paths.slug(tournament_id)),
            "simultane/tournament.html.j2",
            row["fingerprint"],
            title=f"{w['tournament']} {tournament_id}",
            crumbs=crumbs,
            tournament_id=tournament_id,
            facts=_tournament_facts(row, w),
            cols=columns(cols),
            standings=standings.get(tournament_id, ""),
            grid=None if grids is None else grids.get(tournament_id, ""),
            grid_head=_grid_head(w["player"], row["deals"] or 0),
        )


def _tournament_facts(row: dict, w: dict) -> list[tuple[str, str]]:
    winners = row["winners"] or w["no_winner"]
    return [
        (w["start"], row["start"]),
        (w["players"], _text(row["humans"])),
        (w["deals"], _text(row["deals"])),
        (w["winners"], winners),
    ]


@functools.lru_cache(maxsize=256)
def _grid_head(player: str, deals: int) -> tuple:
    """The grid's columns: the player, then one per deal."""
    return ((player, False),) + tuple((str(d), True) for d in range(1, deals + 1))


def standing_cols(w: dict, lang: str) -> list[Col]:
    """The columns of a tournament's standings (the bot's row unlinked)."""
    player = pl.when(pl.col("is_bot")).then(pl.lit(w["bot"])).otherwise(pl.col("player_id"))
    link = (
        pl.when(pl.col("is_bot"))
        .then(pl.lit(None, pl.String))
        .otherwise(player_href(TOURNAMENTS_DIR))
    )
    return [
        Col(w["rank"], text(pl.col("rank")), num=True),
        Col(w["player"], player, href=link, th=True),
        Col(w["points"], text(pl.col("points")), num=True),
        Col(w["top"], text(pl.col("top")), num=True),
        Col(w["mp_pct"], number(pl.col("mp_pct"), 2, lang), num=True),
        Col(w["deals_played"], text(pl.col("deals_played")), num=True),
        Col(w["completed"], yes_no(pl.col("completed"), w)),
    ]


GRID_CELLS = ("<td>", "<td class=top>", "<td class=bulle>", '<td class="unfinished bulle">')


def _cell_fragments(deals: pl.DataFrame, lang: str) -> tuple[pl.Series, np.ndarray]:
    """The markup of every possible grid cell (its class — 0 plain, 1 top, 2 bulle, 3
    unfinished — and its % to one decimal) and each deal's index into it."""
    unfinished = pl.col("status") != "finished"
    kind = (
        pl.when(pl.col("is_top").fill_null(False))
        .then(1)
        .when(unfinished)
        .then(3)
        .when(pl.col("is_bulle").fill_null(False))
        .then(2)
        .otherwise(0)
    )
    pct = scaled(pl.col("pct"), 1)
    low, high = deals.select(pct.min().alias("low"), pct.max().alias("high")).row(0)
    low, high = (0, 0) if low is None else (int(low), int(high))
    span = high - low + 2  # a null, then low..high
    codes = deals.select(kind * span + (pct - (low - 1)).fill_null(0)).to_series().to_numpy()
    code = pl.col("code")
    every = pl.DataFrame({"code": np.arange(4 * span)}).select(
        kind=code // span,
        pct=pl.when(code % span == 0).then(None).otherwise(code % span + (low - 1)),
    )
    cell = pl.col("kind").replace_strict(list(range(4)), list(GRID_CELLS), return_dtype=pl.String)
    return every.select(pl.concat_str(cell, num_scaled(pl.col("pct"), 1, lang))).to_series(), codes


def deal_grids(
    ordered: pl.DataFrame, deals: pl.DataFrame, summary: pl.DataFrame, w: dict, lang: str
) -> Rows:
    """The rows of the deal-by-deal grid of every tournament: a row per participant in rank
    order (`ordered`: the tournament results sorted so), a cell per deal of its tournament
    (`summary`: tournament_id, deals), empty where the player has no row (a quit); top, bulle
    and unfinished deals by class.

    The grid's row filler: a matrix of indices into the fragments of every possible cell
    (participants × deals), each deal row's participant found by the hashes of its ids
    (`markup.positions`), then joined row by row."""
    participants = ordered.select("tournament_id", "player_id", "is_bot")
    tournaments = participants["tournament_id"].unique(maintain_order=True)
    players = participants["player_id"].unique(maintain_order=True)
    n_players = len(players)
    t_of = markup.positions(participants["tournament_id"], tournaments)
    p_of = markup.positions(participants["player_id"], players)
    where = np.full(len(tournaments) * n_players, -1, np.int64)  # (tournament, player) -> row
    where[t_of * n_players + p_of] = np.arange(participants.height)
    t_deal = markup.positions(deals["tournament_id"], tournaments)
    p_deal = markup.positions(deals["player_id"], players)
    row = where[np.maximum(t_deal, 0) * n_players + np.maximum(p_deal, 0)]
    if (t_deal < 0).any() or (p_deal < 0).any():  # a deal of no participant: not shown
        row[(t_deal < 0) | (p_deal < 0)] = -1
    pool = markup.Pool()
    fragments, codes = _cell_fragments(deals, lang)
    base = pool.add(fragments)
    empty = pool.add(pl.Series([GRID_CELLS[0]]))
    # the head of each row: the player (the standings above link to the player's page)
    head = pl.concat_str(pl.lit("\n<tr><th scope=row>"), escape(pl.col("player_id")))
    heads = pool.add(players.to_frame("player_id").select(head).to_series())
    bot = pool.add(pl.Series([f"\n<tr class=bot><th scope=row>{w['bot']}"]))
    deals_of = np.zeros(len(tournaments) + 1, np.int64)  # (the last: a tournament not there)
    at = markup.positions(summary["tournament_id"], tournaments)
    deals_of[at] = summary["deals"].fill_null(0).to_numpy()
    n_deals = deals_of[t_of]
    width = int(n_deals.max()) + 1 if len(n_deals) else 1  # the head, then the deals
    matrix = np.full(participants.height * width, empty, np.int64)
    matrix[np.arange(participants.height) * width] = np.where(
        participants["is_bot"].fill_null(False).to_numpy(), bot, heads + p_of
    )
    deal_no = deals["deal_no"].to_numpy()
    codes = codes + base
    placed = (row >= 0) & (deal_no >= 1) & (deal_no < width)
    if placed.all():
        matrix[row * width + deal_no] = codes
    else:
        matrix[row[placed] * width + deal_no[placed]] = codes[placed]
    used = (np.arange(width)[None, :] <= n_deals[:, None]).ravel()
    joined = markup.join(pool, matrix[used], per_row=n_deals + 1)
    return Rows(joined, markup.groups(participants, ["tournament_id"], joined))


def player_cols(w: dict, lang: str, timezone: str, latest: str | None) -> dict[str, list[Col]]:
    """The columns of a player's tables: 20-deal results, months, tournaments played."""
    return {
        "block_cols": [
            Col(w["block_no"], text(pl.col("block_no")), num=True),
            Col(w["ended_at"], minute(pl.col("ended_at"), timezone)),
            Col(w["pct_cumul"], number(pl.col("pct_cumul"), 2, lang), num=True),
            Col(w["pct_actuel"], number(pl.col("pct_actuel"), 2, lang), num=True),
            Col(w["k"], text(pl.col("k")), num=True),
            Col(w["in_window"], yes_no(pl.col("in_window"), w)),
        ],
        "month_cols": [
            Col(w["month"], pl.col("month"), href=month_href(PLAYERS_DIR), th=True),
            rank_cell(w, "rank_indice", latest, month_href(PLAYERS_DIR)),
            Col(w["indice"], number(pl.col("indice"), 2, lang), num=True),
            Col(w["victoire"], number(pl.col("victoire"), 2, lang), num=True),
            Col(w["n_tournaments"], text(pl.col("tournaments")), num=True),
            Col(w["wins"], text(pl.col("wins")), num=True),
            Col(w["pct_actuel"], number(pl.col("pct_actuel"), 1, lang), num=True),
        ],
        "played_cols": [
            Col(w["start"], minute(pl.col("tournament_start"), timezone)),
            Col(
                w["tournament"], pl.col("tournament_id"), href=tournament_href(PLAYERS_DIR), th=True
            ),
            Col(w["rank"], text(pl.col("rank")), num=True),
            Col(w["points"], text(pl.col("points")), num=True),
            Col(w["mp_pct"], number(pl.col("mp_pct"), 2, lang), num=True),
            Col(w["winner"], yes_no(pl.col("is_winner"), w)),
        ],
    }


def _player_facts(
    frame: pl.DataFrame, blocks: pl.DataFrame | None, w: dict, lang: str, timezone: str
) -> dict[str, list]:
    """{player_id: the facts of the player's page}: % actuel, representative, 20-deal results
    and the day of the latest one (when there is one)."""
    if blocks is not None:
        latest = blocks.group_by("player_id").agg(
            pl.col("pct_actuel").last(),
            pl.col("representative").last(),
            local_time(pl.col("ended_at").last(), timezone, "%Y-%m-%d").alias("_as_of"),
            pl.len().alias("_n_blocks"),
        )
        frame = frame.join(latest, on="player_id", how="left", maintain_order="left")
    else:
        frame = frame.with_columns(
            pct_actuel=pl.lit(None, pl.Float64),
            representative=pl.lit(None, pl.Boolean),
            _as_of=pl.lit(None, pl.String),
            _n_blocks=pl.lit(None, pl.UInt32),
        )
    shown = frame.select(
        "player_id",
        num(pl.col("pct_actuel"), 1, lang).alias("_pct"),
        pl.when(pl.col("representative").fill_null(False))
        .then(pl.lit(w["yes"]))
        .otherwise(pl.lit(w["no"]))
        .alias("_representative"),
        pl.col("_n_blocks").fill_null(0).cast(pl.String),
        "_as_of",
    )
    labels = w["pct_actuel"], w["representative"], w["blocks"], w["latest"]
    facts = {}
    for player, pct, representative, n_blocks, as_of in zip(
        *(shown.to_series(i).to_list() for i in range(5)), strict=True
    ):
        items = [(labels[0], pct), (labels[1], representative), (labels[2], n_blocks)]
        facts[player] = items + ([(labels[3], as_of)] if as_of is not None else [])
    return facts


def player_pages(
    monthly, results, blocks, w, lang, timezone, window_results, crumb, previous
) -> Iterator[Page | Reuse]:
    """A page per player; one whose rows (20-deal results, months, tournaments) did not change
    keeps its page."""
    humans = results.filter(~pl.col("is_bot"))
    has_blocks = blocks is not None and not blocks.is_empty()
    latest = monthly["month"].max()
    monthly = live_rank(monthly, "rank_indice", latest)  # shown, and fingerprinted, without it
    fps = fingerprints("player_id", monthly, humans, *([blocks] if has_blocks else []))
    reuse, todo = split_unchanged(
        fps, "player_id", lambda player: paths.sim_player(paths.slug(player)), previous
    )
    yield from reuse
    if todo.is_empty():
        return
    monthly = rows_of(monthly, "player_id", todo, reuse)
    humans = rows_of(humans, "player_id", todo, reuse)
    if has_blocks:
        blocks = rows_of(blocks, "player_id", todo, reuse).sort("player_id", "block_no")
    else:
        blocks = None
    cols = player_cols(w, lang, timezone, latest)
    months = _grouped(monthly.sort("player_id", "month"), cols["month_cols"])
    order = ["player_id", "tournament_start", "tournament_id"]
    played = _grouped(humans.sort(order, descending=[False, True, True]), cols["played_cols"])
    block_rows, charts = {}, {}
    if blocks is not None:
        block_rows = _grouped(blocks, cols["block_cols"])
        charts = simultane_curves(blocks, w, lang, timezone, window_results).by_player()
    frame = todo.select("player_id", "fingerprint").sort("player_id")
    facts = _player_facts(frame, blocks, w, lang, timezone)
    shared = {name: columns(c) for name, c in cols.items()} | {
        "crumbs": [(w["home"], paths.INDEX), crumb],
        "line_colour": PCT_ACTUEL,
        "legend_items": (
            (IN_WINDOW, w["curve_legend_red"], "dot"),
            (NEXT_TO_LEAVE, w["curve_legend_blue"], "dot"),
            (OUT_OF_WINDOW, w["curve_legend_grey"], "dot"),
            (PCT_ACTUEL, w["curve_legend_green"], "line"),
        ),
    }
    for player, fingerprint in frame.iter_rows():
        yield page(
            paths.sim_player(paths.slug(player)),
            "simultane/player.html.j2",
            fingerprint,
            title=f"{w['player']} {player}",
            facts=facts[player],
            blocks=block_rows.get(player),
            months=months.get(player),
            played=played.get(player),
            **charts.get(player, NO_CHART),
            **shared,
        )


def _grouped(frame: pl.DataFrame, cols: list[Col]) -> dict:
    return grouped_rows(frame, ["player_id"], row_items(cols, "")).blocks()
