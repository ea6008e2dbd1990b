"""Pages of the Simultané individuel: monthly ranking, daily standings, each tournament
(standings, winners, the deal-by-deal grid with top and bulle), each player (the Performance
Simultané curve, % actuel, the 20-deal results, the months, the tournaments).

Each kind of page is put together on whole columns (`pages.Pages`): the rows of every page's
tables come from one template over all the rows (`tables.grouped_rows`), the pages' small
texts (title, facts, captions) from expressions over the frame of the pages.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import polars as pl

from flows.tools.site import html, markup, paths
from flows.tools.site.fmt import (
    MISSING,
    escape,
    local_time,
    minute,
    num_scaled,
    number,
    scaled,
    text,
    yes_no,
)
from flows.tools.site.html import SECTION_CLOSE, section_open
from flows.tools.site.labels import month_name
from flows.tools.site.model import (
    NO_PREVIOUS,
    Previous,
    Reuse,
    fingerprints,
    rows_of,
    split_unchanged,
)
from flows.tools.site.pages import Pages, PageSet
from flows.tools.site.svg import CHART_CLOSE, simultane_curves
from flows.tools.site.tables import (
    Col,
    Rows,
    grouped_rows,
    live_rank,
    rank_cell,
    row_items,
    table_around,
)

ROOT = "../../"  # every Simultané page is two folders down: simultane/<month or kind>/…
MONTHS_DIR = "simultane/0000-00/"  # (any month: the months' folders are siblings)
TOURNAMENTS_DIR = "simultane/tournois/"
PLAYERS_DIR = "simultane/joueurs/"
PLAYER_LINK = pl.concat_str(
    pl.lit("simultane/joueurs/"), paths.slug_expr("player_id"), pl.lit(".html")
)  # fmt: skip  (site path, the index's links)
TOURNAMENT_LINK = pl.concat_str(
    pl.lit("simultane/tournois/"), paths.slug_expr("tournament_id"), pl.lit(".html")
)


def player_href(folder: str) -> pl.Expr:
    """The link to a player's page from a page of `folder`."""
    return pl.concat_str(pl.lit(paths.rel(folder, PLAYERS_DIR)), paths.slug_expr("player_id"),
                         pl.lit(".html"))  # fmt: skip


def tournament_href(folder: str) -> pl.Expr:
    return pl.concat_str(pl.lit(paths.rel(folder, TOURNAMENTS_DIR)),
                         paths.slug_expr("tournament_id"), pl.lit(".html"))  # fmt: skip


def month_href(folder: str, anchor: pl.Expr | None = None) -> pl.Expr:
    parts = [pl.lit(paths.rel(folder, "simultane/")), pl.col("month"), pl.lit("/index.html")]
    return pl.concat_str(parts + ([anchor] if anchor is not None else []))


def pages(t: dict, w: dict, lang: str, timezone: str, window_results: int,
          previous: Previous = NO_PREVIOUS,
          shell: html.Shell | None = None) -> Iterator[PageSet | Reuse]:  # fmt: skip
    monthly = t["simultane_monthly"]
    results = t["simultane_tournament_results"]
    if monthly is None or results is None:
        return
    months = months_of(monthly, results)
    if not months:
        return
    shell = shell or html.Shell.of(lang, w)
    daily = t["simultane_daily"]
    deals = t["simultane_deal_results"]
    blocks = t["simultane_blocks"]
    crumb = (w["simultane"], paths.sim_month(months[-1]))
    names = {m: month_name(m, lang) for m in months}
    tournaments = tournament_summary(results, deals, timezone)
    yield from month_pages(monthly, tournaments, daily, w, lang, previous, shell, names)
    if daily is not None:
        yield from day_pages(daily, tournaments, w, lang, crumb, previous, shell, names)
    yield from tournament_pages(results, deals, tournaments, w, lang, crumb, previous, shell,
                                names)  # fmt: skip
    yield from player_pages(monthly, results, blocks, w, lang, timezone, window_results, crumb,
                            previous, shell)  # fmt: skip


def months_of(monthly: pl.DataFrame | None, results: pl.DataFrame | None) -> list[str]:
    found: set[str] = set()
    for frame in (monthly, results):
        if frame is not None:
            found |= set(frame["month"].drop_nulls().unique().to_list())
    return sorted(found)


def tournament_summary(results: pl.DataFrame, deals: pl.DataFrame | None, timezone: str):
    """One row per tournament: start (local), day, month, humans, deals, winners (text)."""
    humans = ~pl.col("is_bot")
    summary = results.group_by("tournament_id").agg(
        pl.col("month").first(),
        pl.col("tournament_start").first(),
        humans.sum().alias("humans"),
        pl.col("player_id").filter(pl.col("is_winner") & humans).sort().str.join(", ")
        .alias("winners"),
        pl.col("top").max().alias("top_total"),
    )  # fmt: skip
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
    return [
        Col(w["start"], pl.col("start")),
        Col(w["tournament"], pl.col("tournament_id"), href=tournament_href(folder), th=True),
        Col(w["players"], text(pl.col("humans")), num=True),
        Col(w["deals"], text(pl.col("deals")), num=True),
        Col(w["winners"], pl.when(pl.col("winners") == "").then(pl.lit(w["bot"]))
            .otherwise(pl.col("winners"))),
    ]  # fmt: skip


def _head(shell: html.Shell, title: pl.Expr, crumbs: list, script: bool = True) -> list:
    return shell.head(ROOT, script, title, crumbs)


def _table(
    page: Pages,
    rows: Rows,
    on,
    caption,
    cols: list[Col],
    sorted_by: int | None = 0,
    *,
    h2: str | None = None,
    ident: str | None = None,
    hint: str | None = None,
    sortable: bool = True,
    cls: str | None = None,
    head: str | None = None,
) -> None:
    """A section with one table of `rows` (a caption that may be a column of the pages)."""
    opening, closing = table_around("\x00caption\x00", cols, sorted_by, sortable=sortable,
                                    cls=cls)  # fmt: skip
    if head is not None:  # another header row (the grid's, by number of deals)
        opening = opening.split("<thead>")[0] + "\x00head\x00" + opening.split("</thead>")[1]
    before = section_open(h2, ident) + (f'<p class="note">{html.escape(hint)}</p>\n'
                                        if hint else "")  # fmt: skip
    caption = escape(caption) if isinstance(caption, pl.Expr) else pl.lit(str(html.escape(caption)))
    pieces = opening.split("\x00caption\x00")
    items: list = [before, pieces[0], caption, pieces[1], caption]
    rest = pieces[2]
    if head is not None:
        first, second = rest.split("\x00head\x00")
        items += [first, pl.col(head), second]
    else:
        items.append(rest)
    page.add(*items)
    page.rows(rows, on)
    page.add(closing + SECTION_CLOSE)


def _facts(items: list[tuple[str, pl.Expr]]) -> list:
    """A section of facts (label, value: a column of the pages, escaped here)."""
    out: list = ["\n<section>\n", html.FACTS_OPEN]
    for label, value in items:
        out += [f"<div><dt>{html.escape(label)}<dd>", escape(value).fill_null(MISSING), "</div>"]
    return out + [html.FACTS_CLOSE, SECTION_CLOSE]


def month_pages(monthly, tournaments, daily, w, lang, previous: Previous = NO_PREVIOUS,
                shell: html.Shell | None = None,
                names: dict | None = None) -> Iterator[PageSet | Reuse]:  # fmt: skip
    """A page per month (ranking, days, tournaments); a month whose rows did not change keeps
    its page (a past month, most nights)."""
    days = (
        daily.select(pl.col("date").cast(pl.String).str.slice(0, 7).alias("month"), "date")
        .unique() if daily is not None else None
    )  # fmt: skip
    shown = pl.concat([monthly["month"], tournaments["month"]]).drop_nulls().unique()
    fps = fingerprints("month", monthly, tournaments, *([days] if days is not None else []))
    reuse, todo = split_unchanged(fps.filter(pl.col("month").is_in(shown.implode())), "month",
                                  paths.sim_month, previous)  # fmt: skip
    yield from reuse
    if todo.is_empty():
        return
    monthly = rows_of(monthly, "month", todo, reuse)
    tournaments = rows_of(tournaments, "month", todo, reuse)
    names = names or {}
    cols = [
        Col(w["rank"], text(pl.col("rank_indice")), num=True),
        Col(w["player"], pl.col("player_id"), href=player_href(MONTHS_DIR), th=True),
        Col(w["indice"], number(pl.col("indice"), 2, lang), num=True),
        Col(w["victoire"], number(pl.col("victoire"), 2, lang), num=True),
        Col(w["n_tournaments"], text(pl.col("tournaments")), num=True),
        Col(w["wins"], text(pl.col("wins")), num=True),
        Col(w["pct_actuel"], number(pl.col("pct_actuel"), 1, lang), num=True),
        Col(w["representative"], yes_no(pl.col("representative"), w)),
    ]
    ranking = grouped_rows(
        monthly.sort("month", "rank_indice", "player_id", nulls_last=True), ["month"],
        row_items(cols, "", row_id=paths.player_row_anchor_expr()),
    )  # fmt: skip
    t_cols = _tournament_cols(w, MONTHS_DIR)
    listed = grouped_rows(tournaments.sort("month", "tournament_start", "tournament_id"),
                          ["month"], row_items(t_cols, ""))  # fmt: skip
    days_links = (
        daily.select(day=pl.col("date").cast(pl.String)).unique().sort("day")
        .group_by(month=pl.col("day").str.slice(0, 7), maintain_order=True)
        .agg(pl.concat_str(pl.lit('<li><a href="'), pl.col("day"), pl.lit('.html">'),
                           pl.col("day"), pl.lit("</a>")).str.join("").alias("_days"))
        if daily is not None else pl.DataFrame(schema={"month": pl.String, "_days": pl.String})
    )  # fmt: skip
    frame = (
        todo.join(monthly.group_by("month").len("_players"), on="month", how="left")
        .join(tournaments.group_by("month").len("_tournaments"), on="month", how="left")
        .join(days_links, on="month", how="left")
        .sort("month")
        .with_columns(
            path=pl.concat_str(pl.lit("simultane/"), pl.col("month"), pl.lit("/index.html")),
            _name=pl.col("month").replace_strict(names, default=pl.col("month")),
        )
    )  # fmt: skip
    name = pl.col("_name")
    page = Pages(frame)
    page.add(*_head(shell, pl.concat_str(pl.lit(f"{w['simultane']} — "), name),
                    [(w["home"], paths.INDEX)]))  # fmt: skip
    page.add(*_facts([
        (w["month"], name),
        (w["players"], pl.col("_players").fill_null(0).cast(pl.String)),
        (w["tournaments"], pl.col("_tournaments").fill_null(0).cast(pl.String)),
    ]))  # fmt: skip
    page.add("\n")
    _table(
        page,
        ranking,
        "month",
        pl.concat_str(pl.lit(f"{w['monthly_ranking']} — "), name),
        cols,
        0,
        h2=w["monthly_ranking"],
        ident="classement",
        hint=w["sort_hint"],
    )
    page.add(pl.when(pl.col("_days").is_not_null()).then(pl.concat_str(
        pl.lit("\n" + section_open(w["days"]) + '<ul class="links">'), pl.col("_days"),
        pl.lit("</ul>" + SECTION_CLOSE))).otherwise(pl.lit("")))  # fmt: skip
    page.add("\n")
    _table(page, listed, "month", w["tournaments"], t_cols, 0, h2=w["tournaments"])
    page.add(shell.tail(ROOT, True))
    yield page.done()


def day_pages(daily, tournaments, w, lang, crumb, previous: Previous = NO_PREVIOUS,
              shell: html.Shell | None = None,
              names: dict | None = None) -> Iterator[PageSet | Reuse]:  # fmt: skip
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
    by_day = grouped_rows(standings, ["day"], row_items(cols, ""))
    t_cols = _tournament_cols(w, MONTHS_DIR)
    listed = grouped_rows(tournaments.sort("day", "tournament_start", "tournament_id"), ["day"],
                          row_items(t_cols, ""))  # fmt: skip
    frame = (
        todo.sort("day")
        .with_columns(
            path=pl.concat_str(
                pl.lit("simultane/"),
                pl.col("day").str.slice(0, 7),
                pl.lit("/"),
                pl.col("day"),
                pl.lit(".html"),
            ),
            month=pl.col("day").str.slice(0, 7),
        )
        .with_columns(_name=pl.col("month").replace_strict(names or {}, default=pl.col("month")))
    )
    page = Pages(frame)
    title = pl.concat_str(pl.lit(f"{w['daily_standings']} — "), pl.col("day"))
    month_page = pl.concat_str(pl.lit("simultane/"), pl.col("month"), pl.lit("/index.html"))
    page.add(*_head(shell, title, [(w["home"], paths.INDEX), crumb,
                                   (pl.col("_name"), month_page)]))  # fmt: skip
    page.add("\n<section>\n", pl.concat_str(
        pl.lit(f'<p class="note">{html.escape(w["as_of_evening"])} '), pl.col("day"),
        pl.lit(".</p>")), SECTION_CLOSE + "\n")  # fmt: skip
    _table(page, by_day, "day", title, cols, 0)
    page.add("\n")
    _table(page, listed, "day", w["tournaments"], t_cols, 0, h2=w["tournaments"])
    page.add(shell.tail(ROOT, True))
    yield page.done()


def tournament_pages(
    results,
    deals,
    tournaments,
    w,
    lang,
    crumb,
    previous,
    shell: html.Shell | None = None,
    names: dict | None = None,
) -> Iterator:
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
    row_cls = (
        pl.when(pl.col("is_bot")).then(pl.lit("bot"))
        .when(pl.col("is_winner")).then(pl.lit("winner"))
        .otherwise(pl.lit(""))
    )  # fmt: skip
    player = pl.when(pl.col("is_bot")).then(pl.lit(w["bot"])).otherwise(pl.col("player_id"))
    link = pl.when(pl.col("is_bot")).then(pl.lit(None, pl.String)).otherwise(
        player_href(TOURNAMENTS_DIR))  # fmt: skip
    cols = [
        Col(w["rank"], text(pl.col("rank")), num=True),
        Col(w["player"], player, href=link, th=True),
        Col(w["points"], text(pl.col("points")), num=True),
        Col(w["top"], text(pl.col("top")), num=True),
        Col(w["mp_pct"], number(pl.col("mp_pct"), 2, lang), num=True),
        Col(w["deals_played"], text(pl.col("deals_played")), num=True),
        Col(w["completed"], yes_no(pl.col("completed"), w)),
    ]
    standings = grouped_rows(ordered, ["tournament_id"], row_items(cols, "", row_cls))
    frame = (
        todo.join(tournaments, on="tournament_id", how="left").sort("tournament_start",
                                                                    "tournament_id")
        .with_columns(
            path=pl.concat_str(pl.lit(TOURNAMENTS_DIR), paths.slug_expr("tournament_id"),
                               pl.lit(".html")),
            _name=pl.col("month").replace_strict(names or {}, default=pl.col("month")),
            _month_page=pl.concat_str(pl.lit("simultane/"), pl.col("month"),
                                      pl.lit("/index.html")),
        )
    )  # fmt: skip
    most = int(frame["deals"].max() or 0)
    grid_heads = {
        n: html.thead(((w["player"], False),) + tuple((str(d), True) for d in range(1, n + 1)),
                      None)
        for n in range(most + 1)
    }  # fmt: skip
    frame = frame.with_columns(
        _thead=pl.col("deals").fill_null(0).replace_strict(grid_heads, return_dtype=pl.String)
    )
    page = Pages(frame)
    title = pl.concat_str(pl.lit(f"{w['tournament']} "), pl.col("tournament_id"))
    page.add(*_head(shell, title, [(w["home"], paths.INDEX), crumb,
                                   (pl.col("_name"), pl.col("_month_page"))]))  # fmt: skip
    page.add(*_facts([
        (w["start"], pl.col("start")),
        (w["players"], pl.col("humans").cast(pl.String)),
        (w["deals"], pl.col("deals").cast(pl.String)),
        (w["winners"], pl.when(pl.col("winners").fill_null("") == "").then(pl.lit(w["no_winner"]))
         .otherwise(pl.col("winners"))),
    ]))  # fmt: skip
    page.add("\n")
    _table(page, standings, "tournament_id",
           pl.concat_str(pl.lit(f"{w['standings']} — "), pl.col("tournament_id")), cols, 0,
           h2=w["standings"])  # fmt: skip
    if deals is not None and not deals.is_empty():
        grid = deal_grids(ordered, deals, tournaments, w, lang)
        page.add("\n")
        _table(
            page,
            grid,
            "tournament_id",
            w["grid_legend"],
            [Col(w["player"], pl.lit(""))],
            None,
            h2=w["grid"],
            sortable=False,
            cls="grid",
            head="_thead",
        )
    page.add(shell.tail(ROOT, True))
    yield page.done()


GRID_CELLS = ("<td>", "<td class=top>", "<td class=bulle>", '<td class="unfinished bulle">')


def deal_grids(ordered: pl.DataFrame, deals: pl.DataFrame, summary: pl.DataFrame, w: dict,
               lang: str) -> Rows:  # fmt: skip
    """The rows of the deal-by-deal grid of every tournament: a row per participant in rank
    order (`ordered`: the tournament results sorted so), a cell per deal of its tournament
    (`summary`: tournament_id, deals),
    empty where the player has no row (a quit); top, bulle and unfinished deals by class.

    Put together as a matrix of fragment codes (participants × deals) on integer positions:
    each deal row's participant is found by the hashes of its ids (`markup.positions`), not
    by a join of 3.6 M rows."""
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
    # each cell: its class (0 plain, 1 top, 2 bulle, 3 unfinished) and its % to one decimal,
    # coded as one integer on the deals' columns
    unfinished = pl.col("status") != "finished"
    kind = (
        pl.when(pl.col("is_top").fill_null(False)).then(1)
        .when(unfinished).then(3)
        .when(pl.col("is_bulle").fill_null(False)).then(2)
        .otherwise(0)
    )  # fmt: skip
    pct = scaled(pl.col("pct"), 1)
    low, high = deals.select(pct.min().alias("low"), pct.max().alias("high")).row(0)
    low, high = (0, 0) if low is None else (int(low), int(high))
    span = high - low + 2  # a null, then low..high
    keys = deals.select(
        code=kind * span + (pct - (low - 1)).fill_null(0), deal_no=pl.col("deal_no")
    )
    pool = markup.Pool()
    every = pl.DataFrame({"code": np.arange(4 * span)}).select(
        kind=pl.col("code") // span,
        pct=pl.when(pl.col("code") % span == 0).then(None).otherwise(pl.col("code") % span
                                                                    + (low - 1)),
    )  # fmt: skip
    base = pool.add(every.select(pl.concat_str(
        pl.col("kind").replace_strict(list(range(4)), list(GRID_CELLS), return_dtype=pl.String),
        num_scaled(pl.col("pct"), 1, lang))).to_series())  # fmt: skip
    empty = pool.add(pl.Series([GRID_CELLS[0]]))
    # the head of each row: the player (the standings above link to the player's page)
    heads = pool.add(
        players.to_frame("player_id")
        .select(pl.concat_str(pl.lit("\n<tr><th scope=row>"), escape(pl.col("player_id"))))
        .to_series()
    )
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
    deal_no = keys["deal_no"].to_numpy()
    codes = keys["code"].to_numpy() + base
    placed = (row >= 0) & (deal_no >= 1) & (deal_no < width)
    if placed.all():
        matrix[row * width + deal_no] = codes
    else:
        matrix[row[placed] * width + deal_no[placed]] = codes[placed]
    used = (np.arange(width)[None, :] <= n_deals[:, None]).ravel()
    joined = markup.join(pool, matrix[used], per_row=n_deals + 1)
    return Rows(joined, markup.groups(participants, ["tournament_id"], joined))


def player_pages(monthly, results, blocks, w, lang, timezone, window_results, crumb,
                 previous, shell: html.Shell | None = None):  # fmt: skip
    """A page per player; one whose rows (20-deal results, months, tournaments) did not change
    keeps its page."""
    shell = shell or html.Shell.of(lang, w)
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
    monthly, humans = (
        rows_of(monthly, "player_id", todo, reuse),
        rows_of(humans, "player_id", todo, reuse),
    )
    blocks = rows_of(blocks, "player_id", todo, reuse) if has_blocks else None
    block_cols = [
        Col(w["block_no"], text(pl.col("block_no")), num=True),
        Col(w["ended_at"], minute(pl.col("ended_at"), timezone)),
        Col(w["pct_cumul"], number(pl.col("pct_cumul"), 2, lang), num=True),
        Col(w["pct_actuel"], number(pl.col("pct_actuel"), 2, lang), num=True),
        Col(w["k"], text(pl.col("k")), num=True),
        Col(w["in_window"], yes_no(pl.col("in_window"), w)),
    ]
    month_cols = [
        Col(w["month"], pl.col("month"), href=month_href(PLAYERS_DIR), th=True),
        rank_cell(w, "rank_indice", latest, month_href(PLAYERS_DIR)),
        Col(w["indice"], number(pl.col("indice"), 2, lang), num=True),
        Col(w["victoire"], number(pl.col("victoire"), 2, lang), num=True),
        Col(w["n_tournaments"], text(pl.col("tournaments")), num=True),
        Col(w["wins"], text(pl.col("wins")), num=True),
        Col(w["pct_actuel"], number(pl.col("pct_actuel"), 1, lang), num=True),
    ]
    played_cols = [
        Col(w["start"], minute(pl.col("tournament_start"), timezone)),
        Col(w["tournament"], pl.col("tournament_id"), href=tournament_href(PLAYERS_DIR), th=True),
        Col(w["rank"], text(pl.col("rank")), num=True),
        Col(w["points"], text(pl.col("points")), num=True),
        Col(w["mp_pct"], number(pl.col("mp_pct"), 2, lang), num=True),
        Col(w["winner"], yes_no(pl.col("is_winner"), w)),
    ]
    frame = (
        todo.select("player_id", "fingerprint")
        .sort("player_id")
        .with_columns(
            path=pl.concat_str(pl.lit(PLAYERS_DIR), paths.slug_expr("player_id"), pl.lit(".html"))
        )
    )
    page = Pages(frame)
    page.add(*_head(shell, pl.concat_str(pl.lit(f"{w['player']} "), pl.col("player_id")),
                    [(w["home"], paths.INDEX), crumb]))  # fmt: skip
    if has_blocks:
        ordered = blocks.sort("player_id", "block_no")
        facts = ordered.group_by("player_id").agg(
            pl.col("pct_actuel").last(),
            pl.col("representative").last(),
            local_time(pl.col("ended_at").last(), timezone, "%Y-%m-%d").alias("_as_of"),
            pl.len().alias("_n_blocks"),
        )
        frame = page.frame = frame.join(facts, on="player_id", how="left", maintain_order="left")
    else:
        frame = page.frame = frame.with_columns(
            pct_actuel=pl.lit(None, pl.Float64), representative=pl.lit(None, pl.Boolean),
            _as_of=pl.lit(None, pl.String), _n_blocks=pl.lit(None, pl.UInt32),
        )  # fmt: skip
    facts_items = [
        (w["pct_actuel"], pl.col("pct_actuel")),
        (w["representative"], pl.col("representative")),
        (w["blocks"], pl.col("_n_blocks")),
        (w["latest"], pl.col("_as_of")),
    ]
    from flows.tools.site.fmt import num  # the facts: a few thousand values

    shown = [
        num(pl.col("pct_actuel"), 1, lang),
        pl.when(pl.col("representative").fill_null(False)).then(pl.lit(w["yes"]))
        .otherwise(pl.lit(w["no"])),
        pl.col("_n_blocks").fill_null(0).cast(pl.String),
    ]  # fmt: skip
    items: list = ["\n<section>\n", html.FACTS_OPEN]
    for (label, _), value in zip(facts_items[:3], shown, strict=True):
        items += [f"<div><dt>{html.escape(label)}<dd>", value, "</div>"]
    items.append(pl.when(pl.col("_as_of").is_not_null()).then(pl.concat_str(
        pl.lit(f"<div><dt>{html.escape(w['latest'])}<dd>"), pl.col("_as_of"), pl.lit("</div>")))
        .otherwise(pl.lit("")))  # fmt: skip
    page.add(*items, html.FACTS_CLOSE + SECTION_CLOSE + "\n")
    legend = [
        ("red", w["curve_legend_red"], "dot"),
        ("blue", w["curve_legend_blue"], "dot"),
        ("grey", w["curve_legend_grey"], "dot"),
        ("green", w["curve_legend_green"], "line"),
    ]
    no_blocks = html.section({"kind": "text", "text": w["no_blocks"]}, ROOT, w)
    if has_blocks:
        curves = simultane_curves(ordered, w, lang, timezone, window_results)
        page.frame = frame.join(curves.frames, on="player_id", how="left", maintain_order="left")
        opening = section_open(w["curve"], "courbe") + '<figure class="chart">\n'
        page.add(pl.when(pl.col("_svg").is_not_null()).then(pl.concat_str(
            pl.lit(opening), pl.col("_svg"))).otherwise(pl.lit(no_blocks)))  # fmt: skip
        page.rows(curves.line, "player_id", curves.line_open, curves.line_close, missing="")
        page.rows(curves.points, "player_id", missing="")
        page.add(pl.when(pl.col("_svg").is_not_null()).then(pl.lit(
            CHART_CLOSE + "\n" + html.legend(legend) + "\n</figure>" + SECTION_CLOSE + "\n"))
            .otherwise(pl.lit("\n")))  # fmt: skip
        block_rows = grouped_rows(ordered, ["player_id"], row_items(block_cols, ""))
        before, after = table_around(w["blocks"], block_cols, 0)
        page.rows(block_rows, "player_id", section_open(w["blocks"]) + before,
                  after + SECTION_CLOSE + "\n", missing="")  # fmt: skip
    else:
        page.add(no_blocks + "\n")
    month_rows = grouped_rows(monthly.sort("player_id", "month"), ["player_id"],
                              row_items(month_cols, ""))  # fmt: skip
    before, after = table_around(w["months"], month_cols, 0)
    page.rows(month_rows, "player_id", section_open(w["months"]) + before,
              after + SECTION_CLOSE + "\n", missing="")  # fmt: skip
    played = grouped_rows(
        humans.sort("player_id", "tournament_start", "tournament_id",
                    descending=[False, True, True]),
        ["player_id"], row_items(played_cols, ""),
    )  # fmt: skip
    before, after = table_around(w["tournaments"], played_cols, None)
    page.rows(played, "player_id", section_open(w["tournaments"]) + before,
              after + SECTION_CLOSE, missing="")  # fmt: skip
    page.add(shell.tail(ROOT, True))
    yield page.done()
