"""The sections of a page as HTML: facts, lists of links, tables, charts, text.

The page around them (head, navigation, breadcrumbs, the script) is the Jinja2 template
`templates/base.html.j2`, rendered once per kind of page with markers where the title and the
content go (`Shell`); each page is then the shell with its own title and sections put in.
A site has tens of thousands of pages (a Face-à-Face month of 22,000 matches has a page per
match): a template render per page and per section cost more than the whole data work, these
small functions cost a few microseconds. Every text from the data is escaped here or, for
table rows built on whole columns, in `tables.py`.

The pages there are most of (players, days of matches) are put together on columns instead
(`Page.markup`, UTF-8): their sections' fixed text is cut from these functions (`around`), so
both ways give the same markup, and `Shell.page_bytes` puts them in the page.
"""

from __future__ import annotations

import functools
import re

import jinja2
from markupsafe import Markup, escape

TITLE = "\x00title\x00"
HEAD_TITLE = "\x00head-title\x00"
CONTENT = "\x00content\x00"
MARKER = re.compile(f"({TITLE}|{HEAD_TITLE}|{CONTENT})")


class Shell:
    """The page template rendered once per (root, breadcrumbs, navigation, script)."""

    def __init__(self, template: jinja2.Template, lang: str, words: dict, nav: list):
        self.template = template
        self.lang = lang
        self.words = words
        self.nav = tuple(nav)
        self._parts: dict[tuple, list[str]] = {}
        self._bytes: dict[tuple, list] = {}

    def page(self, title: str, crumbs: list[tuple[str, str]], root: str, script: bool,
             content: str) -> str:  # fmt: skip
        key = (root, tuple(crumbs), script)
        parts = self._parts.get(key)
        if parts is None:
            parts = self._parts[key] = MARKER.split(self._render(crumbs, root, script))
        site = self.words["site"]
        values = {
            TITLE: str(escape(title)),
            HEAD_TITLE: str(escape(title if title == site else f"{title} · {site}")),
            CONTENT: content,
        }
        return "".join(values.get(part, part) for part in parts)

    def page_bytes(self, title: str, crumbs: list[tuple[str, str]], root: str, script: bool,
                   content: bytes) -> bytes:  # fmt: skip
        """`page` of content already in UTF-8 (sections put together on columns): the shell's
        text is encoded once per kind of page, not with each page."""
        key = (root, tuple(crumbs), script)
        parts = self._bytes.get(key)
        if parts is None:
            parts = self._bytes[key] = [
                part if MARKER.fullmatch(part) else part.encode()
                for part in MARKER.split(self._render(crumbs, root, script))
            ]
        site = self.words["site"]
        values = {
            TITLE: str(escape(title)).encode(),
            HEAD_TITLE: str(escape(title if title == site else f"{title} · {site}")).encode(),
            CONTENT: content,
        }
        return b"".join(values.get(part, part) for part in parts)

    def _render(self, crumbs, root: str, script: bool) -> str:
        home = self.words["home"]
        return self.template.render(
            lang=self.lang,
            w=self.words,
            r=root,
            head_title=Markup(HEAD_TITLE),
            title=Markup(TITLE),
            nav=Markup(_nav(self.nav, root, home)),
            crumbs=Markup(_crumbs(crumbs, root, home)),
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
    items = "".join(f"<li>{_link(text, link, root)}</li>" for text, link in nav)
    return f'<nav aria-label="{escape(label)}"><ul>{items}</ul></nav>'


def _crumbs(crumbs, root: str, label: str) -> str:
    if not crumbs:
        return ""
    items = "".join(f"<li>{_link(text, link, root)}</li>" for text, link in crumbs)
    return (
        f'<nav class="crumbs" aria-label="{escape(label)}"><ol>{items}'
        f'<li aria-current="page">{TITLE}</li></ol></nav>'
    )


def sections(items: list[dict], root: str, words: dict) -> str:
    return "\n".join(section(s, root, words) for s in items)


def section(s: dict, root: str, words: dict) -> str:
    ident = f' id="{escape(s["id"])}"' if s.get("id") else ""
    heading = f"<h2>{escape(s['h2'])}</h2>\n" if s.get("h2") else ""
    body = RENDER[s["kind"]](s, root, words)
    return f"<section{ident}>\n{heading}{body}\n</section>"


HOLE = "\x00hole\x00"


def around(s: dict, key: str, root: str, words: dict) -> tuple[str, str]:
    """The markup of section `s` before and after its `key` (a table's body, a chart's svg),
    to put the markup of many pages' sections together on columns with the same text as
    `section` gives one page."""
    before, after = section({**s, key: HOLE}, root, words).split(HOLE)
    return before, after


def _facts(s: dict, root: str, words: dict) -> str:
    items = "".join(
        f"<div><dt>{escape(label)}</dt><dd>{_link(value, link, root)}</dd></div>"
        for label, value, link in s["items"]
    )
    return f'<dl class="facts">{items}</dl>'


def _links(s: dict, root: str, words: dict) -> str:
    items = "".join(
        f"<li>{_link(label, link, root)}"
        + (f' <span class="note">{escape(note)}</span>' if note else "")
        + "</li>"
        for label, link, note in s["items"]
    )
    return f'<ul class="links">{items}</ul>'


def _text(s: dict, root: str, words: dict) -> str:
    cls = f' class="{escape(s["cls"])}"' if s.get("cls") else ""
    return f"<p{cls}>{escape(s['text'])}</p>"


def _chart(s: dict, root: str, words: dict) -> str:
    keys = []
    for colour, label, shape in s["legend"]:
        mark = (
            f'<line x1="0" y1="8" x2="16" y2="8" stroke="{colour}" stroke-width="3"/>'
            if shape == "line"
            else f'<circle cx="8" cy="8" r="5" fill="{colour}"/>'
        )
        keys.append(
            f'<li><svg class="key" viewBox="0 0 16 16" aria-hidden="true">{mark}</svg>'
            f"{escape(label)}</li>"
        )
    return (
        f'<figure class="chart">\n{s["svg"]}\n<figcaption><ul class="legend">{"".join(keys)}'
        "</ul></figcaption>\n</figure>"
    )


def _table(s: dict, root: str, words: dict) -> str:
    parts = []
    f = s.get("filter")
    if f:
        parts.append(
            f'<form class="filter" role="search" hidden>'
            f'<label for="{f["id"]}">{escape(f["label"])}</label> '
            f'<input id="{f["id"]}" type="search" autocomplete="off" '
            f'placeholder="{escape(f["hint"])}" data-table="{s["table_id"]}" '
            f'data-columns="{f["columns"]}"> '
            f'<output for="{f["id"]}" aria-live="polite"></output> '
            f'<span class="note">{escape(f["shown"])}</span></form>'
        )
    if s.get("hint"):
        parts.append(f'<p class="note">{escape(s["hint"])}</p>')
    parts.append(table(s))
    return "\n".join(parts)


def table(s: dict) -> str:
    """A table in its scrolling region: caption, header row, the rows built on columns."""
    cls = "data" + (" sortable" if s.get("sortable") else "") + (f" {s['cls']}" if s.get("cls")
                                                                 else "")  # fmt: skip
    ident = f' id="{s["table_id"]}"' if s.get("table_id") else ""
    caption = escape(s["caption"])
    head = thead(
        tuple((c["label"], c["num"]) for c in s["cols"]),
        s.get("sorted") if s.get("sortable") else None,
    )
    return (
        f'<div class="scroll" role="region" tabindex="0" aria-label="{caption}">\n'
        f'<table class="{cls}"{ident}>\n<caption>{caption}</caption>\n'
        f"<thead>{head}</thead>\n<tbody>\n{s['body']}\n</tbody>\n</table>\n</div>"
    )


@functools.lru_cache(maxsize=512)
def thead(columns: tuple[tuple[str, bool], ...], sorted_by: int | None) -> str:
    """The header row (one per distinct list of columns: shared by many pages)."""
    cells = []
    for i, (label, numeric) in enumerate(columns):
        cls = ' class="num"' if numeric else ""
        sort = ' aria-sort="ascending"' if i == sorted_by else ""
        cells.append(f'<th scope="col"{cls}{sort}>{escape(label)}</th>')
    return "<tr>" + "".join(cells) + "</tr>"


def _latest(s: dict, root: str, words: dict) -> str:
    months = "".join(f"<li>{_link(label, link, root)}</li>" for label, link, _ in s["months"])
    return (
        f'<p class="latest">{_link(s["link"][0], s["link"][1], root)}</p>\n'
        + table(s)
        + f'\n<h3>{escape(words["all_months"])}</h3>\n<ul class="links">{months}</ul>'
    )


RENDER = {
    "facts": _facts,
    "links": _links,
    "text": _text,
    "chart": _chart,
    "table": _table,
    "latest": _latest,
}
