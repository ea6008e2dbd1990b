"""Pages of the Simultané individuel: monthly ranking, daily standings, each tournament
(standings, winners, the deal-by-deal grid with top and bulle), each player (the Performance
Simultané curve, % actuel, the 20-deal results, the months, the tournaments)."""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from flows.chart import IN_WINDOW, NEXT_TO_LEAVE, OUT_OF_WINDOW, PCT_ACTUEL
from flows.site import html, paths
from flows.site.fmt import MISSING, escape, local_time, num, text, yes_no
from flows.site.labels import month_name
from flows.site.model import NO_PREVIOUS, Page, Previous, Reuse, fingerprints, split_unchanged
from flows.site.svg import simultane_curves
from flows.site.tables import (
    Col,
    bodies,
    bodies_frame,
    facts_html,
    header,
    live_rank,
    placed,
    rank_cell,
    table_around,
)

DEPTH_MONTH = "../../"  # simultane/<month>/… and simultane/<kind>/<id>.html: two folders down
PLAYER_LINK = pl.concat_str(pl.lit("simultane/joueurs/"), paths.slug_expr("player_id"),
                            pl.lit(".html"))  # fmt: skip
TOURNAMENT_LINK = pl.concat_str(
    pl.lit("simultane/tournois/"), paths.slug_expr("tournament_id"), pl.lit(".html")
)


def pages(t: dict, w: dict, lang: str, timezone: str, window_results: int,
          previous: Previous = NO_PREVIOUS) -> Iterator[Page | Reuse]:  # fmt: skip
    monthly = t["simultane_monthly"]
    results = t["simultane_tournament_results"]
    if monthly is None or results is None:
        return
    months = months_of(monthly, results)
    if not months:
        return
    daily = t["simultane_daily"]
    deals = t["simultane_deal_results"]
    blocks = t["simultane_blocks"]
    crumb = (w["simultane"], paths.sim_month(months[-1]))
    tournaments = tournament_summary(results, deals, timezone)
    yield from month_pages(monthly, tournaments, daily, w, lang, previous)
    if daily is not None:
        yield from day_pages(daily, tournaments, w, lang, crumb, previous)
    yield from tournament_pages(results, deals, tournaments, w, lang, crumb, previous)
    yield from player_pages(monthly, results, blocks, w, lang, timezone, window_results, crumb,
                            previous)  # fmt: skip


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


def _tournament_cols(w: dict) -> list[Col]:
    return [
        Col(w["start"], pl.col("start")),
        Col(w["tournament"], pl.col("tournament_id"), href=pl.col("link"), th=True),
        Col(w["players"], text(pl.col("humans")), num=True),
        Col(w["deals"], text(pl.col("deals")), num=True),
        Col(w["winners"], pl.when(pl.col("winners") == "").then(pl.lit(w["bot"]))
            .otherwise(pl.col("winners"))),
    ]  # fmt: skip


def month_pages(monthly, tournaments, daily, w, lang,
                previous: Previous = NO_PREVIOUS) -> Iterator[Page | Reuse]:  # fmt: skip
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
    fingerprint_of = dict(todo.select("month", "fingerprint").iter_rows())
    keep = pl.col("month").is_in(todo["month"].implode())
    monthly, tournaments = monthly.filter(keep), tournaments.filter(keep)
    cols = [
        Col(w["rank"], text(pl.col("rank_indice")), num=True),
        Col(w["player"], pl.col("player_id"), href=PLAYER_LINK, th=True),
        Col(w["indice"], num(pl.col("indice"), 2, lang), num=True),
        Col(w["victoire"], num(pl.col("victoire"), 2, lang), num=True),
        Col(w["n_tournaments"], text(pl.col("tournaments")), num=True),
        Col(w["wins"], text(pl.col("wins")), num=True),
        Col(w["pct_actuel"], num(pl.col("pct_actuel"), 1, lang), num=True),
        Col(w["representative"], yes_no(pl.col("representative"), w)),
    ]
    ranking = monthly.sort("month", "rank_indice", "player_id", nulls_last=True)
    bodies_by_month = bodies(ranking, ["month"], cols, DEPTH_MONTH,
                             row_id=paths.player_row_anchor_expr())  # fmt: skip
    t_bodies = bodies(tournaments, ["month"], _tournament_cols(w), DEPTH_MONTH)
    days_by_month: dict[str, list[str]] = {}
    if daily is not None:
        for day in sorted(set(daily["date"].cast(pl.String).to_list())):
            days_by_month.setdefault(day[:7], []).append(day)
    counts = dict(monthly.group_by("month").len().iter_rows())
    for month in sorted(set(bodies_by_month) | set(t_bodies)):
        path = paths.sim_month(month)
        sections = [
            {"kind": "facts", "items": [
                (w["month"], month_name(month, lang), None),
                (w["players"], str(counts.get(month, 0)), None),
                (w["tournaments"], str(len(tournaments.filter(pl.col("month") == month))),
                 None),
            ]},
            {"kind": "table", "h2": w["monthly_ranking"], "id": "classement",
             "caption": f"{w['monthly_ranking']} — {month_name(month, lang)}",
             "cols": header(cols), "body": bodies_by_month.get(month, ""), "sortable": True,
             "sorted": 0, "hint": w["sort_hint"]},
        ]  # fmt: skip
        if days_by_month.get(month):
            sections.append({"kind": "links", "h2": w["days"], "items": [
                (day, paths.sim_day(day), None) for day in days_by_month[month]
            ]})  # fmt: skip
        sections.append({
            "kind": "table", "h2": w["tournaments"], "caption": w["tournaments"],
            "cols": header(_tournament_cols(w)), "body": t_bodies.get(month, ""),
            "sortable": True, "sorted": 0,
        })  # fmt: skip
        yield Page(
            path,
            f"{w['simultane']} — {month_name(month, lang)}",
            sections,
            crumbs=[(w["home"], paths.INDEX)],
            fingerprint=fingerprint_of[month],
        )


def day_pages(daily, tournaments, w, lang, crumb,
              previous: Previous = NO_PREVIOUS) -> Iterator[Page | Reuse]:  # fmt: skip
    """A page per day (the month's standings that evening, the day's tournaments); a past day
    keeps its page."""
    daily = daily.with_columns(day=pl.col("date").cast(pl.String))
    tournaments = tournaments.filter(pl.col("day").is_in(daily["day"].unique().implode()))
    fps = fingerprints("day", daily, tournaments)
    reuse, todo = split_unchanged(fps, "day", paths.sim_day, previous)
    yield from reuse
    fingerprint_of = dict(todo.select("day", "fingerprint").iter_rows())
    keep = pl.col("day").is_in(todo["day"].implode())
    daily, tournaments = daily.filter(keep), tournaments.filter(keep)
    cols = [
        Col(w["rank"], text(pl.col("rank")), num=True),
        Col(w["player"], pl.col("player_id"), href=PLAYER_LINK, th=True),
        Col(w["indice"], num(pl.col("indice"), 2, lang), num=True),
        Col(w["victoire"], num(pl.col("victoire"), 2, lang), num=True),
        Col(w["n_tournaments"], text(pl.col("tournaments")), num=True),
        Col(w["wins"], text(pl.col("wins")), num=True),
    ]
    standings = (
        daily.with_columns(
            rank=pl.col("indice").rank("min", descending=True).over("date").cast(pl.Int64),
        )
        .sort("day", "rank", "player_id")
    )  # fmt: skip
    by_day = bodies(standings, ["day"], cols, DEPTH_MONTH)
    t_bodies = bodies(tournaments, ["day"], _tournament_cols(w), DEPTH_MONTH)
    for day, body in by_day.items():
        month = day[:7]
        yield Page(
            paths.sim_day(day),
            f"{w['daily_standings']} — {day}",
            [
                {"kind": "text", "text": f"{w['as_of_evening']} {day}.", "cls": "note"},
                {"kind": "table", "caption": f"{w['daily_standings']} — {day}",
                 "cols": header(cols), "body": body, "sortable": True, "sorted": 0},
                {"kind": "table", "h2": w["tournaments"], "caption": w["tournaments"],
                 "cols": header(_tournament_cols(w)), "body": t_bodies.get(day, ""),
                 "sortable": True, "sorted": 0},
            ],  # fmt: skip
            crumbs=[(w["home"], paths.INDEX), crumb, (month_name(month, lang),
                                                      paths.sim_month(month))],
            fingerprint=fingerprint_of[day],
        )


def tournament_pages(results, deals, tournaments, w, lang, crumb, previous) -> Iterator:
    """A page per tournament; one whose rows did not change keeps its page (the grids are
    the largest pages of the site)."""
    fps = fingerprints("tournament_id", results, *([deals] if deals is not None else []))
    reuse, todo = split_unchanged(
        fps, "tournament_id", lambda t: paths.sim_tournament(paths.slug(t)), previous
    )
    yield from reuse
    fingerprint_of = dict(todo.select("tournament_id", "fingerprint").iter_rows())
    keep = pl.col("tournament_id").is_in(todo["tournament_id"].implode())
    results, tournaments = results.filter(keep), tournaments.filter(keep)
    deals = deals.filter(keep) if deals is not None else None
    ordered = results.sort("tournament_id", "rank", "player_id")
    row_cls = (
        pl.when(pl.col("is_bot"))
        .then(pl.lit("bot"))
        .when(pl.col("is_winner"))
        .then(pl.lit("winner"))
        .otherwise(pl.lit(""))
    )
    player = pl.when(pl.col("is_bot")).then(pl.lit(w["bot"])).otherwise(pl.col("player_id"))
    link = pl.when(pl.col("is_bot")).then(pl.lit(None, pl.String)).otherwise(PLAYER_LINK)
    cols = [
        Col(w["rank"], text(pl.col("rank")), num=True),
        Col(w["player"], player, href=link, th=True),
        Col(w["points"], text(pl.col("points")), num=True),
        Col(w["top"], text(pl.col("top")), num=True),
        Col(w["mp_pct"], num(pl.col("mp_pct"), 2, lang), num=True),
        Col(w["deals_played"], text(pl.col("deals_played")), num=True),
        Col(w["completed"], yes_no(pl.col("completed"), w)),
    ]
    standings = bodies(ordered, ["tournament_id"], cols, DEPTH_MONTH, row_cls)
    grids = deal_grids(ordered, deals, w, lang) if deals is not None else {}
    for row in tournaments.iter_rows(named=True):
        tid = row["tournament_id"]
        month = row["month"]
        winners = row["winners"] or w["no_winner"]
        sections = [
            {"kind": "facts", "items": [
                (w["start"], row["start"], None),
                (w["players"], str(row["humans"]), None),
                (w["deals"], MISSING if row["deals"] is None else str(row["deals"]), None),
                (w["winners"], winners, None),
            ]},
            {"kind": "table", "h2": w["standings"], "caption": f"{w['standings']} — {tid}",
             "cols": header(cols), "body": standings.get(tid, ""), "sortable": True,
             "sorted": 0},
        ]  # fmt: skip
        if tid in grids:
            n = row["deals"] or 0
            grid_cols = [{"label": w["player"], "num": False}] + [
                {"label": str(d), "num": True} for d in range(1, n + 1)
            ]
            sections.append({
                "kind": "table", "h2": w["grid"], "caption": w["grid_legend"],
                "cols": grid_cols, "body": grids[tid], "sortable": False, "cls": "grid",
            })  # fmt: skip
        yield Page(
            paths.sim_tournament(paths.slug(tid)),
            f"{w['tournament']} {tid}",
            sections,
            crumbs=[(w["home"], paths.INDEX), crumb,
                    (month_name(month, lang), paths.sim_month(month))],
            fingerprint=fingerprint_of[tid],
        )  # fmt: skip


def deal_grids(ordered: pl.DataFrame, deals: pl.DataFrame, w: dict, lang: str) -> dict:
    """{tournament_id: `<tr>` rows of the deal-by-deal grid}: a row per participant in rank
    order, a cell per deal of the tournament (empty where the player has no row: a quit)."""
    participants = ordered.select("tournament_id", "player_id", "is_bot").with_row_index("_order")
    n_deals = deals.group_by("tournament_id").agg(pl.col("deal_no").max().alias("_n"))
    participants = participants.join(n_deals, on="tournament_id", how="left")
    unfinished = pl.col("status") != "finished"
    cls = (
        pl.when(pl.col("is_top").fill_null(False))
        .then(pl.lit(' class="top"'))
        .when(unfinished)
        .then(pl.lit(' class="unfinished bulle"'))
        .when(pl.col("is_bulle").fill_null(False))
        .then(pl.lit(' class="bulle"'))
        .otherwise(pl.lit(""))
    )
    # the words of a status, looked up once per distinct status (3.5 M cells in a month)
    statuses = deals["status"].drop_nulls().unique().to_list()
    why = {s: "" if s == "finished" else f" · {w['deal_status'].get(s, s)}" for s in statuses}
    title = pl.concat_str(
        text(pl.col("points")),
        pl.lit(f" {w['points'].lower()}"),
        pl.col("status").replace_strict(why, default="", return_dtype=pl.String)
        if why else pl.lit(""),
        ignore_nulls=True,
    )  # fmt: skip
    # deals a player has no row for (after a quit) stay as empty cells; rows are sorted by
    # participant (`_order`, an integer: cheaper to sort than two ids) and deal, so the
    # previous row is the player's previous deal or another participant's
    same = pl.col("_order") == pl.col("_order").shift(1)
    previous = pl.when(same).then(pl.col("deal_no").shift(1)).otherwise(0)
    most = int(deals["deal_no"].max() or 0) + 1
    empties = {n: "<td></td>" * n for n in range(most + 1)}  # n empty cells, looked up

    def empty_cells(n: pl.Expr) -> pl.Expr:
        return n.clip(0, most).replace_strict(empties, return_dtype=pl.String)

    cell = pl.concat_str(
        empty_cells(pl.col("deal_no") - previous - 1),
        pl.lit("<td"), cls, pl.lit(' title="'), title, pl.lit('">'),
        num(pl.col("pct"), 1, lang), pl.lit("</td>"),
    )  # fmt: skip
    # a participant's cells in deal order, grouped before meeting the (fewer) participants
    per_player = (
        deals.lazy()
        .join(participants.lazy().select("tournament_id", "player_id", "_order"),
              on=["tournament_id", "player_id"])
        .sort("_order", "deal_no")
        .with_columns(cell.alias("cell"))
        .group_by("_order")
        .agg(pl.col("cell").sort_by("deal_no").str.join(""), pl.col("deal_no").max().alias("_last"))
        .collect()
    )  # fmt: skip
    name = pl.when(pl.col("is_bot")).then(pl.lit(w["bot"])).otherwise(escape(pl.col("player_id")))
    head = (
        pl.when(pl.col("is_bot"))
        .then(pl.concat_str(pl.lit('<tr class="bot"><th scope="row">'), name, pl.lit("</th>")))
        .otherwise(
            pl.concat_str(
                pl.lit(f'<tr><th scope="row"><a href="{DEPTH_MONTH}'), escape(PLAYER_LINK),
                pl.lit('">'), name, pl.lit("</a></th>"),
            )
        )
    )  # fmt: skip
    trailing = pl.col("_n").fill_null(0) - pl.col("_last").fill_null(0)
    rows = (
        participants.lazy()
        .join(per_player.lazy(), on="_order", how="left")
        .select(
            "tournament_id",
            "_order",
            pl.concat_str(
                head, pl.col("cell").fill_null(""), empty_cells(trailing), pl.lit("</tr>"),
            ).alias("tr"),
        )
        .group_by("tournament_id")
        .agg(pl.col("tr").sort_by("_order").str.join("\n"))
        .collect()
    )  # fmt: skip
    return dict(rows.iter_rows())


def player_pages(monthly, results, blocks, w, lang, timezone, window_results, crumb,
                 previous):  # fmt: skip
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
    fingerprint_of = dict(todo.select("player_id", "fingerprint").iter_rows())
    keep = pl.col("player_id").is_in(todo["player_id"].implode())
    monthly, humans = monthly.filter(keep), humans.filter(keep)
    blocks = blocks.filter(keep) if has_blocks else None
    block_cols = [
        Col(w["block_no"], text(pl.col("block_no")), num=True),
        Col(w["ended_at"], local_time(pl.col("ended_at"), timezone)),
        Col(w["pct_cumul"], num(pl.col("pct_cumul"), 2, lang), num=True),
        Col(w["pct_actuel"], num(pl.col("pct_actuel"), 2, lang), num=True),
        Col(w["k"], text(pl.col("k")), num=True),
        Col(w["in_window"], yes_no(pl.col("in_window"), w)),
    ]
    month_cols = [
        Col(w["month"], pl.col("month"), href=pl.concat_str(
            pl.lit("simultane/"), pl.col("month"), pl.lit("/index.html")), th=True),
        rank_cell(w, "rank_indice", latest, pl.concat_str(
            pl.lit("simultane/"), pl.col("month"), pl.lit("/index.html"))),
        Col(w["indice"], num(pl.col("indice"), 2, lang), num=True),
        Col(w["victoire"], num(pl.col("victoire"), 2, lang), num=True),
        Col(w["n_tournaments"], text(pl.col("tournaments")), num=True),
        Col(w["wins"], text(pl.col("wins")), num=True),
        Col(w["pct_actuel"], num(pl.col("pct_actuel"), 1, lang), num=True),
    ]  # fmt: skip
    played_cols = [
        Col(w["start"], local_time(pl.col("tournament_start"), timezone)),
        Col(w["tournament"], pl.col("tournament_id"), href=TOURNAMENT_LINK, th=True),
        Col(w["rank"], text(pl.col("rank")), num=True),
        Col(w["points"], text(pl.col("points")), num=True),
        Col(w["mp_pct"], num(pl.col("mp_pct"), 2, lang), num=True),
        Col(w["winner"], yes_no(pl.col("is_winner"), w)),
    ]
    legend = [
        (IN_WINDOW, w["curve_legend_red"], "dot"),
        (NEXT_TO_LEAVE, w["curve_legend_blue"], "dot"),
        (OUT_OF_WINDOW, w["curve_legend_grey"], "dot"),
        (PCT_ACTUEL, w["curve_legend_green"], "line"),
    ]
    # each player's sections put together on columns: the text around a body (headings,
    # captions, the table's head) is the one `html.section` gives, cut around the body
    chart = html.around({"kind": "chart", "h2": w["curve"], "legend": legend, "id": "courbe"},
                        "svg", DEPTH_MONTH, w)  # fmt: skip
    no_blocks = html.section({"kind": "text", "text": w["no_blocks"]}, DEPTH_MONTH, w)

    frames = [todo.lazy().select("player_id")]
    if has_blocks:
        ordered_blocks = blocks.sort("player_id", "block_no")
        frames.append(
            bodies_frame(ordered_blocks, ["player_id"], block_cols, DEPTH_MONTH).lazy()
            .rename({"_tr": "_blocks"})
        )  # fmt: skip
        frames.append(
            simultane_curves(ordered_blocks, w, lang, timezone, window_results).lazy()
        )
        frames.append(
            ordered_blocks.lazy().group_by("player_id").agg(
                pl.col("pct_actuel").sort_by("block_no").last(),
                pl.col("representative").sort_by("block_no").last(),
                local_time(pl.col("ended_at"), timezone, "%Y-%m-%d").sort_by("block_no").last()
                .alias("_as_of"),
                pl.len().alias("_n_blocks"),
            )
        )  # fmt: skip
    else:
        frames.append(pl.LazyFrame(schema={
            "player_id": pl.String, "_blocks": pl.String, "svg": pl.String,
            "pct_actuel": pl.Float64, "representative": pl.Boolean, "_as_of": pl.String,
            "_n_blocks": pl.UInt32,
        }))  # fmt: skip
    frames.append(
        bodies_frame(monthly.sort("player_id", "month"), ["player_id"], month_cols, DEPTH_MONTH)
        .lazy().rename({"_tr": "_months"})
    )  # fmt: skip
    frames.append(
        bodies_frame(
            humans.sort("player_id", "tournament_start", "tournament_id",
                        descending=[False, True, True]),
            ["player_id"], played_cols, DEPTH_MONTH,
        ).lazy().rename({"_tr": "_played"})
    )  # fmt: skip
    every = frames[0]
    for frame in frames[1:]:
        every = every.join(frame, on="player_id", how="left")
    facts = facts_html([
        (w["pct_actuel"], num(pl.col("pct_actuel"), 1, lang), None),
        (w["representative"], pl.when(pl.col("representative").fill_null(False))
         .then(pl.lit(w["yes"])).otherwise(pl.lit(w["no"])), None),
        (w["blocks"], pl.col("_n_blocks").fill_null(0).cast(pl.String), None),
        (w["latest"], pl.col("_as_of"), None),  # a player with no 20-deal result: none
    ], DEPTH_MONTH)  # fmt: skip
    has_curve = pl.col("svg").is_not_null()
    content = pl.concat_str(
        pl.lit("<section>\n"), facts, pl.lit("\n</section>"),
        pl.when(has_curve).then(pl.concat_str(
            placed(pl.col("svg"), chart),
            placed(pl.col("_blocks"), table_around(w["blocks"], block_cols, 0, DEPTH_MONTH, w)),
        )).otherwise(pl.lit("\n" + no_blocks)),
        placed(pl.col("_months"), table_around(w["months"], month_cols, 0, DEPTH_MONTH, w))
        .fill_null(""),
        placed(pl.col("_played"), table_around(w["tournaments"], played_cols, None, DEPTH_MONTH,
                                               w)).fill_null(""),
    )  # fmt: skip
    script = has_curve | pl.col("_months").is_not_null() | pl.col("_played").is_not_null()
    # as UTF-8 bytes: the pages are written so, no text object made and encoded per page
    made = every.select("player_id", content.cast(pl.Binary), script).collect()
    crumbs = [(w["home"], paths.INDEX), crumb]
    for player, markup, sortable in made.sort("player_id").iter_rows():
        yield Page(
            paths.sim_player(paths.slug(player)),
            f"{w['player']} {player}",
            crumbs=crumbs,
            fingerprint=fingerprint_of[player],
            markup=markup,
            script=sortable,
        )
