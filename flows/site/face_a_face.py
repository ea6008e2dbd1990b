"""Pages of the Face-à-Face: the monthly ranking with the seed's columns (Rang, Points, ELO,
# Matches), all matches of the month (sortable by Joueur 1 / Joueur 2 and any column,
filterable by a player's name), each match (16 deals, match points, time-outs, forfeit) and
each player (ELO over time, matches, months)."""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl
from markupsafe import escape as html_escape

from flows.site import html, paths
from flows.site.fmt import MISSING, escape, local_time, mapped, num, text
from flows.site.html import thead
from flows.site.labels import month_name
from flows.site.model import NO_PREVIOUS, Page, Previous, Reuse, fingerprints, split_unchanged
from flows.site.svg import elo_curves
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

DEPTH = "../../"  # face-a-face/<month or kind>/<page>.html
BOT = "BOT"


def player_link(column: str) -> pl.Expr:
    return (
        pl.when(pl.col(column) == BOT)
        .then(pl.lit(None, pl.String))
        .otherwise(
            pl.concat_str(pl.lit("face-a-face/joueurs/"), paths.slug_expr(column), pl.lit(".html"))
        )
    )


MATCH_LINK = pl.concat_str(  # the match's section in the page of its day
    pl.lit("face-a-face/matches/"),
    pl.col("day"),
    pl.lit(".html#"),
    pl.lit(paths.ff_match_anchor("")),
    paths.slug_expr("match_id"),
)


def pages(t: dict, w: dict, lang: str, timezone: str,
          previous: Previous = NO_PREVIOUS) -> Iterator[Page | Reuse]:  # fmt: skip
    ranking = t["ff_monthly_ranking"]
    matches = t["ff_matches"]
    if ranking is None or matches is None:
        return
    months = months_of(ranking, matches)
    if not months:
        return
    crumb = (w["face_a_face"], paths.ff_month(months[-1]))
    when = pl.coalesce("started_at", "created_at")
    matches = matches.with_columns(
        when=when,
        # the day of its page: local, like the times shown (a match with no time: its month)
        day=when.dt.convert_time_zone(timezone)
        .dt.strftime("%Y-%m-%d")
        .fill_null(pl.col("month"))
        .fill_null("undated"),
    ).sort("when", "match_id")
    yield from month_pages(ranking, matches, months, w, lang, timezone, previous)
    yield from match_pages(matches, t["ff_deal_results"], w, lang, timezone, crumb, previous)
    yield from player_pages(ranking, matches, t["ff_elo"], w, lang, timezone, crumb, previous)


def months_of(ranking: pl.DataFrame | None, matches: pl.DataFrame | None) -> list[str]:
    """Months with a ranking or a match (the navigation's latest month is the last)."""
    if ranking is None or matches is None:
        return []
    return sorted(set(ranking["month"].to_list()) | set(matches["month"].drop_nulls().to_list()))


def _elo_change(before: str, after: str, lang: str) -> pl.Expr:
    return (
        pl.when(pl.col(before).is_null())
        .then(pl.lit(MISSING))
        .otherwise(
            pl.concat_str(num(pl.col(before), 0, lang), pl.lit(" → "), num(pl.col(after), 0, lang))
        )
    )


def match_cols(w: dict, lang: str, timezone: str) -> list[Col]:
    """The columns of a list of matches; Joueur 1 and Joueur 2 are columns 3 and 4."""
    return [
        Col(w["match"], pl.col("match_id"), href=MATCH_LINK, th=True),
        Col(w["date"], local_time(pl.col("when"), timezone),
            sort=pl.col("when").dt.epoch("s").cast(pl.String)),
        Col(w["type"], mapped(pl.col("match_type"), w["match_types"])),
        Col(w["player_1"], pl.col("player_a"), href=player_link("player_a")),
        Col(w["player_2"], pl.col("player_b"), href=player_link("player_b")),
        Col(w["score"], pl.concat_str(text(pl.col("mp_a")), pl.lit(" – "), text(pl.col("mp_b"))),
            num=True, sort=(pl.col("mp_a") - pl.col("mp_b")).cast(pl.String)),
        Col(w["outcome"], mapped(pl.col("outcome_a"), w["outcomes"])),
        Col(w["status"], pl.concat_str(
            mapped(pl.col("status"), w["statuses"]),
            pl.when(pl.col("forfeit_by").is_not_null())
            .then(pl.concat_str(pl.lit(f" ({w['forfeit_by']} "), pl.col("forfeit_by"), pl.lit(")")))
            .otherwise(pl.lit("")))),
        Col(w["points_1"], num(pl.col("value_a"), 0, lang), num=True),
        Col(w["points_2"], num(pl.col("value_b"), 0, lang), num=True),
        Col(w["elo_1"], _elo_change("elo_a_before", "elo_a_after", lang), num=True,
            sort=pl.col("elo_a_before").cast(pl.String)),
        Col(w["elo_2"], _elo_change("elo_b_before", "elo_b_after", lang), num=True,
            sort=pl.col("elo_b_before").cast(pl.String)),
        Col(w["ranked"], pl.when(pl.col("counts_for_ranking").fill_null(False))
            .then(pl.lit(w["played_for_ranking"])).otherwise(pl.lit(w["not_for_ranking"]))),
    ]  # fmt: skip


def month_pages(ranking, matches, months, w, lang, timezone,
                previous: Previous = NO_PREVIOUS) -> Iterator[Page | Reuse]:  # fmt: skip
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
    keep = pl.col("month").is_in(pl.Series(todo, dtype=pl.String).implode())
    ranking, matches, months = ranking.filter(keep), matches.filter(keep), todo
    cols = [
        Col(w["rank"], text(pl.col("rank")), num=True),
        Col(w["player"], pl.col("player_id"), href=player_link("player_id"), th=True),
        Col(w["points"], num(pl.col("points"), 2, lang), num=True),
        Col(w["elo"], num(pl.col("elo"), 0, lang), num=True),
        Col(w["n_matches"], text(pl.col("matches")), num=True),
        Col(w["attaque_counted"], text(pl.col("attaque_counted")), num=True),
        Col(w["classique_counted"], text(pl.col("classique_counted")), num=True),
    ]
    by_month = bodies(ranking.sort("month", "rank", "player_id"), ["month"], cols, DEPTH,
                      row_id=paths.player_row_anchor_expr())  # fmt: skip
    m_cols = match_cols(w, lang, timezone)
    match_bodies = bodies(matches, ["month"], m_cols, DEPTH)
    counts = dict(matches.group_by("month").len().iter_rows())
    crumbs = [(w["home"], paths.INDEX)]
    for month in months:
        name = month_name(month, lang)
        yield Page(
            paths.ff_month(month),
            f"{w['face_a_face']} — {name}",
            [
                {
                    "kind": "facts",
                    "items": [
                        (w["month"], name, None),
                        (w["players"], str(len(ranking.filter(pl.col("month") == month))), None),
                        (w["matches"], str(counts.get(month, 0)), paths.ff_month_matches(month)),
                    ],
                },
                {
                    "kind": "table",
                    "h2": w["ff_ranking"],
                    "caption": f"{w['ff_ranking']} — {name}",
                    "cols": header(cols),
                    "body": by_month.get(month, ""),
                    "sortable": True,
                    "sorted": 0,
                    "hint": w["sort_hint"],
                },
                {
                    "kind": "links",
                    "items": [(w["all_matches"], paths.ff_month_matches(month), None)],
                },
            ],  # fmt: skip
            crumbs=crumbs,
            fingerprint=fps[month],
        )
        yield Page(
            paths.ff_month_matches(month),
            f"{w['all_matches']} — {name}",
            [
                {
                    "kind": "table",
                    "caption": f"{w['all_matches']} — {name}",
                    "cols": header(m_cols),
                    "body": match_bodies.get(month, ""),
                    "sortable": True,
                    "table_id": "matches",
                    "hint": w["sort_hint"],
                    "filter": {
                        "id": "joueur",
                        "label": w["filter_player"],
                        "hint": w["filter_hint"],
                        "columns": "3,4",
                        "shown": w["shown"],
                    },
                },
            ],  # fmt: skip
            crumbs=crumbs + [(w["face_a_face"] + " " + name, paths.ff_month(month))],
            fingerprint=fps[month],
        )


def match_pages(matches, deal_results, w, lang, timezone, crumb, previous) -> Iterator:
    """A page per day of matches (the platform's time zone), each match a section `#m-<id>`
    (its facts: date, players, match points, outcome, forfeit, ELO, time-outs; its 16 deals).
    A day whose rows did not change since the previous site keeps its page (every day but the
    last, most nights). Every match's section is put together on whole columns."""
    has_deals = deal_results is not None and not deal_results.is_empty()
    if has_deals:
        deal_results = deal_results.join(matches.select("match_id", "day"), on="match_id")
    fps = fingerprints("day", matches, *([deal_results] if has_deals else []))
    reuse, todo = split_unchanged(fps, "day", paths.ff_match_day, previous)
    yield from reuse
    fingerprint_of = dict(todo.select("day", "fingerprint").iter_rows())
    keep = pl.col("day").is_in(todo["day"].implode())
    matches = matches.filter(keep)
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
        deal_results = deal_results.filter(keep)
        deal_bodies = bodies_frame(deal_results.sort("match_id", "deal_no"), ["match_id"], cols,
                                   DEPTH).rename({"_tr": "_deals"})  # fmt: skip
        timeouts = deal_results.group_by("match_id").agg(
            pl.col("unfinished_a").sum().alias("_to_a"), pl.col("unfinished_b").sum().alias("_to_b")
        )
    else:
        deal_bodies = pl.DataFrame(schema={"match_id": pl.String, "_deals": pl.String})
        timeouts = pl.DataFrame(schema={"match_id": pl.String, "_to_a": pl.UInt32,
                                        "_to_b": pl.UInt32})  # fmt: skip
    score = pl.concat_str(text(pl.col("mp_a")), pl.lit(" – "), text(pl.col("mp_b")))
    ranked = pl.when(pl.col("counts_for_ranking").fill_null(False)).then(
        pl.lit(w["played_for_ranking"])).otherwise(pl.lit(w["not_for_ranking"]))  # fmt: skip
    facts = [
        (w["date"], local_time(pl.col("when"), timezone), None),
        (w["type"], mapped(pl.col("match_type"), w["match_types"]), None),
        (w["player_1"], pl.col("player_a"), player_link("player_a")),
        (w["player_2"], pl.col("player_b"), player_link("player_b")),
        (w["match_points"], score, None),
        (w["outcome_1"], mapped(pl.col("outcome_a"), w["outcomes"]), None),
        (w["forfeit"], pl.col("forfeit_by"), None),  # only when there is one
        (w["status"], mapped(pl.col("status"), w["statuses"]), None),
        (w["elo_1"], _elo_change("elo_a_before", "elo_a_after", lang), None),
        (w["elo_2"], _elo_change("elo_b_before", "elo_b_after", lang), None),
        (w["points_1"], num(pl.col("value_a"), 0, lang), None),
        (w["points_2"], num(pl.col("value_b"), 0, lang), None),
        (w["ranked"], ranked, None),
        (w["timeouts"], pl.concat_str(pl.col("_to_a").cast(pl.String), pl.lit(" – "),
                                      pl.col("_to_b").cast(pl.String)), None),  # null: no deal
    ]  # fmt: skip
    name = escape(pl.concat_str(pl.lit(f"{w['match']} "), pl.col("match_id")))
    caption = escape(pl.concat_str(pl.lit(f"{w['match']} "), pl.col("match_id"), pl.lit(" — "),
                                   score))  # fmt: skip
    deals_table = pl.concat_str(
        pl.lit(f"\n<h3>{html_escape(w['deals'])}</h3>\n"
               '<div class="scroll" role="region" tabindex="0" aria-label="'), caption,
        pl.lit('">\n<table class="data">\n<caption>'), caption,
        pl.lit(f"</caption>\n<thead>{thead(tuple((c.label, c.num) for c in cols), None)}</thead>"
               "\n<tbody>\n"), pl.col("_deals"), pl.lit("\n</tbody>\n</table>\n</div>"),
    )  # fmt: skip
    article = pl.concat_str(
        pl.lit('<article class="match" id="'), pl.lit(paths.ff_match_anchor("")),
        paths.slug_expr("match_id"), pl.lit('">\n<h2>'), name, pl.lit("</h2>\n"),
        facts_html(facts, DEPTH), deals_table.fill_null(""), pl.lit("\n</article>"),
    )  # fmt: skip
    days = (
        matches.lazy()
        .with_row_index("_i")  # matches come sorted by time: the order on the page
        .join(timeouts.lazy(), on="match_id", how="left")
        .join(deal_bodies.lazy(), on="match_id", how="left")
        .group_by("day")
        .agg(pl.col("month").min(), article.sort_by("_i").str.join("\n").alias("_articles"))
        .sort("day")
        .collect()
    )
    # the day's one section, as UTF-8 bytes (the largest pages of a Face-à-Face month)
    section = pl.concat_str(pl.lit("<section>\n"), pl.col("_articles"), pl.lit("\n</section>"))
    days = days.select("day", "month", section.cast(pl.Binary))
    for day, month, articles in days.iter_rows():
        yield Page(
            paths.ff_match_day(day),
            f"{w['matches_of_day']} {day}",
            crumbs=[(w["home"], paths.INDEX), crumb,
                    (month_name(month, lang), paths.ff_month_matches(month))],
            fingerprint=fingerprint_of[day],
            markup=articles,
        )  # fmt: skip


def player_pages(ranking, matches, elo, w, lang, timezone, crumb, previous) -> Iterator:
    """A page per player; one whose rows (matches, months, ELO) did not change keeps its page."""
    sides = pl.concat([
        matches.with_columns(player_id=pl.col("player_a")),
        matches.with_columns(player_id=pl.col("player_b")),
    ]).filter(pl.col("player_id") != BOT)  # fmt: skip
    has_elo = elo is not None and not elo.is_empty()
    latest = ranking["month"].max()
    ranking = live_rank(ranking, "rank", latest)  # shown, and fingerprinted, without it
    players = pl.concat([sides["player_id"], ranking["player_id"]]).unique()
    fps = fingerprints("player_id", sides, ranking, *([elo] if has_elo else [])).filter(
        pl.col("player_id").is_in(players.implode())
    )
    reuse, todo = split_unchanged(
        fps, "player_id", lambda player: paths.ff_player(paths.slug(player)), previous
    )
    yield from reuse
    fingerprint_of = dict(todo.select("player_id", "fingerprint").iter_rows())
    keep = pl.col("player_id").is_in(todo["player_id"].implode())
    sides = sides.filter(keep).sort("player_id", "when", "match_id",
                                    descending=[False, True, True])  # fmt: skip
    ranking = ranking.filter(keep)
    elo = elo.filter(keep) if has_elo else None
    m_cols = match_cols(w, lang, timezone)
    month_cols = [
        Col(w["month"], pl.col("month"), href=pl.concat_str(
            pl.lit("face-a-face/"), pl.col("month"), pl.lit("/index.html")), th=True),
        rank_cell(w, "rank", latest, pl.concat_str(
            pl.lit("face-a-face/"), pl.col("month"), pl.lit("/index.html"))),
        Col(w["points"], num(pl.col("points"), 2, lang), num=True),
        Col(w["elo"], num(pl.col("elo"), 0, lang), num=True),
        # the month's list of matches, filtered on the player ("all matches played by Ben")
        Col(w["n_matches"], text(pl.col("matches")), num=True, href=pl.concat_str(
            pl.lit("face-a-face/"), pl.col("month"), pl.lit("/matches.html"),
            pl.when(paths.slug_expr("player_id") == pl.col("player_id"))
            .then(pl.concat_str(pl.lit("?player="), pl.col("player_id"))).otherwise(pl.lit("")),
        )),
    ]  # fmt: skip
    # each player's sections put together on columns (as `simultane.player_pages`)
    frames = [
        bodies_frame(sides, ["player_id"], m_cols, DEPTH).lazy().rename({"_tr": "_matches"}),
        sides.lazy().group_by("player_id").agg(pl.len().alias("_n_matches")),
        bodies_frame(ranking.sort("player_id", "month"), ["player_id"], month_cols, DEPTH).lazy()
        .rename({"_tr": "_months"}),
    ]  # fmt: skip
    if elo is not None and not elo.is_empty():
        frames.append(elo_curves(elo, w, lang, timezone).lazy())
        frames.append(
            elo.lazy().group_by("player_id")
            .agg(pl.col("elo_after").sort_by("ended_at", "elo_seq").last().alias("_elo"))
        )  # fmt: skip
    else:
        frames.append(pl.LazyFrame(schema={"player_id": pl.String, "svg": pl.String,
                                           "_elo": pl.Float64}))  # fmt: skip
    every = todo.lazy().select("player_id")
    for frame in frames:
        every = every.join(frame, on="player_id", how="left")
    facts = facts_html([
        (w["elo"], num(pl.col("_elo"), 0, lang), None),
        (w["matches"], pl.col("_n_matches").fill_null(0).cast(pl.String), None),
    ], DEPTH)  # fmt: skip
    chart = html.around({"kind": "chart", "h2": w["elo_over_time"],
                         "legend": [("red", w["elo_after"], "dot")]}, "svg", DEPTH, w)  # fmt: skip
    content = pl.concat_str(
        pl.lit("<section>\n"), facts, pl.lit("\n</section>"),
        placed(pl.col("svg"), chart).fill_null(""),
        placed(pl.col("_months"), table_around(w["months"], month_cols, 0, DEPTH, w))
        .fill_null(""),
        placed(pl.col("_matches"), table_around(w["matches"], m_cols, None, DEPTH, w))
        .fill_null(""),
    )  # fmt: skip
    script = pl.col("_months").is_not_null() | pl.col("_matches").is_not_null()
    made = every.select("player_id", content.cast(pl.Binary), script).collect()
    crumbs = [(w["home"], paths.INDEX), crumb]
    for player, markup, sortable in made.sort("player_id").iter_rows():
        yield Page(
            paths.ff_player(paths.slug(player)),
            f"{w['player']} {player}",
            crumbs=crumbs,
            fingerprint=fingerprint_of[player],
            markup=markup,
            script=sortable,
        )
