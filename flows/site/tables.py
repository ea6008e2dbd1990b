"""HTML tables built from columns: the `<tr>` of every row of every page of one kind comes
from one Polars expression, then rows are grouped by page (`bodies`). Jinja renders the page
around them (header, caption, the `<thead>` from the same column list).

A column: its label, the text shown (escaped here), and optionally a link target (site-relative
path), a sort key (`data-sort`, when the shown text does not sort by itself), a class
expression, whether it is numeric (right-aligned, sorted as a number) and whether it is the
row's header cell (`<th scope="row">`, the player or pair the row is about).
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl
from markupsafe import escape as html_escape

from flows.site.fmt import MISSING, escape
from flows.site.html import around
from flows.site.paths import slug_expr


@dataclass(frozen=True)
class Col:
    label: str
    value: pl.Expr
    num: bool = False
    href: pl.Expr | None = None
    sort: pl.Expr | None = None
    cls: pl.Expr | None = None
    th: bool = False
    title: pl.Expr | None = None


def _cell(col: Col, root: str) -> pl.Expr:
    tag = "th" if col.th else "td"
    opening: list[pl.Expr] = [pl.lit(f"<{tag}" + (' scope="row"' if col.th else ""))]
    static = ["num"] if col.num else []
    if col.cls is not None:
        cls = pl.concat_str(
            pl.lit(" ".join(static) + (" " if static else "")), col.cls.fill_null("")
        ).str.strip_chars()
        opening.append(
            pl.when(cls != "")
            .then(pl.concat_str(pl.lit(' class="'), cls, pl.lit('"')))
            .otherwise(pl.lit(""))
        )
    elif static:
        opening.append(pl.lit(f' class="{" ".join(static)}"'))
    if col.sort is not None:
        opening.append(
            pl.concat_str(pl.lit(' data-sort="'), escape(col.sort), pl.lit('"')).fill_null("")
        )
    if col.title is not None:
        opening.append(
            pl.concat_str(pl.lit(' title="'), escape(col.title), pl.lit('"')).fill_null("")
        )
    shown = escape(col.value).fill_null("–")
    if col.href is not None:
        link = pl.concat_str(pl.lit(f'<a href="{root}'), escape(col.href), pl.lit('">'), shown,
                             pl.lit("</a>"))  # fmt: skip
        shown = pl.when(col.href.is_not_null()).then(link).otherwise(shown)
    return pl.concat_str(*opening, pl.lit(">"), shown, pl.lit(f"</{tag}>"))


def row_html(cols: list[Col], root: str, row_cls: pl.Expr | None = None,
             row_id: pl.Expr | None = None) -> pl.Expr:  # fmt: skip
    """One `<tr>` per row of the frame; `root` prefixes links (the page's way to the site root);
    `row_id`: the row's anchor (`id`), for links to one row of a page."""
    start = [pl.lit("<tr")]
    if row_id is not None:
        start.append(pl.concat_str(pl.lit(' id="'), escape(row_id), pl.lit('"')).fill_null(""))
    if row_cls is not None:
        start.append(
            pl.when(row_cls.fill_null("") != "")
            .then(pl.concat_str(pl.lit(' class="'), row_cls, pl.lit('"')))
            .otherwise(pl.lit(""))
        )
    return pl.concat_str(*start, pl.lit(">"), *[_cell(c, root) for c in cols], pl.lit("</tr>"))


def bodies(frame: pl.DataFrame, keys: list[str], cols: list[Col], root: str,
           row_cls: pl.Expr | None = None, row_id: pl.Expr | None = None) -> dict:  # fmt: skip
    """{key (tuple if several keys, else the value): the `<tbody>` rows of that page}, rows in
    the frame's order."""
    if frame.is_empty():
        return {}
    grouped = bodies_frame(frame, keys, cols, root, row_cls, row_id)
    key_values = grouped.select(keys).rows() if len(keys) > 1 else grouped[keys[0]].to_list()
    return dict(zip(key_values, grouped["_tr"].to_list(), strict=True))


def bodies_frame(frame: pl.DataFrame, keys: list[str], cols: list[Col], root: str,
                 row_cls: pl.Expr | None = None,
                 row_id: pl.Expr | None = None) -> pl.DataFrame:  # fmt: skip
    """`bodies` as a frame: the keys and `_tr`, the `<tbody>` rows of each key in the frame's
    order (to be put in pages on whole columns too)."""
    return (
        frame.lazy()
        .with_row_index("_i")  # lazy queries need not keep row order: say it
        .select("_i", *[pl.col(k) for k in keys],
                row_html(cols, root, row_cls, row_id).alias("_tr"))  # fmt: skip
        .group_by(keys)
        .agg(pl.col("_tr").sort_by("_i").str.join("\n"))
        .collect()
    )


def header(cols: list[Col]) -> list[dict]:
    """What the template needs for the `<thead>`."""
    return [{"label": c.label, "num": c.num} for c in cols]


def table_section(title: str, cols: list[Col], body: str, sorted_by: int | None = None) -> dict:
    """A sortable table under its own heading (also its caption), sorted on column
    `sorted_by` when the rows come in that order."""
    section = {"kind": "table", "h2": title, "caption": title, "cols": header(cols),
               "body": body, "sortable": True}  # fmt: skip
    if sorted_by is not None:
        section["sorted"] = sorted_by
    return section


def table_around(title: str, cols: list[Col], sorted_by: int | None, root: str,
                 words: dict) -> tuple[str, str]:  # fmt: skip
    """The markup of `table_section(title, cols, …, sorted_by)` before and after its rows."""
    return around(table_section(title, cols, "", sorted_by), "body", root, words)


def placed(body: pl.Expr, parts: tuple[str, str]) -> pl.Expr:
    """`body` (a column of markup) in its section, `parts` the markup before and after it
    (`html.around`), after a line break; null where `body` is null (no such section)."""
    return pl.concat_str(pl.lit("\n" + parts[0]), body, pl.lit(parts[1]))


def facts_html(items: list[tuple[str, pl.Expr, pl.Expr | None]], root: str) -> pl.Expr:
    """The `<dl>` of facts at the top of a page, one per row (a page per row: a match).
    A fact whose value is null is left out; a link target may be null (no link)."""
    parts = []
    for label, value, link in items:
        shown = escape(value)
        if link is not None:
            shown = pl.when(link.is_not_null()).then(pl.concat_str(
                pl.lit(f'<a href="{root}'), escape(link), pl.lit('">'), shown, pl.lit("</a>"),
            )).otherwise(shown)  # fmt: skip
        fact = pl.concat_str(pl.lit(f"<div><dt>{html_escape(label)}</dt><dd>"), shown,
                             pl.lit("</dd></div>"))  # fmt: skip
        parts.append(fact.fill_null(""))
    return pl.concat_str(pl.lit('<dl class="facts">'), *parts, pl.lit("</dl>"))


def live_rank(frame: pl.DataFrame, rank: str, latest: str | None) -> pl.DataFrame:
    """`frame` (month, player_id, `rank`…) with the rank of the `latest` month left out: it
    moves every night as others play, so a player's page shows, for that month, a link to the
    player's row of the ranking (`rank_cell`) and changes only when the player's own results do.
    """
    if latest is None:
        return frame
    return frame.with_columns(
        pl.when(pl.col("month") == latest).then(None).otherwise(pl.col(rank)).alias(rank)
    )


def rank_cell(w: dict, rank: str, latest: str | None, month_page: pl.Expr) -> Col:
    """The rank column of a player's months: the rank, or for the `latest` month a link to the
    player's row of that month's ranking page (`month_page`: its site path)."""
    live = pl.col("month") == pl.lit(latest)
    return Col(
        w["rank"],
        pl.when(live).then(pl.lit(w["see_ranking"])).otherwise(pl.col(rank).cast(pl.String))
        .fill_null(MISSING),
        num=True,
        href=pl.when(live).then(pl.concat_str(month_page, pl.lit("#p-"),
                                             slug_expr("player_id"))),
    )  # fmt: skip
