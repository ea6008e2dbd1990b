"""Pages of the Face-à-Face: the monthly ranking with the seed's columns (Rang, Points, ELO,
# Matches), all matches of the month (sortable by Joueur 1 / Joueur 2 and any column,
filterable by a player's name), each match (16 deals, match points, time-outs, forfeit: a
section of the page of its day) and each player (ELO over time, matches, months).

Every kind of page is put together on whole columns (`pages.Pages`); a match's row is made
once and put in its month's list and in its two players' pages (`markup.take`).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import polars as pl

from flows.tools.site import html, markup, paths
from flows.tools.site.fmt import MISSING, escape, mapped, minute, number, scaled, text
from flows.tools.site.html import SECTION_CLOSE, section_open, thead
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
from flows.tools.site.pages import Pages, PageSet
from flows.tools.site.svg import CHART_CLOSE, elo_curves
from flows.tools.site.tables import (
    Col,
    Rows,
    grouped_rows,
    live_rank,
    rank_cell,
    row_items,
    table_around,
)

ROOT = "../../"  # face-a-face/<month or kind>/<page>.html
FOLDER = "face-a-face/x/"  # (any of its folders: they are siblings)
BOT = "BOT"


def player_link(column: str, folder: str = "") -> pl.Expr:
    """The link to a player's page (none for the bot): from a Face-à-Face page, or the site
    path when `folder` is ""."""
    way = paths.rel(folder, "face-a-face/joueurs/") if folder else "face-a-face/joueurs/"
    return (
        pl.when(pl.col(column) == BOT)
        .then(pl.lit(None, pl.String))
        .otherwise(pl.concat_str(pl.lit(way), paths.slug_expr(column), pl.lit(".html")))
    )


MATCH_LINK = pl.concat_str(  # the match's section in the page of its day (from a sibling)
    pl.lit("../matches/"),
    pl.col("day"),
    pl.lit(".html#"),
    pl.lit(paths.ff_match_anchor("")),
    paths.slug_expr("match_id"),
)


def pages(t: dict, w: dict, lang: str, timezone: str, previous: Previous = NO_PREVIOUS,
          shell: html.Shell | None = None) -> Iterator[PageSet | Reuse]:  # fmt: skip
    ranking = t["ff_monthly_ranking"]
    matches = t["ff_matches"]
    if ranking is None or matches is None:
        return
    months = months_of(ranking, matches)
    if not months:
        return
    shell = shell or html.Shell.of(lang, w)
    crumb = (w["face_a_face"], paths.ff_month(months[-1]))
    names = {m: month_name(m, lang) for m in months}
    when = pl.coalesce("started_at", "created_at")
    matches = matches.with_columns(
        when=when,
        # the day of its page: local, like the times shown (a match with no time: its month)
        day=when.dt.convert_time_zone(timezone)
        .dt.strftime("%Y-%m-%d")
        .fill_null(pl.col("month"))
        .fill_null("undated"),
    ).sort("when", "match_id")
    rows = MatchRows(matches, w, lang, timezone)
    yield from month_pages(ranking, matches, months, rows, w, lang, previous, shell, names)
    yield from match_pages(matches, t["ff_deal_results"], w, lang, timezone, crumb, previous,
                           shell, names)  # fmt: skip
    yield from player_pages(ranking, matches, t["ff_elo"], rows, w, lang, timezone, crumb,
                            previous, shell)  # fmt: skip


def months_of(ranking: pl.DataFrame | None, matches: pl.DataFrame | None) -> list[str]:
    """Months with a ranking or a match (the navigation's latest month is the last)."""
    if ranking is None or matches is None:
        return []
    return sorted(set(ranking["month"].to_list()) | set(matches["month"].drop_nulls().to_list()))


def _elo_change(before: str, after: str, lang: str) -> Keyed:
    """ "1600 → 1616" (– without a rating), shown once per distinct pair of rounded ratings."""
    return Keyed.of(
        lambda b, a: pl.when(b.is_null()).then(pl.lit(MISSING)).otherwise(
            pl.concat_str(_int(b), pl.lit(" → "), _int(a).fill_null(MISSING))),
        scaled(pl.col(before), 0), scaled(pl.col(after), 0),
    )  # fmt: skip


def _int(value: pl.Expr) -> pl.Expr:
    return pl.concat_str(pl.when(value < 0).then(pl.lit("-")).otherwise(pl.lit("")),
                         value.abs().cast(pl.String))  # fmt: skip


def _score(a: str, b: str) -> list:
    return [text(pl.col(a)), " – ", text(pl.col(b))]


def match_cols(w: dict, lang: str, timezone: str) -> list[Col]:
    """The columns of a list of matches; Joueur 1 and Joueur 2 are columns 3 and 4."""
    return [
        Col(w["match"], pl.col("match_id"), href=MATCH_LINK, th=True),
        Col(w["date"], minute(pl.col("when"), timezone)),  # ISO: sorts as text
        Col(w["type"], mapped(pl.col("match_type"), w["match_types"])),
        Col(w["player_1"], pl.col("player_a"), href=player_link("player_a", FOLDER)),
        Col(w["player_2"], pl.col("player_b"), href=player_link("player_b", FOLDER)),
        Col(w["score"], Keyed.of(lambda a, b: pl.concat_str(
            text(a), pl.lit(" – "), text(b)), pl.col("mp_a"), pl.col("mp_b")),
            num=True, sort=(pl.col("mp_a") - pl.col("mp_b")).cast(pl.String)),
        Col(w["outcome"], mapped(pl.col("outcome_a"), w["outcomes"])),
        Col(w["status"], pl.concat_str(
            mapped(pl.col("status"), w["statuses"]),
            pl.when(pl.col("forfeit_by").is_not_null())
            .then(pl.concat_str(pl.lit(f" ({w['forfeit_by']} "), pl.col("forfeit_by"), pl.lit(")")))
            .otherwise(pl.lit("")))),
        Col(w["points_1"], number(pl.col("value_a"), 0, lang), num=True),
        Col(w["points_2"], number(pl.col("value_b"), 0, lang), num=True),
        Col(w["elo_1"], _elo_change("elo_a_before", "elo_a_after", lang), num=True),
        Col(w["elo_2"], _elo_change("elo_b_before", "elo_b_after", lang), num=True),
        Col(w["counts_for_ranking"], pl.when(pl.col("counts_for_ranking").fill_null(False))
            .then(pl.lit(w["yes"])).otherwise(pl.lit(w["no"]))),
    ]  # fmt: skip


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


def month_pages(ranking, matches, months, rows: MatchRows, w, lang,
                previous: Previous = NO_PREVIOUS, shell: html.Shell | None = None,
                names: dict | None = None) -> Iterator[PageSet | Reuse]:  # fmt: skip
    """The ranking and the list of all matches of each month; a month whose rows (ranking,
    matches) did not change keeps both pages (a past month, most nights)."""
    fps = dict(fingerprints("month", ranking, matches.filter(pl.col("month").is_not_null()))
               .iter_rows())  # fmt: skip
    todo = []
    for month in months:
        both = (paths.ff_month(month), paths.ff_month_matches(month))
        if all(previous.unchanged(page, fps[month]) for page in both):
            yield from (Reuse(page, fps[month]) for page in both)
        else:
            todo.append(month)
    if not todo:
        return
    ranking = ranking.filter(pl.col("month").is_in(pl.Series(todo, dtype=pl.String).implode()))
    cols = [
        Col(w["rank"], text(pl.col("rank")), num=True),
        Col(w["player"], pl.col("player_id"), href=player_link("player_id", FOLDER), th=True),
        Col(w["points"], number(pl.col("points"), 2, lang), num=True),
        Col(w["elo"], number(pl.col("elo"), 0, lang), num=True),
        Col(w["n_matches"], text(pl.col("matches")), num=True),
        Col(w["attaque_counted"], text(pl.col("attaque_counted")), num=True),
        Col(w["classique_counted"], text(pl.col("classique_counted")), num=True),
    ]
    by_month = grouped_rows(
        ranking.sort("month", "rank", "player_id"),
        ["month"],
        row_items(cols, "", row_id=paths.player_row_anchor_expr()),
    )
    listed = matches.with_row_index("_m").filter(pl.col("month").is_in(
        pl.Series(todo, dtype=pl.String).implode())).sort("month", "_m")  # fmt: skip
    match_list = rows.grouped(listed["_m"].to_numpy(), listed, ["month"])
    frame = (
        pl.DataFrame({"month": todo})
        .with_columns(
            _name=pl.col("month").replace_strict(names or {}, default=pl.col("month")),
            fingerprint=pl.col("month").replace_strict(fps, default=None),
        )
        .join(
            ranking.group_by("month").len("_players"), on="month", how="left", maintain_order="left"
        )
        .join(
            listed.group_by("month").len("_matches"), on="month", how="left", maintain_order="left"
        )
    )
    name = pl.col("_name")
    home = [(w["home"], paths.INDEX)]
    rank_page = Pages(frame.with_columns(path=pl.concat_str(
        pl.lit("face-a-face/"), pl.col("month"), pl.lit("/index.html"))))  # fmt: skip
    rank_page.add(*shell.head(ROOT, True, pl.concat_str(pl.lit(f"{w['face_a_face']} — "), name),
                              home))  # fmt: skip
    rank_page.add(
        "\n<section>\n" + html.FACTS_OPEN + f"<div><dt>{html.escape(w['month'])}<dd>", name,
        f"</div><div><dt>{html.escape(w['players'])}<dd>",
        pl.col("_players").fill_null(0).cast(pl.String),
        f'</div><div><dt>{html.escape(w["matches"])}<dd><a href="matches.html">',
        pl.col("_matches").fill_null(0).cast(pl.String),
        "</a></div>" + html.FACTS_CLOSE + SECTION_CLOSE + "\n",
    )  # fmt: skip
    before, after = table_around("\x00", cols, 0)
    caption = escape(pl.concat_str(pl.lit(f"{w['ff_ranking']} — "), name))
    first, second, third = before.split("\x00")
    rank_page.add(section_open(w["ff_ranking"]), f'<p class="note">{html.escape(w["sort_hint"])}'
                  "</p>\n", first, caption, second, caption, third)  # fmt: skip
    rank_page.rows(by_month, "month")
    rank_page.add(after + SECTION_CLOSE + "\n" + section_open() + '<ul class="links"><li>'
                  f'<a href="matches.html">{html.escape(w["all_matches"])}</a></ul>'
                  + SECTION_CLOSE, shell.tail(ROOT, True))  # fmt: skip
    yield rank_page.done()

    list_page = Pages(frame.with_columns(path=pl.concat_str(
        pl.lit("face-a-face/"), pl.col("month"), pl.lit("/matches.html"))))  # fmt: skip
    list_page.add(*shell.head(
        ROOT, True, pl.concat_str(pl.lit(f"{w['all_matches']} — "), name),
        home + [(pl.concat_str(pl.lit(w["face_a_face"] + " "), name),
                 pl.concat_str(pl.lit("face-a-face/"), pl.col("month"), pl.lit("/index.html")))],
    ))  # fmt: skip
    before, after = table_around("\x00", rows.cols, None, table_id="matches")
    caption = escape(pl.concat_str(pl.lit(f"{w['all_matches']} — "), name))
    first, second, third = before.split("\x00")
    search = {"id": "joueur", "label": w["filter_player"], "hint": w["filter_hint"],
              "columns": "3,4", "shown": w["shown"]}  # fmt: skip
    list_page.add(
        "\n" + section_open() + html.filter_form(search, "matches")
        + f'\n<p class="note">{html.escape(w["sort_hint"])}</p>\n' + first,
        caption, second, caption, third,
    )  # fmt: skip
    list_page.rows(match_list, "month")
    list_page.add(after + SECTION_CLOSE, shell.tail(ROOT, True))
    yield list_page.done()


def match_pages(
    matches,
    deal_results,
    w,
    lang,
    timezone,
    crumb,
    previous,
    shell: html.Shell | None = None,
    names: dict | None = None,
) -> Iterator:
    """A page per day of matches (the platform's time zone), each match a section `#m-<id>`
    (its facts: date, players, match points, outcome, forfeit, ELO, time-outs; its 16 deals).
    A day whose rows did not change since the previous site keeps its page (every day but the
    last, most nights). Every match's section is put together on whole columns."""
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
    roles = w["roles"]
    ua, ub = pl.col("unfinished_a").fill_null(False), pl.col("unfinished_b").fill_null(False)
    timeout = w["timeout"]
    cols = [
        Col(w["deal"], text(pl.col("deal_no")), num=True, th=True),
        Col(w["role_1"], mapped(pl.col("role_a"), roles)),
        Col(w["role_2"], mapped(pl.col("role_b"), roles)),
        Col(w["diff_1"], pl.when(ua).then(pl.lit(timeout)).otherwise(text(pl.col("d_a"))),
            num=True, cls=pl.when(ua).then(pl.lit("timeout"))),
        Col(w["diff_2"], pl.when(ub).then(pl.lit(timeout)).otherwise(text(pl.col("d_b"))),
            num=True, cls=pl.when(ub).then(pl.lit("timeout"))),
        Col(w["mp_1"], text(pl.col("mp_a")), num=True),
        Col(w["mp_2"], text(pl.col("mp_b")), num=True),
    ]  # fmt: skip
    if has_deals:
        deal_results = rows_of(deal_results, "day", todo, reuse)
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
    else:
        matches = matches.with_columns(_to_a=pl.lit(None, pl.UInt32), _to_b=pl.lit(None, pl.UInt32))
        deal_rows = markup.EMPTY
        per_match = np.zeros(matches.height, np.int64)
    ranked = pl.when(pl.col("counts_for_ranking").fill_null(False)).then(
        pl.lit(w["played_for_ranking"])).otherwise(pl.lit(w["not_for_ranking"]))  # fmt: skip

    def fact(label: str, value, optional: pl.Expr | None = None) -> list:
        opening = f"<div><dt>{html.escape(label)}<dd>"
        if optional is not None:  # only when there is one
            return [
                pl.when(optional.is_not_null())
                .then(pl.concat_str(pl.lit(opening), escape(optional), pl.lit("</div>")))
                .otherwise(pl.lit(""))
            ]
        shown = value if isinstance(value, Keyed) else escape(value).fill_null(MISSING)
        return [opening, shown, "</div>"]

    def linked(column: str) -> pl.Expr:
        link = player_link(column, FOLDER)
        return pl.when(link.is_null()).then(escape(pl.col(column))).otherwise(pl.concat_str(
            pl.lit('<a href="'), escape(link), pl.lit('">'), escape(pl.col(column)),
            pl.lit("</a>")))  # fmt: skip

    head = thead(tuple((c.label, c.num) for c in cols), None)
    region = '\n<div class="scroll" role="region" tabindex="0" aria-label="'
    score = Keyed.of(lambda a, b: pl.concat_str(text(a), pl.lit(" – "), text(b)),
                     pl.col("mp_a"), pl.col("mp_b"))  # fmt: skip
    region_name = [
        escape(pl.concat_str(pl.lit(f"{w['match']} "), pl.col("match_id"))),
        f" — {html.escape(w['deals'])}",
    ]  # (the caption: the deals)
    classes = html.table_classes(tuple((c.label, c.num) for c in cols), False, None)
    article = [
        '\n<article class="match" id="', pl.lit(paths.ff_match_anchor("")),
        paths.slug_expr("match_id"), '">\n<h2>',
        escape(pl.concat_str(pl.lit(f"{w['match']} "), pl.col("match_id"))),
        "</h2>\n" + html.FACTS_OPEN,
        *fact(w["date"], minute(pl.col("when"), timezone)),
        *fact(w["type"], mapped(pl.col("match_type"), w["match_types"])),
        f"<div><dt>{html.escape(w['player_1'])}<dd>", linked("player_a"), "</div>",
        f"<div><dt>{html.escape(w['player_2'])}<dd>", linked("player_b"), "</div>",
        *fact(w["match_points"], score),
        *fact(w["outcome_1"], mapped(pl.col("outcome_a"), w["outcomes"])),
        *fact(w["forfeit"], None, pl.col("forfeit_by")),
        *fact(w["status"], mapped(pl.col("status"), w["statuses"])),
        *fact(w["elo_1"], _elo_change("elo_a_before", "elo_a_after", lang)),
        *fact(w["elo_2"], _elo_change("elo_b_before", "elo_b_after", lang)),
        *fact(w["points_1"], number(pl.col("value_a"), 0, lang)),
        *fact(w["points_2"], number(pl.col("value_b"), 0, lang)),
        *fact(w["ranked"], ranked),
        *fact(w["timeouts"], None, pl.concat_str(pl.col("_to_a").cast(pl.String), pl.lit(" – "),
                                                 pl.col("_to_b").cast(pl.String))),
        html.FACTS_CLOSE,
        region, *region_name, f'">\n<table class="{classes}">\n<caption>'
        f"{html.escape(w['deals'])}</caption>\n{head}\n<tbody>",
    ]  # fmt: skip
    heads = markup.rows(matches, article)
    tail = html.TABLE_CLOSE + "\n</article>"
    # each match: its head, its deals' rows, the end of its table and section
    pool = markup.Pool()
    head_base = pool.add(markup.series(heads))
    deal_base = pool.add(markup.series(deal_rows)) if len(deal_rows.ends) else pool.size
    tail_code = pool.add(pl.Series([tail]))
    n = matches.height
    counts = per_match + 2
    index = np.empty(int(counts.sum()), np.int64)
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    index[first] = head_base + np.arange(n)
    index[first + counts - 1] = tail_code
    inside = np.ones(len(index), bool)
    inside[first] = False
    inside[first + counts - 1] = False
    index[inside] = deal_base + np.arange(int(per_match.sum()))
    articles = markup.join(pool, index, per_row=counts)
    by_day = Rows(articles, markup.groups(matches, ["day"], articles))
    frame = todo.sort("day").join(matches.group_by("day").agg(pl.col("month").min()), on="day",
                                  how="left", maintain_order="left").with_columns(
        path=pl.concat_str(pl.lit("face-a-face/matches/"), pl.col("day"), pl.lit(".html")),
        _name=pl.col("month").replace_strict(names or {}, default=pl.col("month")),
        _list=pl.concat_str(pl.lit("face-a-face/"), pl.col("month"), pl.lit("/matches.html")),
    )  # fmt: skip
    page = Pages(frame)
    page.add(
        *shell.head(
            ROOT,
            False,
            pl.concat_str(pl.lit(f"{w['matches_of_day']} "), pl.col("day")),
            [(w["home"], paths.INDEX), crumb, (pl.col("_name"), pl.col("_list"))],
        )
    )
    page.rows(by_day, "day", "<section>", "\n</section>")
    page.add(shell.tail(ROOT, False))
    yield page.done()


def player_pages(ranking, matches, elo, rows: MatchRows, w, lang, timezone, crumb, previous,
                 shell: html.Shell | None = None) -> Iterator:  # fmt: skip
    """A page per player; one whose rows (matches, months, ELO) did not change keeps its page."""
    indexed = matches.with_row_index("_m")
    sides = pl.concat([
        indexed.with_columns(player_id=pl.col("player_a")),
        indexed.with_columns(player_id=pl.col("player_b")),
    ]).filter(pl.col("player_id") != BOT)  # fmt: skip
    has_elo = elo is not None and not elo.is_empty()
    latest = ranking["month"].max()
    ranking = live_rank(ranking, "rank", latest)  # shown, and fingerprinted, without it
    players = pl.concat([sides["player_id"], ranking["player_id"]]).unique()
    fps = fingerprints("player_id", sides.drop("_m"), ranking, *([elo] if has_elo else [])).filter(
        pl.col("player_id").is_in(players.implode())
    )
    reuse, todo = split_unchanged(
        fps, "player_id", lambda player: paths.ff_player(paths.slug(player)), previous
    )
    yield from reuse
    if todo.is_empty():
        return
    sides = rows_of(sides, "player_id", todo, reuse).sort(
        "player_id", "when", "match_id", descending=[False, True, True]
    )
    ranking = rows_of(ranking, "player_id", todo, reuse)
    elo = rows_of(elo, "player_id", todo, reuse) if has_elo else None
    month_cols = [
        Col(w["month"], pl.col("month"), href=pl.concat_str(
            pl.lit("../"), pl.col("month"), pl.lit("/index.html")), th=True),
        rank_cell(w, "rank", latest, pl.concat_str(pl.lit("../"), pl.col("month"),
                                                   pl.lit("/index.html"))),
        Col(w["points"], number(pl.col("points"), 2, lang), num=True),
        Col(w["elo"], number(pl.col("elo"), 0, lang), num=True),
        # the month's list of matches, filtered on the player ("all matches played by Ben")
        Col(w["n_matches"], text(pl.col("matches")), num=True, href=pl.concat_str(
            pl.lit("../"), pl.col("month"), pl.lit("/matches.html"),
            pl.when(paths.slug_expr("player_id") == pl.col("player_id"))
            .then(pl.concat_str(pl.lit("?player="), pl.col("player_id"))).otherwise(pl.lit("")),
        )),
    ]  # fmt: skip
    frame = todo.select("player_id", "fingerprint").sort("player_id").with_columns(
        path=pl.concat_str(pl.lit("face-a-face/joueurs/"), paths.slug_expr("player_id"),
                           pl.lit(".html"))
    ).join(sides.group_by("player_id").len("_n_matches"), on="player_id", how="left",
           maintain_order="left")  # fmt: skip
    if elo is not None:
        last = elo.group_by("player_id").agg(
            pl.col("elo_after").sort_by("ended_at", "elo_seq").last().alias("_elo")
        )
        frame = frame.join(last, on="player_id", how="left", maintain_order="left")
        curves = elo_curves(elo, w, lang, timezone)
        frame = frame.join(curves.frames, on="player_id", how="left", maintain_order="left")
    else:
        frame = frame.with_columns(_elo=pl.lit(None, pl.Float64), _svg=pl.lit(None, pl.String))
    from flows.tools.site.fmt import num  # the facts: a few thousand values

    page = Pages(frame)
    page.add(*shell.head(ROOT, True, pl.concat_str(pl.lit(f"{w['player']} "), pl.col("player_id")),
                         [(w["home"], paths.INDEX), crumb]))  # fmt: skip
    page.add(
        "\n<section>\n" + html.FACTS_OPEN + f"<div><dt>{html.escape(w['elo'])}<dd>",
        num(pl.col("_elo"), 0, lang), f"</div><div><dt>{html.escape(w['matches'])}<dd>",
        pl.col("_n_matches").fill_null(0).cast(pl.String),
        "</div>" + html.FACTS_CLOSE + SECTION_CLOSE + "\n",
    )  # fmt: skip
    if elo is not None:
        opening = section_open(w["elo_over_time"]) + '<figure class="chart">\n'
        page.add(pl.when(pl.col("_svg").is_not_null()).then(pl.concat_str(
            pl.lit(opening), pl.col("_svg"))).otherwise(pl.lit("")))  # fmt: skip
        page.rows(curves.line, "player_id", curves.line_open, curves.line_close, missing="")
        page.rows(curves.points, "player_id", missing="")
        legend = html.legend([("red", w["elo_after"], "dot")])
        page.add(pl.when(pl.col("_svg").is_not_null()).then(pl.lit(
            CHART_CLOSE + "\n" + legend + "\n</figure>" + SECTION_CLOSE + "\n"))
            .otherwise(pl.lit("")))  # fmt: skip
    month_rows = grouped_rows(ranking.sort("player_id", "month"), ["player_id"],
                              row_items(month_cols, ""))  # fmt: skip
    before, after = table_around(w["months"], month_cols, 0)
    page.rows(month_rows, "player_id", section_open(w["months"]) + before,
              after + SECTION_CLOSE + "\n", missing="")  # fmt: skip
    played = rows.grouped(sides["_m"].to_numpy(), sides, ["player_id"])
    before, after = table_around(w["matches"], rows.cols, None)
    page.rows(played, "player_id", section_open(w["matches"]) + before, after + SECTION_CLOSE,
              missing="")  # fmt: skip
    page.add(shell.tail(ROOT, True))
    yield page.done()
