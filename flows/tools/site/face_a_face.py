"""Pages of the Face-à-Face: the monthly ranking with the seed's columns (Rang, Points, ELO,
# Matches), all matches of the month (sortable by Joueur 1 / Joueur 2 and any column,
filterable by a player's name), each match (16 deals, match points, time-outs, forfeit: an
article of the page of its day) and each player (ELO over time, matches, months).

Templates: `face_a_face/month.html.j2`, `matches.html.j2`, `day.html.j2`, `player.html.j2`.
A match's row is made once by the row filler and put in its month's list and in its two
players' pages (`markup.take`); the articles of a day's matches, the largest pages of the
Face-à-Face, are rows too (`match_articles`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import polars as pl
from markupsafe import escape as html_escape

from flows.tools.chart import IN_WINDOW
from flows.tools.site import markup, paths
from flows.tools.site.fmt import MISSING, escape, mapped, minute, num, number, scaled, text
from flows.tools.site.labels import month_name
from flows.tools.site.markup import Keyed
from flows.tools.site.model import (
    NO_PREVIOUS,
    Previous,
    Reuse,
    fingerprints,
    rows_of,
    split_unchanged,
)
from flows.tools.site.render import TABLE_CLOSE, Page, page
from flows.tools.site.svg import NO_CHART, elo_curves
from flows.tools.site.tables import (
    Col,
    Rows,
    columns,
    grouped_rows,
    live_rank,
    rank_cell,
    row_items,
)

FOLDER = "face-a-face/x/"  # (any of its folders: they are siblings)
BOT = "BOT"
ELO_LINE = "#1f5fa8"


def player_link(column: str, folder: str = "") -> pl.Expr:
    """The link to a player's page (none for the bot): from a Face-à-Face page, or the site
    path when `folder` is ""."""
    way = paths.rel(folder, "face-a-face/joueurs/") if folder else "face-a-face/joueurs/"
    return (
        pl.when(pl.col(column) == BOT)
        .then(pl.lit(None, pl.String))
        .otherwise(pl.concat_str(pl.lit(way), paths.slug_expr(column), pl.lit(".html")))
    )


MATCH_LINK = pl.concat_str(  # the match's article in the page of its day (from a sibling)
    pl.lit("../matches/"),
    pl.col("day"),
    pl.lit(".html#"),
    pl.lit(paths.ff_match_anchor("")),
    paths.slug_expr("match_id"),
)


def parts(
    t: dict, w: dict, lang: str, timezone: str, previous: Previous = NO_PREVIOUS
) -> list[Callable[[], Iterator[Page | Reuse]]]:
    """The pages of the Face-à-Face in two parts that share nothing but the tables, to be made
    at the same time: the months and players (the same rows of matches); the days of matches."""
    ranking = t["ff_monthly_ranking"]
    matches = t["ff_matches"]
    if ranking is None or matches is None:
        return []
    months = months_of(ranking, matches)
    if not months:
        return []
    crumb = (w["face_a_face"], paths.ff_month(months[-1]))
    names = {m: month_name(m, lang) for m in months}
    when = pl.coalesce("started_at", "created_at")
    # the day of its page: local, like the times shown (a match with no time: its month)
    day = when.dt.convert_time_zone(timezone).dt.strftime("%Y-%m-%d")
    matches = matches.with_columns(
        when=when, day=day.fill_null(pl.col("month")).fill_null("undated")
    ).sort("when", "match_id")

    def months_and_players() -> Iterator[Page | Reuse]:
        rows = MatchRows(matches, w, lang, timezone)
        yield from month_pages(ranking, matches, months, rows, w, lang, previous, names)
        elo = t["ff_elo"]
        yield from player_pages(ranking, matches, elo, rows, w, lang, timezone, crumb, previous)

    def days() -> Iterator[Page | Reuse]:
        deals = t["ff_deal_results"]
        return match_pages(matches, deals, w, lang, timezone, crumb, previous, names)

    return [months_and_players, days]


def months_of(ranking: pl.DataFrame | None, matches: pl.DataFrame | None) -> list[str]:
    """Months with a ranking or a match (the navigation's latest month is the last)."""
    if ranking is None or matches is None:
        return []
    return sorted(set(ranking["month"].to_list()) | set(matches["month"].drop_nulls().to_list()))


def _elo_change(before: str, after: str) -> Keyed:
    """ "1600 → 1616" (– without a rating), shown once per pair of rounded ratings."""

    def show(b: pl.Expr, a: pl.Expr) -> pl.Expr:
        change = pl.concat_str(_int(b), pl.lit(" → "), _int(a).fill_null(MISSING))
        return pl.when(b.is_null()).then(pl.lit(MISSING)).otherwise(change)

    return Keyed.of(show, scaled(pl.col(before), 0), scaled(pl.col(after), 0))


def _int(value: pl.Expr) -> pl.Expr:
    sign = pl.when(value < 0).then(pl.lit("-")).otherwise(pl.lit(""))
    return pl.concat_str(sign, value.abs().cast(pl.String))


def _score() -> Keyed:
    """The match points, "9 – 7", shown once per pair."""
    return Keyed.of(
        lambda a, b: pl.concat_str(text(a), pl.lit(" – "), text(b)), pl.col("mp_a"), pl.col("mp_b")
    )


def match_cols(w: dict, lang: str, timezone: str) -> list[Col]:
    """The columns of a list of matches; Joueur 1 and Joueur 2 are columns 3 and 4."""
    forfeit = pl.concat_str(pl.lit(f" ({w['forfeit_by']} "), pl.col("forfeit_by"), pl.lit(")"))
    status = pl.concat_str(
        mapped(pl.col("status"), w["statuses"]),
        pl.when(pl.col("forfeit_by").is_not_null()).then(forfeit).otherwise(pl.lit("")),
    )
    counts = pl.col("counts_for_ranking").fill_null(False)
    return [
        Col(w["match"], pl.col("match_id"), href=MATCH_LINK, th=True),
        Col(w["date"], minute(pl.col("when"), timezone)),  # ISO: sorts as text
        Col(w["type"], mapped(pl.col("match_type"), w["match_types"])),
        Col(w["player_1"], pl.col("player_a"), href=player_link("player_a", FOLDER)),
        Col(w["player_2"], pl.col("player_b"), href=player_link("player_b", FOLDER)),
        Col(w["score"], _score(), num=True, sort=(pl.col("mp_a") - pl.col("mp_b")).cast(pl.String)),
        Col(w["outcome"], mapped(pl.col("outcome_a"), w["outcomes"])),
        Col(w["status"], status),
        Col(w["points_1"], number(pl.col("value_a"), 0, lang), num=True),
        Col(w["points_2"], number(pl.col("value_b"), 0, lang), num=True),
        Col(w["elo_1"], _elo_change("elo_a_before", "elo_a_after"), num=True),
        Col(w["elo_2"], _elo_change("elo_b_before", "elo_b_after"), num=True),
        Col(
            w["counts_for_ranking"],
            pl.when(counts).then(pl.lit(w["yes"])).otherwise(pl.lit(w["no"])),
        ),
    ]


class MatchRows:
    """The row of every match in a list of matches, made once (the month's list and the
    players' pages show the same rows)."""

    def __init__(self, matches: pl.DataFrame, w: dict, lang: str, timezone: str):
        self.cols = match_cols(w, lang, timezone)
        self.matches = matches
        self._joined: markup.Joined | None = None

    @property
    def joined(self) -> markup.Joined:  # made when a page needs it (not when all are reused)
        if self._joined is None:
            self._joined = markup.rows(self.matches, row_items(self.cols, ""))
        return self._joined

    def grouped(self, order: np.ndarray, frame: pl.DataFrame, keys: list[str]) -> Rows:
        """Rows `order` of the matches (in that order), grouped by `keys` of `frame` (a row
        per row of `order`)."""
        joined = markup.take(self.joined, order)
        return Rows(joined, markup.groups(frame, keys, joined))


def month_pages(
    ranking,
    matches,
    months,
    rows: MatchRows,
    w,
    lang,
    previous: Previous = NO_PREVIOUS,
    names: dict | None = None,
) -> Iterator[Page | Reuse]:
    """The ranking and the list of all matches of each month; a month whose rows (ranking,
    matches) did not change keeps both pages (a past month, most nights)."""
    dated = matches.filter(pl.col("month").is_not_null())
    fps = dict(fingerprints("month", ranking, dated).iter_rows())
    todo = []
    for month in months:
        both = (paths.ff_month(month), paths.ff_month_matches(month))
        if all(previous.unchanged(p, fps[month]) for p in both):
            yield from (Reuse(p, fps[month]) for p in both)
        else:
            todo.append(month)
    if not todo:
        return
    kept = pl.col("month").is_in(pl.Series(todo, dtype=pl.String).implode())
    ranking = ranking.filter(kept).sort("month", "rank", "player_id")
    cols = ranking_cols(w, lang)
    anchor = paths.player_row_anchor_expr()
    by_month = grouped_rows(ranking, ["month"], row_items(cols, "", row_id=anchor)).blocks()
    listed = matches.with_row_index("_m").filter(kept).sort("month", "_m")
    match_list = rows.grouped(listed["_m"].to_numpy(), listed, ["month"]).blocks()
    players = dict(ranking.group_by("month").len().iter_rows())
    played = dict(listed.group_by("month").len().iter_rows())
    home = [(w["home"], paths.INDEX)]
    for month in todo:
        name = (names or {}).get(month, month)
        yield page(
            paths.ff_month(month),
            "face_a_face/month.html.j2",
            fps[month],
            title=f"{w['face_a_face']} — {name}",
            crumbs=home,
            name=name,
            players=players.get(month, 0),
            matches=played.get(month, 0),
            cols=columns(cols),
            ranking=by_month.get(month, ""),
        )
        yield page(
            paths.ff_month_matches(month),
            "face_a_face/matches.html.j2",
            fps[month],
            title=f"{w['all_matches']} — {name}",
            crumbs=home + [(f"{w['face_a_face']} {name}", paths.ff_month(month))],
            cols=columns(rows.cols),
            matches=match_list.get(month, ""),
        )


def ranking_cols(w: dict, lang: str) -> list[Col]:
    """The columns of a month's ranking (the seed's: Rang, Points, ELO, # Matches)."""
    return [
        Col(w["rank"], text(pl.col("rank")), num=True),
        Col(w["player"], pl.col("player_id"), href=player_link("player_id", FOLDER), th=True),
        Col(w["points"], number(pl.col("points"), 2, lang), num=True),
        Col(w["elo"], number(pl.col("elo"), 0, lang), num=True),
        Col(w["n_matches"], text(pl.col("matches")), num=True),
        Col(w["attaque_counted"], text(pl.col("attaque_counted")), num=True),
        Col(w["classique_counted"], text(pl.col("classique_counted")), num=True),
    ]


def deal_cols(w: dict) -> list[Col]:
    """The columns of a match's deals (a deal played out of time: "hors temps")."""
    roles, timeout = w["roles"], w["timeout"]
    ua, ub = pl.col("unfinished_a").fill_null(False), pl.col("unfinished_b").fill_null(False)
    return [
        Col(w["deal"], text(pl.col("deal_no")), num=True, th=True),
        Col(w["role_1"], mapped(pl.col("role_a"), roles)),
        Col(w["role_2"], mapped(pl.col("role_b"), roles)),
        Col(
            w["diff_1"],
            pl.when(ua).then(pl.lit(timeout)).otherwise(text(pl.col("d_a"))),
            num=True,
            cls=pl.when(ua).then(pl.lit("timeout")),
        ),
        Col(
            w["diff_2"],
            pl.when(ub).then(pl.lit(timeout)).otherwise(text(pl.col("d_b"))),
            num=True,
            cls=pl.when(ub).then(pl.lit("timeout")),
        ),
        Col(w["mp_1"], text(pl.col("mp_a")), num=True),
        Col(w["mp_2"], text(pl.col("mp_b")), num=True),
    ]


def _fact(label: str, value: pl.Expr | Keyed, optional: bool = False) -> list:
    """A fact of a match's article (row format); an `optional` one only when there is one."""
    opening = f"<div><dt>{html_escape(label)}<dd>"
    if optional:
        shown = pl.concat_str(pl.lit(opening), escape(value), pl.lit("</div>"))
        return [pl.when(value.is_not_null()).then(shown).otherwise(pl.lit(""))]
    shown = value if isinstance(value, Keyed) else escape(value).fill_null(MISSING)
    return [opening, shown, "</div>"]


def _linked(column: str) -> pl.Expr:
    link = player_link(column, FOLDER)
    shown = escape(pl.col(column))
    linked = pl.concat_str(pl.lit('<a href="'), escape(link), pl.lit('">'), shown, pl.lit("</a>"))
    return pl.when(link.is_null()).then(shown).otherwise(linked)


def article_head(w: dict, lang: str, timezone: str) -> list:
    """The row format of a match's article up to its deals' rows: its heading, its facts (date,
    players, match points, outcome, forfeit, ELO, points, ranking, time-outs) and the head of
    the table of its deals."""
    counts = pl.col("counts_for_ranking").fill_null(False)
    ranked = (
        pl.when(counts)
        .then(pl.lit(w["played_for_ranking"]))
        .otherwise(pl.lit(w["not_for_ranking"]))
    )
    timeouts = pl.concat_str(
        pl.col("_to_a").cast(pl.String), pl.lit(" – "), pl.col("_to_b").cast(pl.String)
    )
    title = escape(pl.concat_str(pl.lit(f"{w['match']} "), pl.col("match_id")))
    cols = deal_cols(w)
    head = (
        f'">\n<table class="{table_classes(cols)}">\n<caption>{html_escape(w["deals"])}'
        f"</caption>\n{thead(cols)}\n<tbody>"
    )
    return [
        '\n<article class="match" id="',
        pl.lit(paths.ff_match_anchor("")),
        paths.slug_expr("match_id"),
        '">\n<h2>',
        title,
        "</h2>\n" + '<dl class="facts">',
        *_fact(w["date"], minute(pl.col("when"), timezone)),
        *_fact(w["type"], mapped(pl.col("match_type"), w["match_types"])),
        f"<div><dt>{html_escape(w['player_1'])}<dd>",
        _linked("player_a"),
        "</div>",
        f"<div><dt>{html_escape(w['player_2'])}<dd>",
        _linked("player_b"),
        "</div>",
        *_fact(w["match_points"], _score()),
        *_fact(w["outcome_1"], mapped(pl.col("outcome_a"), w["outcomes"])),
        *_fact(w["forfeit"], pl.col("forfeit_by"), optional=True),
        *_fact(w["status"], mapped(pl.col("status"), w["statuses"])),
        *_fact(w["elo_1"], _elo_change("elo_a_before", "elo_a_after")),
        *_fact(w["elo_2"], _elo_change("elo_b_before", "elo_b_after")),
        *_fact(w["points_1"], number(pl.col("value_a"), 0, lang)),
        *_fact(w["points_2"], number(pl.col("value_b"), 0, lang)),
        *_fact(w["ranked"], ranked),
        *_fact(w["timeouts"], timeouts, optional=True),
        "</dl>",
        '\n<div class="scroll" role="region" tabindex="0" aria-label="',
        title,
        f" — {html_escape(w['deals'])}",
        head,
    ]


def table_classes(cols: list[Col]) -> str:
    """The class of a table that is not sortable (`table_open`'s, for the articles)."""
    return " ".join(["data"] + [f"l{i}" for i, c in enumerate(cols, 1) if not c.num])


def thead(cols: list[Col]) -> str:
    return (
        "<thead><tr>"
        + "".join(f"<th scope=col>{html_escape(c.label)}" for c in cols)
        + ("</thead>")
    )


def match_articles(
    matches: pl.DataFrame, deal_rows: markup.Joined, per_match: np.ndarray, head: list
) -> markup.Joined:
    """Each match's article: its head (`head`, the row format of `article_head`), its deals'
    rows (`per_match[i]` rows of `deal_rows` for match `i`), the end of its table."""
    pool = markup.Pool()
    head_base = pool.add(markup.series(markup.rows(matches, head)))
    deal_base = pool.add(markup.series(deal_rows)) if len(deal_rows.ends) else pool.size
    tail = pool.add(pl.Series([TABLE_CLOSE + "\n</article>"]))
    counts = per_match + 2
    index = np.empty(int(counts.sum()), np.int64)
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    index[first] = head_base + np.arange(matches.height)
    index[first + counts - 1] = tail
    inside = np.ones(len(index), bool)
    inside[first] = False
    inside[first + counts - 1] = False
    index[inside] = deal_base + np.arange(int(per_match.sum()))
    return markup.join(pool, index, per_row=counts)


def _deal_rows(deal_results, matches, indexed, cols):
    """The rows of the deals of `matches` (each match's deals in order), the deals of each
    match, and the matches with their time-outs (`_to_a`, `_to_b`)."""
    renumber = np.full(indexed.height, -1, np.int64)  # place among the matches made
    renumber[matches["_all"].to_numpy()] = np.arange(matches.height)
    place = renumber[deal_results["_all"].to_numpy()]
    width = int(deal_results["deal_no"].max() or 0) + 1
    order = pl.Series(place * width + deal_results["deal_no"].to_numpy()).arg_sort()
    deal_results = deal_results.with_columns(_m=pl.Series(place))[order]
    timeouts = deal_results.group_by("_m").agg(
        pl.col("unfinished_a").sum().alias("_to_a"), pl.col("unfinished_b").sum().alias("_to_b")
    )
    matches = matches.join(timeouts, on="_m", how="left", maintain_order="left")
    deal_rows = markup.rows(deal_results, row_items(cols, ""))
    per_match = np.bincount(deal_results["_m"].to_numpy(), minlength=matches.height)
    return deal_rows, per_match, matches


def match_pages(
    matches, deal_results, w, lang, timezone, crumb, previous, names: dict | None = None
) -> Iterator[Page | Reuse]:
    """A page per day of matches (the platform's time zone), each match an article `#m-<id>`.
    A day whose rows did not change since the previous site keeps its page (every day but the
    last, most nights)."""
    has_deals = deal_results is not None and not deal_results.is_empty()
    if has_deals:  # each deal with its match's place in time order (its page: that day's)
        at = markup.positions(deal_results["match_id"], matches["match_id"])
        deal_results = deal_results.with_columns(_all=pl.Series(at)).filter(pl.col("_all") >= 0)
        deal_results = deal_results.with_columns(day=matches["day"].gather(deal_results["_all"]))
    fps = fingerprints("day", matches, *([deal_results.drop("_all")] if has_deals else []))
    reuse, todo = split_unchanged(fps, "day", paths.ff_match_day, previous)
    yield from reuse
    if todo.is_empty():
        return
    indexed = matches.with_row_index("_all")
    matches = rows_of(indexed, "day", todo, reuse).with_row_index("_m")  # in time order
    if has_deals:
        deal_results = rows_of(deal_results, "day", todo, reuse)
        deal_rows, per_match, matches = _deal_rows(deal_results, matches, indexed, deal_cols(w))
    else:
        matches = matches.with_columns(_to_a=pl.lit(None, pl.UInt32), _to_b=pl.lit(None, pl.UInt32))
        deal_rows, per_match = markup.EMPTY, np.zeros(matches.height, np.int64)
    articles = match_articles(matches, deal_rows, per_match, article_head(w, lang, timezone))
    by_day = Rows(articles, markup.groups(matches, ["day"], articles)).blocks()
    month_of = dict(matches.group_by("day").agg(pl.col("month").min()).iter_rows())
    for day, fingerprint in todo.sort("day").iter_rows():
        month = month_of.get(day)
        crumbs = [
            (w["home"], paths.INDEX),
            crumb,
            ((names or {}).get(month, month), paths.ff_month_matches(month)),
        ]
        title = f"{w['matches_of_day']} {day}"
        articles = by_day.get(day, "")
        path = paths.ff_match_day(day)
        yield page(
            path,
            "face_a_face/day.html.j2",
            fingerprint,
            title=title,
            crumbs=crumbs,
            articles=articles,
        )


def player_month_cols(w: dict, lang: str, latest: str | None) -> list[Col]:
    """A player's months; # Matches links to the month's list of matches, filtered on the
    player ("all matches played by Ben")."""
    month_page = pl.concat_str(pl.lit("../"), pl.col("month"), pl.lit("/index.html"))
    filtered = (
        pl.when(paths.slug_expr("player_id") == pl.col("player_id"))
        .then(pl.concat_str(pl.lit("?player="), pl.col("player_id")))
        .otherwise(pl.lit(""))
    )
    matches = pl.concat_str(pl.lit("../"), pl.col("month"), pl.lit("/matches.html"), filtered)
    return [
        Col(w["month"], pl.col("month"), href=month_page, th=True),
        rank_cell(w, "rank", latest, month_page),
        Col(w["points"], number(pl.col("points"), 2, lang), num=True),
        Col(w["elo"], number(pl.col("elo"), 0, lang), num=True),
        Col(w["n_matches"], text(pl.col("matches")), num=True, href=matches),
    ]


def _sides(matches: pl.DataFrame) -> pl.DataFrame:
    """Each match twice, once for each of its players (`player_id`; not the bot), with its
    place among the matches (`_m`)."""
    indexed = matches.with_row_index("_m")
    sides = [indexed.with_columns(player_id=pl.col(side)) for side in ("player_a", "player_b")]
    return pl.concat(sides).filter(pl.col("player_id") != BOT)


def _elo_parts(elo: pl.DataFrame, w: dict, lang: str, timezone: str) -> tuple[dict, dict]:
    """{player_id: the last ELO, shown}, {player_id: the player's ELO chart}."""
    last = pl.col("elo_after").sort_by("ended_at", "elo_seq").last().alias("_elo")
    shown = elo.group_by("player_id").agg(last).select("player_id", num(pl.col("_elo"), 0, lang))
    return dict(shown.iter_rows()), elo_curves(elo, w, lang, timezone).by_player()


def player_pages(
    ranking, matches, elo, rows: MatchRows, w, lang, timezone, crumb, previous
) -> Iterator[Page | Reuse]:
    """A page per player; one whose rows (matches, months, ELO) did not change keeps its page."""
    sides = _sides(matches)
    has_elo = elo is not None and not elo.is_empty()
    latest = ranking["month"].max()
    ranking = live_rank(ranking, "rank", latest)  # shown, and fingerprinted, without it
    players = pl.concat([sides["player_id"], ranking["player_id"]]).unique()
    fps = fingerprints("player_id", sides.drop("_m"), ranking, *([elo] if has_elo else []))
    fps = fps.filter(pl.col("player_id").is_in(players.implode()))
    reuse, todo = split_unchanged(
        fps, "player_id", lambda player: paths.ff_player(paths.slug(player)), previous
    )
    yield from reuse
    if todo.is_empty():
        return
    sides = rows_of(sides, "player_id", todo, reuse).sort(
        "player_id", "when", "match_id", descending=[False, True, True]
    )
    ranking = rows_of(ranking, "player_id", todo, reuse).sort("player_id", "month")
    month_cols = player_month_cols(w, lang, latest)
    months = grouped_rows(ranking, ["player_id"], row_items(month_cols, "")).blocks()
    played = rows.grouped(sides["_m"].to_numpy(), sides, ["player_id"]).blocks()
    n_matches = dict(sides.group_by("player_id").len().iter_rows())
    last_elo, charts = {}, {}
    if has_elo:
        last_elo, charts = _elo_parts(rows_of(elo, "player_id", todo, reuse), w, lang, timezone)
    shared = {
        "crumbs": [(w["home"], paths.INDEX), crumb],
        "line_colour": ELO_LINE,
        "legend_items": ((IN_WINDOW, w["elo_after"], "dot"),),
        "month_cols": columns(month_cols),
        "match_cols": columns(rows.cols),
    }
    for player, fingerprint in todo.select("player_id", "fingerprint").sort("player_id").rows():
        facts = [
            (w["elo"], last_elo.get(player, MISSING)),
            (w["matches"], str(n_matches.get(player, 0))),
        ]
        yield page(
            paths.ff_player(paths.slug(player)),
            "face_a_face/player.html.j2",
            fingerprint,
            title=f"{w['player']} {player}",
            facts=facts,
            months=months.get(player),
            played=played.get(player),
            **charts.get(player, NO_CHART),
            **shared,
        )
