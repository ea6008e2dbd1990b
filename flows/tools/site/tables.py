"""HTML tables on whole columns: a list of columns (`Col`) gives the row format of a table
(`row_items`, filled by `markup.rows` for every row of every page of one kind) and the header
the templates' `table_open` shows (`columns`).

A column: its label, the value shown (an expression, escaped here unless it is markup), and
optionally a link target (site-relative path), a sort key (`data-sort`, when the shown text
does not sort by itself), a class expression, whether it is numeric (right-aligned; text columns are
left-aligned by their table's class) and whether it is the row's header cell
(`<th scope=row>`, the player or pair the row is about). Rows omit the end tags HTML makes
optional (`</td>`, `</th>`, `</tr>`) and quote no constant attribute value: the site is mostly
table rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from flows.tools.site import markup
from flows.tools.site.fmt import MISSING, escape
from flows.tools.site.markup import Keyed
from flows.tools.site.paths import slug_expr
from flows.tools.site.render import Block


@dataclass(frozen=True)
class Col:
    label: str
    value: pl.Expr | Keyed
    num: bool = False
    href: pl.Expr | None = None
    sort: pl.Expr | None = None
    cls: pl.Expr | None = None
    th: bool = False
    html: bool = False  # `value` is markup already (escaped where it shows text)


def columns(cols: list[Col]) -> tuple[tuple[str, bool], ...]:
    """(label, numeric) of each column: what the template's `table_open` needs."""
    return tuple((c.label, c.num) for c in cols)


def link_open(root: str, href: pl.Expr) -> pl.Expr:
    return pl.concat_str(pl.lit(f'<a href="{root}'), escape(href), pl.lit('">'))


def cell_items(col: Col, root: str) -> list:
    """The row format of one cell (no end tag: HTML makes it optional)."""
    items: list = ["<th scope=row" if col.th else "<td"]
    if col.cls is not None:
        cls = col.cls.fill_null("")
        shown = pl.concat_str(pl.lit(' class="'), cls, pl.lit('"'))
        items.append(pl.when(cls != "").then(shown).otherwise(pl.lit("")))
    if col.sort is not None:
        shown = pl.concat_str(pl.lit(' data-sort="'), escape(col.sort), pl.lit('"'))
        items.append(shown.fill_null(""))
    items.append(">")
    if isinstance(col.value, Keyed):  # markup already, shown once per key
        if col.href is None:
            return [*items, col.value]
        linked = col.href.is_not_null()
        opened = pl.when(linked).then(link_open(root, col.href)).otherwise(pl.lit(""))
        return [
            *items,
            opened,
            col.value,
            pl.when(linked).then(pl.lit("</a>")).otherwise(pl.lit("")),
        ]
    shown = (col.value if col.html else escape(col.value)).fill_null(MISSING)
    if col.href is None:
        items.append(shown)
    else:
        linked = pl.concat_str(link_open(root, col.href), shown, pl.lit("</a>"))
        items.append(pl.when(col.href.is_not_null()).then(linked).otherwise(shown))
    return items


def row_items(
    cols: list[Col], root: str, row_cls: pl.Expr | None = None, row_id: pl.Expr | None = None
) -> list:
    """The row format of one `<tr>` (after a line break); `root` prefixes links (the page's way
    to the site root); `row_id`: the row's anchor, for links to one row of a page."""
    items: list = ["\n<tr"]
    if row_id is not None:
        items.append(pl.concat_str(pl.lit(' id="'), escape(row_id), pl.lit('"')).fill_null(""))
    if row_cls is not None:
        cls = row_cls.fill_null("")
        shown = pl.concat_str(pl.lit(" class="), cls)
        items.append(pl.when(cls != "").then(shown).otherwise(pl.lit("")))
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

    def blocks(self) -> dict:
        """{key (a tuple if several keys, else the value): the page's rows as a `Block`}."""
        view = self.joined.view
        ranges = self.ranges
        width = ranges.width - 2
        if width > 1:
            keys = list(zip(*(ranges.to_series(i).to_list() for i in range(width)), strict=True))
        else:
            keys = ranges.to_series(0).to_list()
        starts, ends = ranges["_s"].to_list(), ranges["_e"].to_list()
        return {k: Block(view[s:e]) for k, s, e in zip(keys, starts, ends, strict=True)}


def grouped_rows(frame: pl.DataFrame, keys: list[str], template: list) -> Rows:
    """The rows of `frame` (sorted so that each key's rows are consecutive) as `template`
    gives them, grouped by `keys`."""
    joined = markup.rows(frame, template)
    return Rows(joined, markup.groups(frame, keys, joined))


def bodies(
    frame: pl.DataFrame,
    keys: list[str],
    cols: list[Col],
    root: str,
    row_cls: pl.Expr | None = None,
    row_id: pl.Expr | None = None,
) -> dict:
    """{key: the rows of that page as a `Block`} (`Rows.blocks`), rows in the frame's order."""
    if frame.is_empty():
        return {}
    ordered = frame.with_row_index("_i").sort([*keys, "_i"], maintain_order=True)
    return grouped_rows(ordered, keys, row_items(cols, root, row_cls, row_id)).blocks()


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
    shown = pl.when(live).then(pl.lit(w["see_ranking"])).otherwise(pl.col(rank).cast(pl.String))
    anchor = pl.concat_str(month_page, pl.lit("#p-"), slug_expr("player_id"))
    return Col(w["rank"], shown.fill_null(MISSING), num=True, href=pl.when(live).then(anchor))
