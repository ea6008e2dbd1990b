"""The page around the content (`Shell`), and the sections of the few pages made one by one.

The shell (head, navigation, breadcrumbs, title) is the Jinja2 template
`templates/base.html.j2`, rendered once per kind of page with markers where the title, the
breadcrumbs and the content go. Pages put together on columns (`pages.Pages`) take its text
around those markers and fill them on whole columns (`Shell.head`); a page made one by one
(`model.Page`: the index, the bridge events' lists) is the shell with its sections
(`sections`: dicts by `kind`) put in (`Shell.page`). Both give the same markup: the table's
frame (`table_open`) and the breadcrumbs come from here.

The markup is compact — the site is mostly table rows, and each byte of them is written and
read thousands of times — but semantic: tables have a caption, `<th scope>` headers and
`aria-sort` on the sorted column; rows omit the end tags HTML makes optional (`</td>`, `</th>`,
`</tr>`), constant attribute values are unquoted, numbers are right-aligned by the stylesheet
(a table's class `l<i>` left-aligns its text column `i`), the script and the stylesheet are
files of the site.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import jinja2
import polars as pl
from markupsafe import Markup, escape

from flows.tools.site.fmt import escape as escape_expr

TITLE = "\x00title\x00"
HEAD_TITLE = "\x00head-title\x00"
CRUMBS = "\x00crumbs\x00"
CONTENT = "\x00content\x00"
MARKER = re.compile(f"({TITLE}|{HEAD_TITLE}|{CRUMBS}|{CONTENT})")


HERE = Path(__file__).resolve().parent


def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader([HERE / "templates", HERE / "static"]),
        autoescape=True,
        trim_blocks=False,
    )


class Shell:
    """The page template, rendered once per (root, script); titles and breadcrumbs go in its
    markers."""

    @staticmethod
    def of(lang: str, words: dict, nav: list | tuple = ()) -> Shell:
        return Shell(environment().get_template("base.html.j2"), lang, words, list(nav))

    def __init__(self, template: jinja2.Template, lang: str, words: dict, nav: list):
        self.template = template
        self.lang = lang
        self.words = words
        self.nav = tuple(nav)
        self._parts: dict[tuple, list[str]] = {}

    def parts(self, root: str, script: bool) -> list[str]:
        """The template's text and its markers, in order (split on the markers)."""
        key = (root, script)
        if key not in self._parts:
            self._parts[key] = MARKER.split(self._render(root, script))
        return self._parts[key]

    def page(self, title: str, crumbs: list[tuple[str, str]], root: str, script: bool,
             content: str) -> str:  # fmt: skip
        """One page made one by one."""
        site = self.words["site"]
        values = {
            TITLE: str(escape(title)),
            HEAD_TITLE: str(escape(title if title == site else f"{title} · {site}")),
            CRUMBS: crumbs_html(crumbs, root, self.words["home"], str(escape(title))),
            CONTENT: content,
        }
        return "".join(values.get(part, part) for part in self.parts(root, script))

    def head(self, root: str, script: bool, title: pl.Expr, crumbs: list[tuple]) -> list:
        """The markup before a page's content as template items (`markup`): `title` a
        column of the pages (text, escaped here), `crumbs` (label, site path) each a text or
        a column."""
        site = self.words["site"]
        shown = escape_expr(title)
        head_title = (
            pl.when(title == site)
            .then(shown)
            .otherwise(pl.concat_str(shown, pl.lit(f" · {escape(site)}")))
        )
        values = {
            TITLE: shown,
            HEAD_TITLE: head_title,
            CRUMBS: crumbs_items(crumbs, root, self.words["home"], shown),
        }
        items: list = []
        for part in self.parts(root, script):
            if part == CONTENT:
                break
            value = values.get(part, part)
            items += value if isinstance(value, list) else [value]
        return items

    def tail(self, root: str, script: bool) -> str:
        parts = self.parts(root, script)
        return "".join(parts[parts.index(CONTENT) + 1 :])

    def _render(self, root: str, script: bool) -> str:
        return self.template.render(
            lang=self.lang,
            w=self.words,
            r=root,
            head_title=Markup(HEAD_TITLE),
            title=Markup(TITLE),
            nav=Markup(_nav(self.nav, root, self.words["home"])),
            crumbs=Markup(CRUMBS),
            content=Markup(CONTENT),
            script=script,
        )


def _link(text, link: str | None, root: str) -> str:
    if not link:
        return str(escape(text))
    return f'<a href="{escape(root + link)}">{escape(text)}</a>'


def _nav(nav, root: str, label: str) -> str:
    if not nav:
        return ""
    items = "".join(f"<li>{_link(text, link, root)}" for text, link in nav)
    return f'<nav aria-label="{escape(label)}"><ul>{items}</ul></nav>'


def _crumbs_open(label: str) -> str:
    return f'<nav class="crumbs" aria-label="{escape(label)}"><ol>'


CRUMBS_CLOSE = "</ol></nav>"


def crumbs_html(crumbs, root: str, label: str, title: str) -> str:
    if not crumbs:
        return ""
    items = "".join(f"<li>{_link(text, link, root)}" for text, link in crumbs)
    return f'{_crumbs_open(label)}{items}<li aria-current="page">{title}{CRUMBS_CLOSE}'


def crumbs_items(crumbs, root: str, label: str, title: pl.Expr) -> list:
    """`crumbs_html` as template items: labels and links may be columns."""
    if not crumbs:
        return []
    items: list = [_crumbs_open(label)]
    for text, link in crumbs:
        if isinstance(text, str) and isinstance(link, str):
            items.append(f"<li>{_link(text, link, root)}")
            continue
        shown = escape_expr(text) if isinstance(text, pl.Expr) else str(escape(text))
        target = (
            pl.concat_str(pl.lit(str(escape(root))), escape_expr(link))
            if isinstance(link, pl.Expr) else str(escape(root + link))
        )  # fmt: skip
        items += ['<li><a href="', target, '">', shown, "</a>"]
    items += ['<li aria-current="page">', title, CRUMBS_CLOSE]
    return items


# ------------------------------------------------------------------------------ tables
def table_classes(columns: tuple[tuple[str, bool], ...], sortable: bool, cls: str | None) -> str:
    """`data`, `sortable`, `l<i>` for each text column `i` (left-aligned; numbers are
    right-aligned by default), and any other class."""
    names = ["data"] + (["sortable"] if sortable else []) + (cls.split() if cls else [])
    names += [f"l{i}" for i, (_, numeric) in enumerate(columns, 1) if not numeric]
    return " ".join(names)


@functools.lru_cache(maxsize=1024)
def thead(columns: tuple[tuple[str, bool], ...], sorted_by: int | None) -> str:
    """The header row (one per distinct list of columns: shared by many pages)."""
    cells = []
    for i, (label, _) in enumerate(columns):
        sort = ' aria-sort="ascending"' if i == sorted_by else ""
        cells.append(f"<th scope=col{sort}>{escape(label)}")
    return "<thead><tr>" + "".join(cells) + "</thead>"


def table_open(caption: str, columns: tuple[tuple[str, bool], ...], *, sortable: bool = True,
               sorted_by: int | None = None, table_id: str | None = None,
               cls: str | None = None) -> str:  # fmt: skip
    """A table in its scrolling region up to its rows (`TABLE_CLOSE` after them): the region
    (reachable by the keyboard, named by the caption), the caption, the header row."""
    caption = escape(caption)
    ident = f' id="{escape(table_id)}"' if table_id else ""
    classes = table_classes(columns, sortable, cls)
    return (
        f'<div class="scroll" role="region" tabindex="0" aria-label="{caption}">\n'
        f'<table class="{classes}"{ident}>\n<caption>{caption}</caption>\n'
        f"{thead(columns, sorted_by if sortable else None)}\n<tbody>"
    )


TABLE_CLOSE = "\n</tbody>\n</table>\n</div>"


# ------------------------------------------------------------------------------ sections
def sections(items: list[dict], root: str, words: dict) -> str:
    return "\n".join(section(s, root, words) for s in items)


def section(s: dict, root: str, words: dict) -> str:
    return section_open(s.get("h2"), s.get("id")) + RENDER[s["kind"]](s, root, words) + (
        SECTION_CLOSE)  # fmt: skip


def section_open(h2: str | None = None, ident: str | None = None) -> str:
    ident = f' id="{escape(ident)}"' if ident else ""
    heading = f"<h2>{escape(h2)}</h2>\n" if h2 else ""
    return f"<section{ident}>\n{heading}"


SECTION_CLOSE = "\n</section>"


FACTS_OPEN = '<dl class="facts">'
FACTS_CLOSE = "</dl>"


def fact(label: str, value, link: str | None, root: str) -> str:
    return f"<div><dt>{escape(label)}<dd>{_link(value, link, root)}</div>"


def _facts(s: dict, root: str, words: dict) -> str:
    items = "".join(fact(label, value, link, root) for label, value, link in s["items"])
    return f"{FACTS_OPEN}{items}{FACTS_CLOSE}"


def _links(s: dict, root: str, words: dict) -> str:
    items = "".join(
        f"<li>{_link(label, link, root)}"
        + (f' <span class="note">{escape(note)}</span>' if note else "")
        for label, link, note in s["items"]
    )
    return f'<ul class="links">{items}</ul>'


def _text(s: dict, root: str, words: dict) -> str:
    cls = f' class="{escape(s["cls"])}"' if s.get("cls") else ""
    return f"<p{cls}>{escape(s['text'])}</p>"


def legend(items: list[tuple[str, str, str]]) -> str:
    """The legend of a chart: (colour, label, "dot" or "line")."""
    keys = []
    for colour, label, shape in items:
        mark = (
            f'<line x1="0" y1="8" x2="16" y2="8" stroke="{colour}" stroke-width="3"/>'
            if shape == "line"
            else f'<circle cx="8" cy="8" r="5" fill="{colour}"/>'
        )
        keys.append(
            f'<li><svg class="key" viewBox="0 0 16 16" aria-hidden="true">{mark}</svg>'
            f"{escape(label)}"
        )
    return f'<figcaption><ul class="legend">{"".join(keys)}</ul></figcaption>'


def _table(s: dict, root: str, words: dict) -> str:
    parts = []
    f = s.get("filter")
    if f:
        parts.append(filter_form(f, s["table_id"]))
    if s.get("hint"):
        parts.append(f'<p class="note">{escape(s["hint"])}</p>')
    parts.append(table(s))
    return "\n".join(parts)


def filter_form(f: dict, table_id: str) -> str:
    """The form that filters a table's rows by a text (shown by the script only)."""
    return (
        f'<form class="filter" role="search" hidden>'
        f'<label for="{f["id"]}">{escape(f["label"])}</label> '
        f'<input id="{f["id"]}" type="search" autocomplete="off" '
        f'placeholder="{escape(f["hint"])}" data-table="{table_id}" '
        f'data-columns="{f["columns"]}"> '
        f'<output for="{f["id"]}" aria-live="polite"></output> '
        f'<span class="note">{escape(f["shown"])}</span></form>'
    )


def table(s: dict) -> str:
    """A table of a section (its rows already made, `body`)."""
    columns = tuple((c["label"], c["num"]) for c in s["cols"])
    return table_open(
        s["caption"], columns, sortable=bool(s.get("sortable")), sorted_by=s.get("sorted"),
        table_id=s.get("table_id"), cls=s.get("cls"),
    ) + s["body"] + TABLE_CLOSE  # fmt: skip


def _latest(s: dict, root: str, words: dict) -> str:
    months = "".join(f"<li>{_link(label, link, root)}" for label, link, _ in s["months"])
    return (
        f'<p class="latest">{_link(s["link"][0], s["link"][1], root)}</p>\n'
        + table(s)
        + f'\n<h3>{escape(words["all_months"])}</h3>\n<ul class="links">{months}</ul>'
    )


def _html(s: dict, root: str, words: dict) -> str:
    """Markup made (and escaped) by the page's builder, such as a bridge hand diagram."""
    return s["html"]


RENDER = {
    "html": _html,
    "facts": _facts,
    "links": _links,
    "text": _text,
    "table": _table,
    "latest": _latest,
}
