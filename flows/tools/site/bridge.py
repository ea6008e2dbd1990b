"""Pages of the bridge events, as KOPS publishes them: the standings (rank, pair, total, % or
IMP, VP, penalties), every board's traveller (each table's contract, NS score and both sides'
MP/IMP) and each pair's card. The same pages serve the site (`bridge/tournois/<event>/`) and
`duplirank score FILE --format html` (one event at the root of the output folder).

Templates: `bridge/events.html.j2` (a month's events, a file's events), `bridge/event.html.j2`,
`bridge/board.html.j2`, `bridge/pair.html.j2`; the rows of every table come from the row
filler (`tables.bodies`), one format per kind of table."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import polars as pl
from markupsafe import Markup

from flows.tools.site import paths
from flows.tools.site.deal import contract_markup, diagram, seat
from flows.tools.site.fmt import MISSING, escape, num, num_value, number, text
from flows.tools.site.labels import month_name
from flows.tools.site.model import NO_PREVIOUS, Previous, Reuse, fingerprints
from flows.tools.site.render import Page
from flows.tools.site.tables import Col, bodies, columns
from transforms.bridge.options import MP_METHODS


@dataclass(frozen=True)
class Layout:
    """Where an event's pages go: `base(event_id)` is the folder of its pages (site-relative,
    ending with "/" or empty), `crumbs(event_id, month)` the breadcrumbs above them."""

    base: Callable[[str], str]
    base_expr: pl.Expr
    crumbs: Callable[[str, str | None], list[tuple[str, str]]]


def site_layout(w: dict, lang: str) -> Layout:
    def crumbs(event_id: str, month: str | None) -> list[tuple[str, str]]:
        out = [(w["home"], paths.INDEX)]
        if month:
            out.append((f"{w['bridge']} — {month_name(month, lang)}", paths.bridge_month(month)))
        return out

    return Layout(
        base=lambda event_id: paths.bridge_event_base(paths.slug(event_id)),
        base_expr=pl.concat_str(
            pl.lit("bridge/tournois/"), paths.slug_expr("event_id"), pl.lit("/")
        ),
        crumbs=crumbs,
    )


def pages(t: dict, w: dict, lang: str, previous: Previous = NO_PREVIOUS) -> Iterator[Page | Reuse]:
    """The months' lists of events and every event's pages; the pages of an event whose rows
    (standings, travellers, date) did not change since the previous site are linked, not made."""
    standings = t["bridge_standings"]
    boards = t["bridge_board_results"]
    deals = t.get("bridge_deals")
    if standings is None or boards is None or standings.is_empty():
        return
    events = event_summary(standings, t["bridge_event"])
    layout = site_layout(w, lang)
    yield from month_pages(events, w, lang)
    dated = [t["bridge_event"].select("event_id", "date")] if t["bridge_event"] is not None else []
    dealt = [deals] if deals is not None and not deals.is_empty() else []
    fps = fingerprints("event_id", standings, boards, *dated, *dealt).filter(
        pl.col("event_id").is_in(standings["event_id"].implode())
    )
    todo, fingerprint_of = [], {}
    for event_id, fingerprint, reused in _unchanged_events(fps, layout, previous):
        if reused:
            yield from reused
        else:
            todo.append(event_id)
            fingerprint_of[layout.base(event_id)] = fingerprint
    if not todo:
        return
    keep = pl.col("event_id").is_in(pl.Series(todo, dtype=pl.String).implode())
    todo_deals = deals.filter(keep) if deals is not None else None
    made = event_pages(
        standings.filter(keep),
        boards.filter(keep),
        events.filter(keep),
        w,
        lang,
        layout,
        todo_deals,
    )
    for page in made:
        page.fingerprint = fingerprint_of[page.path.rsplit("/", 1)[0] + "/"]
        yield page


def _unchanged_events(fps: pl.DataFrame, layout: Layout, previous: Previous) -> Iterator:
    """(event_id, fingerprint, the `Reuse` of each of its pages or None) of every event: an
    event's pages are reused when all of the previous site's pages in its folder are."""
    old: dict[str, list[tuple[str, str]]] = {}  # the previous site's pages of each event folder
    for path, fingerprint in previous.fingerprints.items():
        if path.startswith("bridge/tournois/"):
            old.setdefault(path.rsplit("/", 1)[0] + "/", []).append((path, fingerprint))
    for event_id, fingerprint in fps.iter_rows():
        before = old.get(layout.base(event_id), [])
        if before and all(f == fingerprint and previous.unchanged(p, f) for p, f in before):
            yield event_id, fingerprint, [Reuse(p, f) for p, f in before]
        else:
            yield event_id, fingerprint, None


def event_summary(standings: pl.DataFrame, events: pl.DataFrame | None) -> pl.DataFrame:
    """One row per event: month, method, date, pairs, boards, winners."""
    summary = standings.group_by("event_id").agg(
        pl.col("month").first(),
        pl.col("method").first(),
        pl.len().alias("pairs"),
        pl.col("boards").max(),
        pl.col("pair").filter(pl.col("rank") == 1).sort().str.join(", ").alias("winners"),
    )
    if events is not None and not events.is_empty():
        dates = events.group_by("event_id").agg(pl.col("date").max().cast(pl.String))
        summary = summary.join(dates, on="event_id", how="left")
    else:
        summary = summary.with_columns(date=pl.lit(None, pl.String))
    return summary.sort("month", "date", "event_id", nulls_last=True)


def event_cols(w: dict, link: pl.Expr) -> list[Col]:
    method = pl.col("method").replace_strict(
        w["methods"], default=pl.col("method"), return_dtype=pl.String
    )
    return [
        Col(w["date"], text(pl.col("date"))),
        Col(w["event"], pl.col("event_id"), th=True, href=link),
        Col(w["method"], method),
        Col(w["pairs"], text(pl.col("pairs")), num=True),
        Col(w["boards"], text(pl.col("boards")), num=True),
        Col(w["winner"], text(pl.col("winners"))),
    ]


def month_pages(events: pl.DataFrame, w: dict, lang: str) -> Iterator[Page]:
    link = pl.concat_str(
        pl.lit("bridge/tournois/"), paths.slug_expr("event_id"), pl.lit("/index.html")
    )
    cols = event_cols(w, link)
    for month, rows in bodies(events, ["month"], cols, "../../").items():
        name = month_name(month, lang)
        data = {
            "title": f"{w['bridge']} — {name}",
            "crumbs": [(w["home"], paths.INDEX)],
            "caption": f"{w['events']} — {name}",
            "cols": columns(cols),
            "rows": rows,
            "sorted": 0,
        }
        yield Page(paths.bridge_month(month), "bridge/events.html.j2", data)


def events_index(events: pl.DataFrame, w: dict, lang: str) -> Page:
    """The list of a file's events (`score --format html` of a file with several)."""
    del lang
    cols = event_cols(w, pl.concat_str(paths.slug_expr("event_id"), pl.lit("/index.html")))
    rows = bodies(events.with_columns(_page=pl.lit(0)), ["_page"], cols, "").get(0, "")
    data = {
        "title": w["events"],
        "crumbs": [],
        "caption": w["events"],
        "cols": columns(cols),
        "rows": rows,
        "sorted": None,
    }
    return Page(paths.INDEX, "bridge/events.html.j2", data)


def _is_mp(method: pl.Expr) -> pl.Expr:
    return method.is_in(list(MP_METHODS))


def _prefixed(kind: str, last: pl.Expr) -> pl.Expr:
    """The site path of an event's page of `kind` ("paire-", "donne-"): its folder, the kind,
    the section's slug and a dash when there are sections, then `last`."""
    section = (
        pl.when(pl.col("_sec") == "")
        .then(pl.lit(""))
        .otherwise(pl.concat_str(pl.col("_sec"), pl.lit("-")))
    )
    return pl.concat_str(pl.col("_base"), pl.lit(kind), section, last, pl.lit(".html"))


def pair_link(pair: str) -> pl.Expr:
    return _prefixed("paire-", paths.slug_expr(pair))


def board_link() -> pl.Expr:
    return _prefixed("donne-", pl.col("board").cast(pl.String))


def pair_names(pair: str, names: str) -> pl.Expr:
    """A pair's number, and below it its players' names when known (markup)."""
    below = pl.concat_str(pl.lit("<span class=names>"), escape(pl.col(names)), pl.lit("</span>"))
    return pl.concat_str(
        escape(pl.col(pair)).fill_null(MISSING),
        pl.when(pl.col(names).is_not_null()).then(below).otherwise(pl.lit("")),
    )


@dataclass
class EventTables:
    """The rows of every table of the events, by page key, and their columns."""

    standings: dict  # (event_id, section, field) -> rows
    standing_cols: dict  # event_id -> columns
    travellers: dict  # (event_id, section, board) -> rows
    traveller_cols: dict  # is_mp -> columns
    cards: dict  # (event_id, section, pair) -> rows
    card_cols: dict  # is_mp -> columns


def standing_tables(ordered: pl.DataFrame, w: dict, lang: str, root: str) -> tuple[dict, dict]:
    """The standings' rows of every (event, section, field) and each event's columns: columns
    only where an event has them (VP, penalties), and no column twice (an IMP event without VP
    has its IMPs as its total)."""
    total = (
        pl.when(pl.col("_decimals"))
        .then(num(pl.col("total"), 2, lang))
        .otherwise(num(pl.col("total"), 0, lang))
    )
    rows: dict = {}
    cols_of: dict[str, list[Col]] = {}
    for (mp, vp, pen, names), part in ordered.partition_by(
        ["_mp", "_vp", "_pen", "_names"], as_dict=True
    ).items():
        pair = pair_names("pair", "names") if names else pl.col("pair")
        cols = [
            Col(w["rank"], text(pl.col("rank")), num=True),
            # the players' names under the pair's number, where the event file gives them
            Col(
                w["pair"],
                pair,
                href=pair_link("pair"),
                th=True,
                sort=pl.col("pair") if names else None,
                html=names,
            ),
            Col(w["total"], total, num=True),
            *([Col(w["pct"], number(pl.col("pct"), 2, lang), num=True)] if mp else []),
            *([Col(w["imp"], number(pl.col("imps"), 2, lang), num=True)] if vp and not mp else []),
            *([Col(w["vp"], number(pl.col("vp"), 2, lang), num=True)] if vp else []),
            *([Col(w["penalties"], number(pl.col("penalties"), 2, lang), num=True)] if pen else []),
        ]
        rows |= bodies(part, ["event_id", "section", "field"], cols, root)
        cols_of |= dict.fromkeys(part["event_id"].unique().to_list(), cols)
    return rows, cols_of


def traveller_frame(boards: pl.DataFrame, standings: pl.DataFrame) -> pl.DataFrame:
    """The NS line of each table with the EW side's MP/IMP and both pairs' names beside it."""
    ns = boards.filter(pl.col("direction") == "NS")
    ew = boards.filter(pl.col("direction") == "EW").select(
        "event_id",
        "section",
        "board",
        pl.col("pair").alias("opponent"),
        pl.col("opponent").alias("pair"),
        pl.col("mp").alias("mp_ew"),
        pl.col("imp").alias("imp_ew"),
        pl.col("pct").alias("pct_ew"),
    )
    names = standings.filter(pl.col("names").is_not_null()).select(
        "event_id", "section", "pair", "names"
    )
    return (
        ns.join(
            ew,
            on=["event_id", "section", "board", "pair", "opponent"],
            how="left",
            nulls_equal=True,
        )
        .join(
            names.rename({"names": "names_ns"}),
            on=["event_id", "section", "pair"],
            how="left",
            nulls_equal=True,
        )
        .join(
            names.rename({"pair": "opponent", "names": "names_ew"}),
            on=["event_id", "section", "opponent"],
            how="left",
            nulls_equal=True,
        )
    ).sort(
        "event_id",
        "section",
        "board",
        "score_ns",
        "pair",
        descending=[False, False, False, True, False],
        nulls_last=True,
    )


def traveller_columns(w: dict, lang: str) -> dict[bool, list[Col]]:
    """The traveller's columns of matchpoint events (both sides' MP and %) and of IMP events
    (both sides' IMP): the pairs, the contract and the score first (on a phone they are on
    screen, the percentages and the round further right in the table's region)."""
    score = (
        pl.when(pl.col("adjusted").is_not_null())
        .then(pl.col("adjusted"))
        .otherwise(text(pl.col("score_ns")))
    )
    contract = contract_markup(pl.col("contract"), w, (pl.col("declarer"), pl.col("result")))
    head = [
        Col(w["ns"], pair_names("pair", "names_ns"), href=pair_link("pair"), th=True, html=True),
        Col(w["ew"], pair_names("opponent", "names_ew"), href=pair_link("opponent"), html=True),
        Col(w["contract"], contract, html=True),
        Col(w["declarer"], text(seat(pl.col("declarer"), w))),
        Col(w["result"], text(pl.col("result"))),
        Col(w["score_ns"], score, num=True, sort=pl.col("score_ns").cast(pl.String)),
    ]
    round_col = Col(w["round"], text(pl.col("round")), num=True)
    return {
        True: head
        + [
            Col(w["mp_ns"], number(pl.col("mp"), 2, lang), num=True),
            Col(w["mp_ew"], number(pl.col("mp_ew"), 2, lang), num=True),
            Col(w["pct_ns"], number(pl.col("pct"), 2, lang), num=True),
            Col(w["pct_ew"], number(pl.col("pct_ew"), 2, lang), num=True),
            round_col,
        ],
        False: head
        + [
            Col(w["imp_ns"], number(pl.col("imp"), 2, lang), num=True),
            Col(w["imp_ew"], number(pl.col("imp_ew"), 2, lang), num=True),
            round_col,
        ],
    }


def card_columns(w: dict, lang: str) -> dict[bool, list[Col]]:
    """A pair card's columns: every board the pair played, in round and board order."""
    direction = pl.col("direction").replace_strict(
        {"NS": w["ns"], "EW": w["ew"]}, default=pl.col("direction"), return_dtype=pl.String
    )
    score = (
        pl.when(pl.col("adjusted").is_not_null())
        .then(pl.col("adjusted"))
        .otherwise(text(pl.col("score")))
    )
    head = [
        Col(w["board"], text(pl.col("board")), num=True, href=board_link(), th=True),
        Col(w["round"], text(pl.col("round")), num=True),
        Col(w["direction"], direction),
        Col(w["opponent"], pl.col("opponent"), href=pair_link("opponent")),
        Col(w["contract"], contract_markup(pl.col("contract"), w), html=True),
        Col(w["declarer"], text(seat(pl.col("declarer"), w))),
        Col(w["result"], text(pl.col("result"))),
        Col(w["score"], score, num=True, sort=pl.col("score").cast(pl.String)),
    ]
    return {
        True: head
        + [
            Col(w["mp"], number(pl.col("mp"), 2, lang), num=True),
            Col(w["pct"], number(pl.col("pct"), 2, lang), num=True),
        ],
        False: head + [Col(w["imp"], number(pl.col("imp"), 2, lang), num=True)],
    }


def _by_method(frame: pl.DataFrame, keys: list[str], cols: dict, root: str) -> dict:
    """The rows of `frame`'s pages, with the columns of each one's kind of event (`_mp`)."""
    rows: dict = {}
    for (is_mp,), part in frame.partition_by(["_mp"], as_dict=True).items():
        rows |= bodies(part, keys, cols[is_mp], root)
    return rows


def event_tables(ordered, boards, standings, w, lang, root) -> EventTables:
    standing_rows, standing_cols = standing_tables(ordered, w, lang, root)
    traveller_cols = traveller_columns(w, lang)
    travellers = _by_method(
        traveller_frame(boards, standings), ["event_id", "section", "board"], traveller_cols, root
    )
    card_cols = card_columns(w, lang)
    cards = boards.sort("event_id", "section", "pair", "round", "board", nulls_last=True)
    card_rows = _by_method(cards, ["event_id", "section", "pair"], card_cols, root)
    return EventTables(
        standing_rows, standing_cols, travellers, traveller_cols, card_rows, card_cols
    )


def _prepared(standings: pl.DataFrame, boards: pl.DataFrame, layout: Layout):
    """The standings (in table order, with what each event shows: `_mp`, `_vp`, `_pen`,
    `_names`, `_decimals`) and the boards (`_mp`), both with their section's slug and folder."""
    standings = standings.with_columns(
        _sec=paths.section_slug_expr("section"), _base=layout.base_expr
    )
    for column in ("field", "names"):
        if column not in standings.columns:
            standings = standings.with_columns(pl.lit(None, pl.String).alias(column))
    is_mp = (
        _is_mp(pl.col("method"))
        if "method" in boards.columns
        else pl.col("mp").is_not_null().any().over("event_id")
    )
    boards = boards.with_columns(
        _sec=paths.section_slug_expr("section"), _base=layout.base_expr, _mp=is_mp
    )
    standings = standings.with_columns(
        _decimals=(pl.col("total") != pl.col("total").round(0)).any().over("event_id")
    )
    kinds = standings.group_by("event_id").agg(
        _is_mp(pl.col("method")).first().alias("_mp"),
        pl.col("vp").is_not_null().any().alias("_vp"),
        (pl.col("penalties").fill_null(0) != 0).any().alias("_pen"),
        pl.col("names").is_not_null().any().alias("_names"),
    )
    ordered = standings.join(kinds, on="event_id").sort(
        "event_id", "section", pl.col("field") == "EW", "rank", "pair", nulls_last=True
    )
    return standings, ordered, boards


def event_pages(
    standings, boards, events, w, lang, layout: Layout, deals: pl.DataFrame | None = None
) -> Iterator[Page]:
    """Standings, travellers (with each board's hand diagram when `deals`, the
    `transforms.bridge.deals.board_deals` of the events, has its deal) and pair cards of every
    event of `standings`."""
    root = "../" * layout.base(standings["event_id"][0]).count("/")
    standings, ordered, boards = _prepared(standings, boards, layout)
    tables = event_tables(ordered, boards, standings, w, lang, root)
    board_lists = (
        boards.select("event_id", "section", "_sec", "board")
        .unique()
        .sort("event_id", "section", "board", nulls_last=True)
    )
    dealt = (
        {}
        if deals is None
        else {
            (r[0], r[1], r[2]): r[3:]
            for r in deals.select(
                "event_id", "section", "board", "deal", "dealer", "vulnerable"
            ).iter_rows()
        }
    )
    info = (
        {}
        if events is None
        else {r[0]: (r[1], r[2]) for r in events.select("event_id", "month", "date").iter_rows()}
    )
    methods = dict(standings.group_by("event_id").agg(pl.col("method").first()).iter_rows())
    for event_id in sorted(methods):
        event = Event(
            event_id, layout.base(event_id), methods[event_id], *info.get(event_id, (None, None))
        )
        event_boards = board_lists.filter(pl.col("event_id") == event_id)
        mine = ordered.filter(pl.col("event_id") == event_id)
        page = event_page(event, mine, event_boards, tables, w, layout)
        yield page
        crumbs = layout.crumbs(event_id, event.month) + [(page.data["title"], page.path)]
        yield from board_pages(event, event_boards, tables, dealt, w, crumbs)
        yield from pair_pages(event, mine, boards, tables, w, lang, crumbs)


@dataclass(frozen=True)
class Event:
    event_id: str
    base: str  # the folder of its pages
    method: str
    month: str | None
    date: str | None

    @property
    def is_mp(self) -> bool:
        return self.method in MP_METHODS


def _sections(event_boards: pl.DataFrame) -> list:
    return event_boards["section"].unique(maintain_order=True).to_list()


def _boards_of(event_boards: pl.DataFrame, section) -> list[int]:
    return event_boards.filter(pl.col("section").eq_missing(section))["board"].to_list()


def event_page(event: Event, mine, event_boards, tables: EventTables, w, layout) -> Page:
    """The event's facts, the standings of each section and field (NS and EW of a two-winner
    movement), the links to each section's travellers."""
    event_id = event.event_id
    facts = [
        (w["date"], event.date or MISSING),
        (w["method"], w["methods"].get(event.method, event.method)),
        (w["pairs"], str(mine.height)),
        (w["boards"], str(event_boards["board"].n_unique())),
    ]
    sections = []
    for section in _sections(event_boards):
        fields = mine.filter(pl.col("section").eq_missing(section))["field"].unique(
            maintain_order=True
        ).to_list() or [None]
        standings = []
        for field in fields:
            label = (
                w["standings"]
                + (f" — {w['section']} {section}" if section else "")
                + (f" — {w[field.lower()]}" if field else "")
            )
            ident = (
                "classement"
                + (f"-{paths.slug(section)}" if section is not None else "")
                + (f"-{field.lower()}" if field else "")
            )
            rows = tables.standings.get((event_id, section, field), "")
            standings.append({"label": label, "id": ident, "rows": rows})
        sec_slug = paths.section_slug(section)
        boards = [
            (f"{w['board']} {b}", paths.bridge_board(event.base, sec_slug, b))
            for b in _boards_of(event_boards, section)
        ]
        travellers = w["travellers"] + (f" — {section}" if section else "")
        sections.append({"standings": standings, "travellers": travellers, "boards": boards})
    data = {
        "title": f"{w['event']} {event_id}",
        "crumbs": layout.crumbs(event_id, event.month),
        "event_id": event_id,
        "facts": facts,
        "cols": columns(tables.standing_cols[event_id]),
        "sections": sections,
    }
    return Page(paths.bridge_event(event.base), "bridge/event.html.j2", data)


def board_pages(
    event: Event, event_boards, tables: EventTables, dealt: dict, w: dict, crumbs: list
) -> Iterator[Page]:
    """Each board's page: its hand diagram, its traveller, links to the boards beside it."""
    cols = columns(tables.traveller_cols[event.is_mp])
    for section in _sections(event_boards):
        sec_slug = paths.section_slug(section)
        numbers = _boards_of(event_boards, section)
        for i, b in enumerate(numbers):
            links = []
            if i > 0:
                before = numbers[i - 1]
                links.append(
                    (f"← {w['board']} {before}", paths.bridge_board(event.base, sec_slug, before))
                )
            if i + 1 < len(numbers):
                after = numbers[i + 1]
                links.append(
                    (f"{w['board']} {after} →", paths.bridge_board(event.base, sec_slug, after))
                )
            hands = diagram(b, *dealt.get((event.event_id, section, b), (None,) * 3), w)
            data = {
                "title": f"{w['board']} {b}"
                + (f" ({section})" if section else "")
                + f" — {event.event_id}",
                "crumbs": crumbs,
                "diagram": Markup(hands),
                "caption": f"{w['traveller']} — {w['board']} {b}",
                "cols": cols,
                "rows": tables.travellers.get((event.event_id, section, b), ""),
                "links": links,
            }
            path = paths.bridge_board(event.base, sec_slug, b)
            yield Page(path, "bridge/board.html.j2", data)


def pair_pages(
    event: Event, mine, boards, tables: EventTables, w, lang, crumbs: list
) -> Iterator[Page]:
    """A card for every pair of the travellers (an unranked pair has one too)."""
    totals = mine["total"].drop_nulls()
    decimals = 0 if (totals.round(0) == totals).all() else 2  # as in the standings
    pairs = (
        boards.filter(pl.col("event_id") == event.event_id)
        .select("section", "pair")
        .unique()
        .join(
            mine.select("section", "pair", "rank", "total", "pct", "imps", "names"),
            on=["section", "pair"],
            how="left",
            nulls_equal=True,
        )
        .sort("section", "rank", "pair", nulls_last=True)
        .rows()
    )
    has_vp = mine["vp"].is_not_null().any()
    cols = columns(tables.card_cols[event.is_mp])
    for section, pair, rank, total, pct, imps, players in pairs:
        facts = [
            *([(w["players"], players)] if players else []),
            (w["rank"], MISSING if rank is None else str(rank)),
            (w["total"], num_value(total, decimals, lang)),
        ]
        # the % of a matchpoint pair; the IMPs of a pair whose total is in VP (else the
        # total is the IMPs: not shown twice)
        if event.is_mp:
            facts.append((w["pct"], num_value(pct, 2, lang)))
        elif has_vp:
            facts.append((w["imp"], num_value(imps, 2, lang)))
        data = {
            "title": f"{w['pair_card']} {pair}"
            + (f" ({section})" if section else "")
            + f" — {event.event_id}",
            "crumbs": crumbs,
            "facts": facts,
            "caption": f"{w['pair_card']} {pair}",
            "cols": cols,
            "rows": tables.cards.get((event.event_id, section, pair), ""),
        }
        path = paths.bridge_pair(event.base, paths.section_slug(section), paths.slug(pair))
        yield Page(path, "bridge/pair.html.j2", data)
