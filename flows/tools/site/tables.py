"""HTML tables on whole columns: a list of columns (`Col`) gives the markup of every row of
every page of one kind as one template (`row_items`, put together by `markup.rows`), and the
frame around a page's rows (`html.table_open`) from the same list.

A column: its label, the value shown (an expression, escaped here, or a `markup.Keyed` value
such as `fmt.number`), and optionally a link target (site-relative path), a sort key
(`data-sort`, when the shown text does not sort by itself), a class expression, whether it is
numeric (right-aligned; text columns are left-aligned by their table's class) and whether it
is the row's header cell (`<th scope=row>`, the player or pair the row is about). Template
expressions are shown once per distinct value of the columns they use: they must be
element-wise (no window: compute such a column first).
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from flows.tools.site import markup
from flows.tools.site.fmt import MISSING, escape
from flows.tools.site.html import TABLE_CLOSE, table_open
from flows.tools.site.markup import Keyed
from flows.tools.site.paths import slug_expr


@dataclass(frozen=True)
class Col:
    label: str
    value: pl.Expr | Keyed
    num: bool = False
    href: pl.Expr | None = None
    sort: pl.Expr | None = None
    cls: pl.Expr | None = None
    th: bool = False


def columns(cols: list[Col]) -> tuple[tuple[str, bool], ...]:
    """(label, numeric) of each column: what the table's frame needs."""
    return tuple((c.label, c.num) for c in cols)


def link_open(root: str, href: pl.Expr) -> pl.Expr:
    return pl.concat_str(pl.lit(f'<a href="{root}'), escape(href), pl.lit('">'))


def cell_items(col: Col, root: str) -> list:
    """The template items of one cell (no end tag: HTML makes it optional)."""
    items: list = ["<th scope=row" if col.th else "<td"]
    if col.cls is not None:
        cls = col.cls.fill_null("")
        items.append(pl.when(cls != "").then(pl.concat_str(pl.lit(' class="'), cls, pl.lit('"')))
                     .otherwise(pl.lit("")))  # fmt: skip
    if col.sort is not None:
        items.append(
            pl.concat_str(pl.lit(' data-sort="'), escape(col.sort), pl.lit('"')).fill_null("")
        )
    items.append(">")
    value = col.value
    if col.href is None:
        items.append(value if isinstance(value, Keyed) else escape(value).fill_null(MISSING))
    elif isinstance(value, Keyed):
        linked = col.href.is_not_null()
        items += [
            pl.when(linked).then(link_open(root, col.href)).otherwise(pl.lit("")),
            value,
            pl.when(linked).then(pl.lit("</a>")).otherwise(pl.lit("")),
        ]
    else:
        shown = escape(value).fill_null(MISSING)
        items.append(
            pl.when(col.href.is_not_null())
            .then(pl.concat_str(link_open(root, col.href), shown, pl.lit("</a>")))
            .otherwise(shown)
        )
    return items


def row_items(cols: list[Col], root: str, row_cls: pl.Expr | None = None,
              row_id: pl.Expr | None = None) -> list:  # fmt: skip
    """The template of one `<tr>` (after a line break); `root` prefixes links (the page's way
    to the site root); `row_id`: the row's anchor, for links to one row of a page."""
    items: list = ["\n<tr"]
    if row_id is not None:
        items.append(pl.concat_str(pl.lit(' id="'), escape(row_id), pl.lit('"')).fill_null(""))
    if row_cls is not None:
        cls = row_cls.fill_null("")
        items.append(pl.when(cls != "").then(pl.concat_str(pl.lit(" class="), cls))
                     .otherwise(pl.lit("")))  # fmt: skip
    items.append(">")
    for col in cols:
        items += cell_items(col, root)
    return items


@dataclass
class Rows:
    """The rows of many pages' tables: their markup (`markup.Joined`) and, per page key, the
    byte range of its rows (`ranges`: keys…, `_s`, `_e`)."""

    joined: markup.Joined
    ranges: pl.DataFrame


def grouped_rows(frame: pl.DataFrame, keys: list[str], template: list) -> Rows:
    """The rows of `frame` (sorted so that each key's rows are consecutive) as `template`
    gives them, grouped by `keys`."""
    joined = markup.rows(frame, template)
    return Rows(joined, markup.groups(frame, keys, joined))


def bodies(frame: pl.DataFrame, keys: list[str], cols: list[Col], root: str,
           row_cls: pl.Expr | None = None, row_id: pl.Expr | None = None) -> dict:  # fmt: skip
    """{key (tuple if several keys, else the value): the rows of that page as text}, rows in
    the frame's order (for the pages made one by one)."""
    if frame.is_empty():
        return {}
    ordered = frame.with_row_index("_i").sort([*keys, "_i"], maintain_order=True)
    rows = grouped_rows(ordered, keys, row_items(cols, root, row_cls, row_id))
    view = rows.joined.view
    out = {}
    for row in rows.ranges.iter_rows():
        key = row[: len(keys)]
        out[key if len(keys) > 1 else key[0]] = bytes(view[row[-2] : row[-1]]).decode()
    return out


def header(cols: list[Col]) -> list[dict]:
    """What a section of a page made one by one needs for its table's header."""
    return [{"label": c.label, "num": c.num} for c in cols]


def table_around(caption: str, cols: list[Col], sorted_by: int | None = None, *,
                 sortable: bool = True, table_id: str | None = None,
                 cls: str | None = None) -> tuple[str, str]:  # fmt: skip
    """The markup of a table before and after its rows."""
    opening = table_open(caption, columns(cols), sortable=sortable, sorted_by=sorted_by,
                         table_id=table_id, cls=cls)  # fmt: skip
    return opening, TABLE_CLOSE


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
    player's row of that month's ranking page (`month_page`: its path from the page)."""
    live = pl.col("month") == pl.lit(latest)
    return Col(
        w["rank"],
        pl.when(live).then(pl.lit(w["see_ranking"])).otherwise(pl.col(rank).cast(pl.String))
        .fill_null(MISSING),
        num=True,
        href=pl.when(live).then(pl.concat_str(month_page, pl.lit("#p-"),
                                             slug_expr("player_id"))),
    )  # fmt: skip
