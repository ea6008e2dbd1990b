"""Pages of the bridge events, as KOPS publishes them: the standings (rank, pair, total, % or
IMP, VP, penalties), every board's traveller (each table's contract, NS score and both sides'
MP/IMP) and each pair's card. The same pages serve the site (`bridge/tournois/<event>/`) and
`duplirank score FILE --format html` (one event at the root of the output folder)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import polars as pl

from flows.tools.site import paths
from flows.tools.site.deal import contract_markup, diagram, seat
from flows.tools.site.fmt import MISSING, escape, num, num_value, text
from flows.tools.site.labels import month_name
from flows.tools.site.markup import Keyed
from flows.tools.site.model import NO_PREVIOUS, Page, Previous, Reuse, fingerprints
from flows.tools.site.tables import Col, bodies, header
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


def pages(
    t: dict, w: dict, lang: str, previous: Previous = NO_PREVIOUS, shell=None
) -> Iterator[Page | Reuse]:
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
    old: dict[str, list[tuple[str, str]]] = {}  # the previous site's pages of each event folder
    for path, fingerprint in previous.fingerprints.items():
        if path.startswith("bridge/tournois/"):
            old.setdefault(path.rsplit("/", 1)[0] + "/", []).append((path, fingerprint))
    todo, fingerprint_of = [], {}
    for event_id, fingerprint in fps.iter_rows():
        base = layout.base(event_id)
        before = old.get(base, [])
        if before and all(f == fingerprint and previous.unchanged(p, f) for p, f in before):
            yield from (Reuse(p, f) for p, f in before)
        else:
            todo.append(event_id)
            fingerprint_of[base] = fingerprint
    keep = pl.col("event_id").is_in(pl.Series(todo, dtype=pl.String).implode())
    if not todo:
        return
    todo_deals = deals.filter(keep) if deals is not None else None
    for page in event_pages(standings.filter(keep), boards.filter(keep), events.filter(keep), w,
                            lang, layout, todo_deals):  # fmt: skip
        page.fingerprint = fingerprint_of[page.path.rsplit("/", 1)[0] + "/"]
        yield page


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
    return [
        Col(w["date"], text(pl.col("date"))),
        Col(w["event"], pl.col("event_id"), th=True, href=link),
        Col(w["method"], pl.col("method").replace_strict(
            w["methods"], default=pl.col("method"), return_dtype=pl.String)),
        Col(w["pairs"], text(pl.col("pairs")), num=True),
        Col(w["boards"], text(pl.col("boards")), num=True),
        Col(w["winner"], text(pl.col("winners"))),
    ]  # fmt: skip


def month_pages(events: pl.DataFrame, w: dict, lang: str) -> Iterator[Page]:
    link = pl.concat_str(pl.lit("bridge/tournois/"), paths.slug_expr("event_id"),
                         pl.lit("/index.html"))  # fmt: skip
    cols = event_cols(w, link)
    by_month = bodies(events, ["month"], cols, "../../")
    for month, body in by_month.items():
        name = month_name(month, lang)
        yield Page(
            paths.bridge_month(month),
            f"{w['bridge']} — {name}",
            [
                {
                    "kind": "table",
                    "caption": f"{w['events']} — {name}",
                    "cols": header(cols),
                    "body": body,
                    "sortable": True,
                    "sorted": 0,
                }
            ],  # fmt: skip
            crumbs=[(w["home"], paths.INDEX)],
        )


def events_index(events: pl.DataFrame, w: dict, lang: str) -> Page:
    """The list of a file's events (`score --format html` of a file with several)."""
    del lang
    cols = event_cols(w, pl.concat_str(paths.slug_expr("event_id"), pl.lit("/index.html")))
    body = bodies(events.with_columns(_page=pl.lit(0)), ["_page"], cols, "").get(0, "")
    return Page(paths.INDEX, w["events"], [{"kind": "table", "caption": w["events"],
                "cols": header(cols), "body": body, "sortable": True}])  # fmt: skip


def _is_mp(method: pl.Expr) -> pl.Expr:
    return method.is_in(list(MP_METHODS))


def event_pages(standings, boards, events, w, lang, layout: Layout,
                deals: pl.DataFrame | None = None) -> Iterator[Page]:  # fmt: skip
    """Standings, travellers (with each board's hand diagram when `deals`, the
    `transforms.bridge.deals.board_deals` of the events, has its deal) and pair cards of every
    event of `standings`."""
    standings = standings.with_columns(
        _sec=paths.section_slug_expr("section"), _base=layout.base_expr
    )
    boards = boards.with_columns(
        _sec=paths.section_slug_expr("section"),
        _base=layout.base_expr,
        _mp=_is_mp(pl.col("method")) if "method" in boards.columns else pl.col("mp").is_not_null()
        .any().over("event_id"),
    )  # fmt: skip
    methods = dict(standings.group_by("event_id").agg(pl.col("method").first()).iter_rows())
    root = "../" * layout.base(standings["event_id"][0]).count("/")

    def pair_link(pair: str) -> pl.Expr:
        prefix = (
            pl.when(pl.col("_sec") == "")
            .then(pl.lit(""))
            .otherwise(pl.concat_str(pl.col("_sec"), pl.lit("-")))
        )
        return pl.concat_str(pl.col("_base"), pl.lit("paire-"), prefix, paths.slug_expr(pair),
                             pl.lit(".html"))  # fmt: skip

    def board_link() -> pl.Expr:
        prefix = (
            pl.when(pl.col("_sec") == "")
            .then(pl.lit(""))
            .otherwise(pl.concat_str(pl.col("_sec"), pl.lit("-")))
        )
        return pl.concat_str(pl.col("_base"), pl.lit("donne-"), prefix,
                             pl.col("board").cast(pl.String), pl.lit(".html"))  # fmt: skip

    def pair_names(pair: str, names: str) -> Keyed:
        """A pair's number, and below it its players' names when known."""
        return Keyed.of(
            lambda p, n: pl.concat_str(
                escape(p).fill_null(MISSING),
                pl.when(n.is_not_null())
                .then(pl.concat_str(pl.lit("<span class=names>"), escape(n), pl.lit("</span>")))
                .otherwise(pl.lit("")),
            ),
            pl.col(pair),
            pl.col(names),
        )

    # --- standings: one table per (event, section)
    standings = standings.with_columns(  # (row templates are element-wise: the event's first)
        _decimals=(pl.col("total") != pl.col("total").round(0)).any().over("event_id")
    )
    total = pl.when(pl.col("_decimals")).then(num(pl.col("total"), 2, lang)).otherwise(
        num(pl.col("total"), 0, lang))  # fmt: skip
    if "field" not in standings.columns:
        standings = standings.with_columns(field=pl.lit(None, pl.String))
    if "names" not in standings.columns:
        standings = standings.with_columns(names=pl.lit(None, pl.String))
    kinds = [
        _is_mp(pl.col("method")).first().alias("_mp"),
        pl.col("vp").is_not_null().any().alias("_vp"),
        (pl.col("penalties").fill_null(0) != 0).any().alias("_pen"),
        pl.col("names").is_not_null().any().alias("_names"),
    ]
    ordered = standings.join(standings.group_by("event_id").agg(kinds), on="event_id").sort(
        "event_id", "section", pl.col("field") == "EW", "rank", "pair", nulls_last=True
    )
    # columns only where an event has them (VP, penalties), and no column twice: an IMP event
    # without VP has its IMPs as its total
    standing_rows: dict = {}
    standing_cols: dict[str, list[Col]] = {}
    for (mp, vp, pen, names), part in ordered.partition_by(
        ["_mp", "_vp", "_pen", "_names"], as_dict=True
    ).items():
        cols = [
            Col(w["rank"], text(pl.col("rank")), num=True),
            # the players' names under the pair's number, where the event file gives them
            Col(
                w["pair"],
                pair_names("pair", "names") if names else pl.col("pair"),
                href=pair_link("pair"),
                th=True,
                sort=pl.col("pair") if names else None,
            ),
            Col(w["total"], total, num=True),
            *([Col(w["pct"], num(pl.col("pct"), 2, lang), num=True)] if mp else []),
            *([Col(w["imp"], num(pl.col("imps"), 2, lang), num=True)] if vp and not mp else []),
            *([Col(w["vp"], num(pl.col("vp"), 2, lang), num=True)] if vp else []),
            *([Col(w["penalties"], num(pl.col("penalties"), 2, lang), num=True)] if pen else []),
        ]
        standing_rows |= bodies(part, ["event_id", "section", "field"], cols, root)
        standing_cols |= dict.fromkeys(part["event_id"].unique().to_list(), cols)

    # --- travellers: NS line of each table with the EW side's MP/IMP beside it
    ns = boards.filter(pl.col("direction") == "NS")
    ew = boards.filter(pl.col("direction") == "EW").select(
        "event_id", "section", "board",
        pl.col("pair").alias("opponent"), pl.col("opponent").alias("pair"),
        pl.col("mp").alias("mp_ew"), pl.col("imp").alias("imp_ew"), pl.col("pct").alias("pct_ew"),
    )  # fmt: skip
    # the players' names of both pairs, where the event file gives them
    names = standings.filter(pl.col("names").is_not_null()).select(
        "event_id", "section", "pair", "names"
    )
    tables = (
        ns.join(ew, on=["event_id", "section", "board", "pair", "opponent"], how="left",
                nulls_equal=True)
        .join(names.rename({"names": "names_ns"}), on=["event_id", "section", "pair"],
              how="left", nulls_equal=True)
        .join(names.rename({"pair": "opponent", "names": "names_ew"}),
              on=["event_id", "section", "opponent"], how="left", nulls_equal=True)
    ).sort(
        "event_id", "section", "board", "score_ns", "pair",
        descending=[False, False, False, True, False], nulls_last=True,
    )  # fmt: skip
    score_text = pl.when(pl.col("adjusted").is_not_null()).then(pl.col("adjusted")).otherwise(
        text(pl.col("score_ns")))  # fmt: skip
    # the pairs, the contract and the score first, then both sides' MP or IMP: on a phone
    # they are on screen, the percentages and the round further right in the table's region
    traveller_head = [
        Col(w["ns"], pair_names("pair", "names_ns"), href=pair_link("pair"), th=True),
        Col(w["ew"], pair_names("opponent", "names_ew"), href=pair_link("opponent")),
        Col(w["contract"], contract_markup(pl.col("contract"), w,
                                           (pl.col("declarer"), pl.col("result")))),
        Col(w["declarer"], text(seat(pl.col("declarer"), w))),
        Col(w["result"], text(pl.col("result"))),
        Col(w["score_ns"], score_text, num=True, sort=pl.col("score_ns").cast(pl.String)),
    ]  # fmt: skip
    round_col = Col(w["round"], text(pl.col("round")), num=True)
    # matchpoint events show both sides' MP and %, IMP events both sides' IMP
    traveller_cols = {
        True: traveller_head
        + [
            Col(w["mp_ns"], num(pl.col("mp"), 2, lang), num=True),
            Col(w["mp_ew"], num(pl.col("mp_ew"), 2, lang), num=True),
            Col(w["pct_ns"], num(pl.col("pct"), 2, lang), num=True),
            Col(w["pct_ew"], num(pl.col("pct_ew"), 2, lang), num=True),
            round_col,
        ],
        False: traveller_head
        + [
            Col(w["imp_ns"], num(pl.col("imp"), 2, lang), num=True),
            Col(w["imp_ew"], num(pl.col("imp_ew"), 2, lang), num=True),
            round_col,
        ],
    }
    traveller_rows: dict = {}
    for (is_mp,), part in tables.partition_by(["_mp"], as_dict=True).items():
        keys = ["event_id", "section", "board"]
        traveller_rows |= bodies(part, keys, traveller_cols[is_mp], root)

    # --- pair cards: every board the pair played, in round and board order
    card_head = [
        Col(w["board"], text(pl.col("board")), num=True, href=board_link(), th=True),
        Col(w["round"], text(pl.col("round")), num=True),
        Col(w["direction"], pl.col("direction").replace_strict(
            {"NS": w["ns"], "EW": w["ew"]}, default=pl.col("direction"),
            return_dtype=pl.String)),
        Col(w["opponent"], pl.col("opponent"), href=pair_link("opponent")),
        Col(w["contract"], contract_markup(pl.col("contract"), w)),
        Col(w["declarer"], text(seat(pl.col("declarer"), w))),
        Col(w["result"], text(pl.col("result"))),
        Col(w["score"], pl.when(pl.col("adjusted").is_not_null()).then(pl.col("adjusted"))
            .otherwise(text(pl.col("score"))), num=True, sort=pl.col("score").cast(pl.String)),
    ]  # fmt: skip
    card_cols = {
        True: card_head
        + [
            Col(w["mp"], num(pl.col("mp"), 2, lang), num=True),
            Col(w["pct"], num(pl.col("pct"), 2, lang), num=True),
        ],
        False: card_head + [Col(w["imp"], num(pl.col("imp"), 2, lang), num=True)],
    }
    cards = boards.sort("event_id", "section", "pair", "round", "board", nulls_last=True)
    card_rows: dict = {}
    for (is_mp,), part in cards.partition_by(["_mp"], as_dict=True).items():
        card_rows |= bodies(part, ["event_id", "section", "pair"], card_cols[is_mp], root)

    board_lists = (
        boards.select("event_id", "section", "_sec", "board").unique()
        .sort("event_id", "section", "board", nulls_last=True)
    )  # fmt: skip
    dealt = {} if deals is None else {
        (r[0], r[1], r[2]): r[3:] for r in deals.select(
            "event_id", "section", "board", "deal", "dealer", "vulnerable").iter_rows()
    }  # fmt: skip
    summary = events.select("event_id", "month", "date") if events is not None else None
    info = {} if summary is None else {r[0]: (r[1], r[2]) for r in summary.iter_rows()}
    for event_id in sorted(methods):
        base = layout.base(event_id)
        month, date = info.get(event_id, (None, None))
        method = methods[event_id]
        is_mp = method in MP_METHODS
        shown_cols = header(standing_cols[event_id])
        event_standings = ordered.filter(pl.col("event_id") == event_id)
        title = f"{w['event']} {event_id}"
        crumbs = layout.crumbs(event_id, month)
        event_boards = board_lists.filter(pl.col("event_id") == event_id)
        sections_of_event = event_boards["section"].unique(maintain_order=True).to_list()
        page_sections: list[dict] = [{"kind": "facts", "items": [
            (w["date"], date or MISSING, None),
            (w["method"], w["methods"].get(method, method), None),
            (w["pairs"], str(len(standings.filter(pl.col("event_id") == event_id))), None),
            (w["boards"], str(event_boards["board"].n_unique()), None),
        ]}]  # fmt: skip
        for section in sections_of_event:
            fields = (
                event_standings.filter(pl.col("section").eq_missing(section))["field"]
                .unique(maintain_order=True).to_list() or [None]
            )  # fmt: skip
            for field in fields:  # one table per field (NS and EW of a two-winner movement)
                label = (f"{w['standings']}" + (f" — {w['section']} {section}" if section else "")
                         + (f" — {w[field.lower()]}" if field else ""))  # fmt: skip
                body = standing_rows.get((event_id, section, field), "")
                table_id = ("classement" + (f"-{paths.slug(section)}" if section is not None
                            else "") + (f"-{field.lower()}" if field else ""))  # fmt: skip
                page_sections.append({
                    "kind": "table", "h2": label, "caption": f"{label} — {event_id}",
                    "cols": shown_cols, "body": body, "sortable": True, "sorted": 0,
                    "table_id": table_id,
                })  # fmt: skip
            sec_slug = paths.section_slug(section)
            numbers = event_boards.filter(pl.col("section").eq_missing(section))["board"].to_list()
            page_sections.append({
                "kind": "links", "h2": w["travellers"] + (f" — {section}" if section else ""),
                "items": [(f"{w['board']} {b}", paths.bridge_board(base, sec_slug, b), None)
                          for b in numbers],
            })  # fmt: skip
        yield Page(paths.bridge_event(base), title, page_sections, crumbs=crumbs)
        event_crumbs = crumbs + [(title, paths.bridge_event(base))]
        for section in sections_of_event:
            sec_slug = paths.section_slug(section)
            numbers = event_boards.filter(pl.col("section").eq_missing(section))["board"].to_list()
            for i, b in enumerate(numbers):
                links = []
                if i > 0:
                    links.append(
                        (
                            f"← {w['board']} {numbers[i - 1]}",
                            paths.bridge_board(base, sec_slug, numbers[i - 1]),
                            None,
                        )
                    )
                if i + 1 < len(numbers):
                    links.append(
                        (
                            f"{w['board']} {numbers[i + 1]} →",
                            paths.bridge_board(base, sec_slug, numbers[i + 1]),
                            None,
                        )
                    )
                hand_diagram = diagram(b, *dealt.get((event_id, section, b), (None,) * 3), w)
                yield Page(
                    paths.bridge_board(base, sec_slug, b),
                    f"{w['board']} {b}" + (f" ({section})" if section else "") + f" — {event_id}",
                    [
                        *([{"kind": "html", "html": hand_diagram}] if hand_diagram else []),
                        {"kind": "table", "caption": f"{w['traveller']} — {w['board']} {b}",
                         "cols": header(traveller_cols[is_mp]),
                         "body": traveller_rows.get((event_id, section, b), ""),
                         "sortable": True, "cls": "traveller"},
                        {"kind": "links", "items": links},
                    ],
                    crumbs=event_crumbs,
                )  # fmt: skip
        mine = ordered.filter(pl.col("event_id") == event_id)
        total_decimals = 0 if (mine["total"].drop_nulls().round(0) == mine["total"].drop_nulls()
                               ).all() else 2  # as in the standings  # fmt: skip
        # a card for every pair of the travellers (an unranked pair has one too)
        pairs = (
            boards.filter(pl.col("event_id") == event_id).select("section", "pair").unique()
            .join(mine.select("section", "pair", "rank", "total", "pct", "imps", "names"),
                  on=["section", "pair"], how="left", nulls_equal=True)
            .sort("section", "rank", "pair", nulls_last=True)
            .rows()
        )  # fmt: skip
        has_vp = mine["vp"].is_not_null().any()
        for section, pair, rank, pair_total, pct, imps, players in pairs:
            sec_slug = paths.section_slug(section)
            facts = [
                *([(w["players"], players, None)] if players else []),
                (w["rank"], MISSING if rank is None else str(rank), None),
                (w["total"], num_value(pair_total, total_decimals, lang), None),
            ]
            # the % of a matchpoint pair; the IMPs of a pair whose total is in VP (else the
            # total is the IMPs: not shown twice)
            if is_mp:
                facts.append((w["pct"], num_value(pct, 2, lang), None))
            elif has_vp:
                facts.append((w["imp"], num_value(imps, 2, lang), None))
            yield Page(
                paths.bridge_pair(base, sec_slug, paths.slug(pair)),
                f"{w['pair_card']} {pair}" + (f" ({section})" if section else "")
                + f" — {event_id}",
                [
                    {"kind": "facts", "items": facts},
                    {"kind": "table", "caption": f"{w['pair_card']} {pair}",
                     "cols": header(card_cols[is_mp]),
                     "body": card_rows.get((event_id, section, pair), ""), "sortable": True},
                ],
                crumbs=event_crumbs,
            )  # fmt: skip
