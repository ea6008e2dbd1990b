"""Pages from Jinja2 templates: one template per kind of page (`templates/<competition>/`),
each extending `base.html.j2` (head, the site's navigation, breadcrumbs, title) and filling
its `content` block with its data.

A page is `Page(path, template, data)`. `Renderer.pieces(page)` renders it into what the
writer writes one after the other: the template's text (bytes) and the rows of its big tables,
`Block`s — byte ranges of the buffer the row filler (`markup`) made for every page of a kind,
written as they are, never copied into the page's text. A template shows a `Block` as any
value (`{{ rows }}`): the block shows a marker (`MARK`, its number, `MARK`) that `pieces`
replaces with its bytes. Macros whose output depends on their arguments only (`ONCE`: the
layout's head links and header, the table heads, a chart's legend; the breadcrumbs' links)
are rendered once per distinct call; the others are `m.<macro>` in every template.
"""

from __future__ import annotations

import functools
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path

import jinja2
from markupsafe import Markup

HERE = Path(__file__).resolve().parent
TABLE_CLOSE = "\n</tbody>\n</table>\n</div>"


ONCE = ("head_links", "site_header", "navigation", "table_open", "thead", "legend")
MARK = f"\x00{secrets.token_hex(8)}\x00"  # around a block's number in a page's text
_SHOWN = threading.local()  # `.blocks`: the blocks shown by the page this thread renders


@dataclass(frozen=True, slots=True)
class Block:
    """Rows of a table, made by the row filler: bytes of its buffer."""

    view: memoryview

    def __html__(self) -> str:
        """Its marker in the page's text (the template escapes it as any value)."""
        blocks = _SHOWN.blocks
        blocks.append(self.view)
        return f"{MARK}{len(blocks) - 1}{MARK}"


@dataclass
class Page:
    """A page: where it goes (site path), its template and the template's data; `fingerprint`:
    of the rows it shows (a page whose fingerprint did not change is reused, `model.Reuse`)."""

    path: str
    template: str
    data: dict
    fingerprint: str | None = None


def page(path: str, template: str, fingerprint: str | None = None, **data) -> Page:
    return Page(path, template, data, fingerprint)


def root_of(path: str) -> str:
    """The way from a page back to the site root ("" at the root, "../" one folder down…)."""
    return "../" * path.count("/")


class Renderer:
    """The templates in one language, with the site's navigation (label, site path)."""

    def __init__(self, lang: str, words: dict, nav: list | tuple = ()):
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(HERE / "templates"),
            autoescape=True,
            trim_blocks=True,
            lstrip_blocks=True,
            auto_reload=False,
            undefined=jinja2.StrictUndefined,
        )
        self.env.globals.update(lang=lang, w=words, nav=tuple(nav), TABLE_CLOSE=Markup(TABLE_CLOSE))
        macros = self.env.get_template("macros.html.j2").module
        for name in ONCE:
            self.env.globals[name] = functools.lru_cache(maxsize=4096)(getattr(macros, name))
        links = functools.lru_cache(maxsize=4096)(macros.crumb_links)
        self.env.globals["crumb_links"] = lambda root, crumbs: links(root, tuple(crumbs))
        self.env.globals["m"] = macros  # the other macros, without an import in each page
        self._globals = dict(self.env.globals)  # a page's context: these and its data
        self._templates: dict[str, jinja2.Template] = {}

    def pieces(self, page: Page) -> list:
        """The page as bytes and the memory views of its blocks, in order."""
        template = self._templates.get(page.template)
        if template is None:
            template = self._templates[page.template] = self.env.get_template(page.template)
        blocks = _SHOWN.blocks = []
        data = {**self._globals, "root": root_of(page.path), **page.data}
        text = "".join(template.root_render_func(template.new_context(data, shared=True)))
        if not blocks:
            return [text.encode()]
        parts = text.split(MARK)
        out: list = [parts[0].encode()]
        for number, after in zip(parts[1::2], parts[2::2], strict=True):
            out += [blocks[int(number)], after.encode()]
        return out

    def text(self, page: Page) -> str:
        return b"".join(bytes(p) for p in self.pieces(page)).decode()
