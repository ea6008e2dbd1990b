"""The row filler (`flows/tools/site/markup.py`) and the page renderer
(`flows/tools/site/render.py`): each row is its row format on that row; ids matched by hash
give the positions a join gives; a page is its template's text with the bytes of its blocks
of rows in place, not copied."""

from __future__ import annotations

import jinja2
import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st
from markupsafe import Markup
from markupsafe import escape as html_escape

from flows.tools.site import markup
from flows.tools.site.fmt import MISSING, escape, num, num_value, text
from flows.tools.site.labels import labels
from flows.tools.site.render import SMALL, Block, Page, Renderer
from flows.tools.site.tables import Col, grouped_rows, row_items

ids = st.one_of(st.none(), st.sampled_from(["P1", "P2", "<b>", 'a"b', "Zoé", "P10", ""]))
numbers = st.one_of(st.none(), st.floats(-1e4, 1e4), st.just(float("nan")))
small = st.one_of(st.none(), st.integers(-3, 3))


def frames(min_size: int = 0) -> st.SearchStrategy:
    return st.lists(
        st.tuples(ids, numbers, small, st.booleans()), min_size=min_size, max_size=60
    ).map(
        lambda rows: pl.DataFrame(
            rows,
            schema={"p": pl.String, "x": pl.Float64, "k": pl.Int64, "b": pl.Boolean},
            orient="row",
        )
    )


@settings(max_examples=200, deadline=None)
@given(frames())
def test_each_row_is_its_row_format_on_that_row(frame):
    template = [
        "\n<tr><th scope=row>",
        escape(pl.col("p")).fill_null(MISSING),
        "<td>",
        num(pl.col("x"), 2, "fr"),
        "<td>",
        text(pl.col("k")),
        "<td>",
        pl.when(pl.col("b")).then(pl.lit("oui")).otherwise(pl.lit("non")),
    ]
    joined = markup.rows(frame, template)
    expected = [
        f"\n<tr><th scope=row>{MISSING if p is None else html_escape(p)}<td>"
        f"{num_value(x, 2, 'fr')}<td>{MISSING if k is None else k}<td>{'oui' if b else 'non'}"
        for p, x, k, b in frame.iter_rows()
    ]
    assert [joined.text(i) for i in range(frame.height)] == expected
    assert (
        bytes(joined.view[: int(joined.ends[-1]) if frame.height else 0])
        == "".join(expected).encode()
    )
    if frame.height:  # values repeated: each shown once per distinct value, then joined back
        copies = 64 // frame.height + 5
        again = markup.rows(pl.concat([frame] * copies), template)
        assert bytes(again.view[: int(again.ends[-1])]) == ("".join(expected) * copies).encode()


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
        [1] * 5000 + [0] * 3000 + [-1] * 2000 + [1] * 10
    )


def test_taking_rows_puts_the_same_bytes_in_another_order():
    joined = markup.texts(pl.Series(["a", "bb", "", "ccc"]))
    taken = markup.take(joined, np.array([3, 0, 3, 2, 1]), per_row=np.array([2, 0, 3]))
    assert [taken.text(i) for i in range(3)] == ["ccca", "", "ccc" + "" + "bb"]


def test_a_page_is_its_template_with_its_rows_in_place_not_copied():
    w = labels("fr")
    many = range(1, 2001)  # rows of more than `SMALL` bytes: not copied
    rows = pl.DataFrame({"page": ["a"] * len(many) + ["c"], "v": [*many, 0]})
    cols = [Col("V", text(pl.col("v")), num=True)]
    blocks = grouped_rows(rows, ["page"], row_items(cols, "")).blocks()
    assert bytes(blocks["a"].view).startswith(b"\n<tr><td>1\n<tr><td>2\n")
    assert len(blocks["a"].view) >= SMALL
    renderer = Renderer("fr", w, [("Bridge", "bridge/2026-10/index.html")])
    data = {
        "title": "<Évènements>",
        "crumbs": [(w["home"], "index.html")],
        "caption": 'a "b"',
        "cols": (("V", True),),
        "rows": blocks["a"],
        "sorted": 0,
    }
    pieces = renderer.pieces(Page("bridge/2026-10/index.html", "bridge/events.html.j2", data))
    assert [type(p) for p in pieces] == [bytes, memoryview, bytes]
    assert pieces[1].obj is blocks["a"].view.obj  # the row filler's buffer, as it is
    page = b"".join(bytes(p) for p in pieces).decode()
    assert "<tbody>\n<tr><td>1\n<tr><td>2\n" in page
    assert "\n<tr><td>2000\n</tbody>" in page
    assert "<title>&lt;Évènements&gt; · Résultats duplirank</title>" in page
    assert "<caption>a &#34;b&#34;</caption>" in page
    assert '<a href="../../bridge/2026-10/index.html">Bridge</a>' in page
    assert page.endswith("</section>\n</main>\n</body>\n</html>")


def test_rows_shown_by_a_macro_are_put_at_their_place():
    renderer = Renderer("fr", labels("fr"))
    renderer.env.loader = jinja2.ChoiceLoader(
        [
            jinja2.DictLoader(
                {"bad.html.j2": "{% macro t(r) %}<p>{{ r }}</p>{% endmacro %}{{ t(rows) }}"}
            ),
            renderer.env.loader,
        ]
    )
    page = Page("x.html", "bad.html.j2", {"rows": Block(memoryview(b"<tr>" * SMALL))})
    pieces = renderer.pieces(page)
    assert pieces == [b"<p>", page.data["rows"].view, b"</p>"]
    small = Page("y.html", "bad.html.j2", {"rows": Block(memoryview(b"<tr>"))})
    assert renderer.pieces(small) == [b"<p><tr></p>"]  # a small block: copied in the text


PROBE = (
    "{% extends 'base.html.j2' %}{% set script = flag %}{% block content %}"
    "{% if a %}<p title='{{ a }}'>{{ a ~ ' · ' ~ b }}</p>{% endif %}"
    "{{ b if b == 'x' else b ~ '!' }}{{ 'same' if a == b else 'other' }}"
    "{% for k, v in items %}<i>{{ loop.index }} {{ k }}={{ v }}</i>{% endfor %}"
    "{{ m }}{{ n }}{% if n is none %}none{% endif %}{{ rows }}{% endblock %}"
)
texts = st.text(st.sampled_from(["x", "é", "<", "&", '"', "'", "\x00", " ", "·"]), max_size=4)


@settings(max_examples=150, deadline=None)
@given(
    pages=st.lists(
        st.fixed_dictionaries(
            {
                "title": st.one_of(texts, st.just("Résultats duplirank")),
                "crumbs": st.lists(st.tuples(texts, texts), max_size=2),
                "flag": st.booleans(),
                "a": texts,
                "b": texts,
                "items": st.lists(
                    st.tuples(texts, st.one_of(texts, st.integers(0, 2))), max_size=3
                ),
                "m": st.sampled_from([Markup(""), Markup("<b>&amp;</b>")]),
                "n": st.one_of(st.none(), st.integers(-2, 2), st.floats(-1, 1)),
                "rows": st.sampled_from(["", "<tr>", b"\n<tr><td>1"]),
                "share": st.sampled_from([None, 0, 1]),
            }
        ),
        min_size=1,
        max_size=6,
    ),
    shared=st.lists(st.lists(st.tuples(texts, texts), max_size=2), min_size=2, max_size=2),
)
def test_a_page_filled_from_its_skeleton_is_what_jinja_renders(pages, shared):
    """Pages of one template, one after the other (a skeleton made for one page serves the
    next of the same shape; a list given to several pages is in their skeleton), are what
    Jinja2 renders for each: values escaped alike, the template's tests and comparisons on
    them (empty or not, `==`) as on the values."""
    renderer = Renderer("fr", labels("fr"), [("B<", "b.html")], shared=2)
    renderer.env.loader = jinja2.ChoiceLoader(
        [jinja2.DictLoader({"probe.html.j2": PROBE}), renderer.env.loader]
    )
    for i, data in enumerate(pages):
        if data["share"] is not None:  # a list other pages are given too (a table's columns)
            data["items"] = shared[data["share"]]
        rows = data["rows"]
        given_data = {**data, "rows": Block(memoryview(rows)) if isinstance(rows, bytes) else rows}
        page = Page(f"a/p{i}.html", "probe.html.j2", given_data)
        shown = {**data, "rows": Markup(rows.decode()) if isinstance(rows, bytes) else rows}
        expected = renderer.env.get_template("probe.html.j2").render(root="../", **shown)
        assert renderer.text(page) == expected


def test_pages_given_other_shared_lists_show_their_own():
    """A list given to several pages is in their skeleton: pages given another such list
    (the same shape) show theirs; numbers equal but shown otherwise (0.0, -0.0) too."""
    renderer = Renderer("fr", labels("fr"), shared=2)
    renderer.env.loader = jinja2.ChoiceLoader(
        [jinja2.DictLoader({"probe.html.j2": PROBE}), renderer.env.loader]
    )
    first, second = [("a", "<")], [("b", "&")]
    base = {"title": "T", "crumbs": [], "flag": True, "a": "", "b": "x", "m": Markup("")}
    given = [first, first, first, second, second, second, first]
    numbers = [None, 0.0, -0.0, float("nan"), 0.0, float("nan"), 0.0]
    for i, (items, n) in enumerate(zip(given, numbers, strict=True)):
        data = {**base, "items": items, "n": n, "rows": ""}
        expected = renderer.env.get_template("probe.html.j2").render(root="", **data)
        assert renderer.text(Page(f"p{i}.html", "probe.html.j2", data)) == expected
