"""The markup engine (`flows/tools/site/markup.py`): rows shown once per distinct value give the
same bytes as rows shown one by one; ids matched by hash give the positions a join gives; a page put
together from slices is its parts back to back."""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from flows.tools.site import markup
from flows.tools.site.fmt import MISSING, escape, minute, num, number, text
from flows.tools.site.pages import Pages
from flows.tools.site.tables import Col, grouped_rows, row_items

ids = st.one_of(st.none(), st.sampled_from(["P1", "P2", "<b>", 'a"b', "Zoé", "P10", ""]))
numbers = st.one_of(st.none(), st.floats(-1e4, 1e4), st.just(float("nan")))
small = st.one_of(st.none(), st.integers(-3, 3))


def frames(min_size: int = 0) -> st.SearchStrategy:
    return st.lists(st.tuples(ids, numbers, small, st.booleans(), ids), min_size=min_size,
                    max_size=60).map(lambda rows: pl.DataFrame(
                        rows, schema={"p": pl.String, "x": pl.Float64, "k": pl.Int64,
                                      "b": pl.Boolean, "q": pl.String}, orient="row"))  # fmt: skip


def template() -> list:
    return [
        "\n<tr><th scope=row>", escape(pl.col("p")).fill_null(MISSING), "<td>",
        number(pl.col("x"), 2, "fr"), "<td>", text(pl.col("k")), "<td>",
        pl.when(pl.col("b")).then(pl.lit("oui")).otherwise(pl.lit("non")), "<td>",
        escape(pl.col("q")).fill_null(""), " · ", escape(pl.col("p")).fill_null(""),
        markup.Keyed.of(lambda a, b: pl.concat_str(text(a), pl.lit("/"), text(b)),
                        pl.col("k"), pl.col("k") * 2),
    ]  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(frames())
def test_rows_shown_once_per_value_are_the_rows_shown_one_by_one(frame):
    coded = markup.rows(frame, template(), distinct=True)
    direct = markup.rows(frame, template(), distinct=False)
    assert bytes(coded.view[: coded.ends[-1] if len(coded.ends) else 0]) == bytes(
        direct.view[: direct.ends[-1] if len(direct.ends) else 0])  # fmt: skip
    assert coded.ends.tolist() == direct.ends.tolist()
    # and each row is the template evaluated on that row
    expected = frame.select(pl.concat_str([
        pl.lit(i) if isinstance(i, str) else i.show(*i.keys) if isinstance(i, markup.Keyed)
        else i for i in template()], ignore_nulls=True)).to_series().to_list()  # fmt: skip
    assert [coded.text(i) for i in range(frame.height)] == expected


def test_a_number_is_shown_as_num_shows_it():
    values = [0.125, 0.135, -0.005, 2.675, None, float("nan"), 99.995, -1234.5]
    frame = pl.DataFrame({"x": values})
    coded = markup.rows(frame, [number(pl.col("x"), 2, "fr"), "|"], distinct=True)
    shown = frame.select(num(pl.col("x"), 2, "fr")).to_series().to_list()
    assert [coded.text(i)[:-1] for i in range(len(values))] == shown


def test_minutes_and_days_are_shown_in_the_time_zone():
    frame = pl.DataFrame({"t": ["2026-10-25 00:30:00", "2026-10-24 23:59:59", None]}).select(
        pl.col("t").str.to_datetime(time_zone="UTC")
    )
    for pattern in ("%Y-%m-%d %H:%M", "%Y-%m-%d"):
        coded = markup.rows(frame, [minute(pl.col("t"), "America/New_York", pattern), ";"],
                            distinct=True)  # fmt: skip
        expected = frame.select(
            pl.col("t")
            .dt.convert_time_zone("America/New_York")
            .dt.strftime(pattern)
            .fill_null(MISSING)
        ).to_series()
        assert [coded.text(i)[:-1] for i in range(3)] == expected.to_list()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(ids, max_size=5000),
    st.lists(st.sampled_from(["P1", "P2", "<b>", "zz", "Zoé"]), unique=True),
)
def test_positions_are_those_a_join_gives(values, table):
    values, table = pl.Series(values, dtype=pl.String), pl.Series(table, dtype=pl.String)
    found = markup.positions(values, table)
    expected = [table.to_list().index(v) if v in table.to_list() else -1 for v in values]
    assert found.tolist() == expected


def test_positions_of_long_runs():
    values = pl.Series(["b"] * 5000 + ["a"] * 3000 + ["x"] * 2000 + ["b"] * 10)
    assert markup.positions(values, pl.Series(["a", "b"])).tolist() == (
        [1] * 5000 + [0] * 3000 + [-1] * 2000 + [1] * 10)  # fmt: skip


def test_a_page_is_its_parts_back_to_back():
    frame = pl.DataFrame({"page": ["a", "b", "c"], "n": [2, 0, 1]})
    rows = pl.DataFrame({"page": ["a", "a", "c"], "v": [1, 2, 3]})
    cols = [Col("V", text(pl.col("v")), num=True)]
    grouped = grouped_rows(rows, ["page"], row_items(cols, ""))
    pages = Pages(frame.with_columns(path=pl.concat_str("page", pl.lit(".html"))))
    pages.add("<h1>", escape(pl.col("page")), "</h1>")
    pages.rows(grouped, "page", "<table>", "</table>", missing="<p>none</p>")
    pages.add("!")
    made = pages.done()
    assert made.paths == ["a.html", "b.html", "c.html"]
    assert [made.content(i).decode() for i in range(3)] == [
        "<h1>a</h1><table>\n<tr><td>1\n<tr><td>2</table>!",
        "<h1>b</h1><p>none</p>!",
        "<h1>c</h1><table>\n<tr><td>3</table>!",
    ]


def test_taking_rows_puts_the_same_bytes_in_another_order():
    joined = markup.texts(pl.Series(["a", "bb", "", "ccc"]))
    taken = markup.take(joined, np.array([3, 0, 3, 2, 1]), per_row=np.array([2, 0, 3]))
    assert [taken.text(i) for i in range(3)] == ["ccca", "", "ccc" + "" + "bb"]
