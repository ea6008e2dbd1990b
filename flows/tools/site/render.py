"""Pages from Jinja2 templates: one template per kind of page (`templates/<competition>/`),
each extending `base.html.j2` (head, the site's navigation, breadcrumbs, title) and filling
its `content` block with its data.

A page is `Page(path, template, data)`. `Renderer.pieces(page)` gives what the writer writes
one after the other: the page's text (bytes) and the rows of its big tables, `Block`s — byte
ranges of the buffer the row filler (`markup`) made for every page of a kind, written as they
are, never copied into the page's text.

A template is rendered once per *shape* of the data it gets, a skeleton (`Skeleton`): the
data's structure (dicts' keys, lists' lengths, numbers, None, which texts are empty) kept, each
text, markup or block replaced by a token (`MARK`, its slot's number, `MARK`). A page of that
shape is the skeleton's text between the tokens and its own values in their place, each
escaped as the template escapes it (`markupsafe.escape`; markup and blocks as they are). A
token compares as its value: each comparison the template makes (`title == w.site`) is a
guard of the skeleton, and a page whose values compare otherwise gets a skeleton of its own.
A list or tuple given to several pages (the same object: a table's columns) is in their
skeleton as it is. A template shows, joins (`~`), compares and tests its texts; it does not
measure, slice or filter them (a filter that changes a token is refused, `Renderer.skeleton`).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path

import jinja2
from markupsafe import Markup, escape

HERE = Path(__file__).resolve().parent
TABLE_CLOSE = "\n</tbody>\n</table>\n</div>"
MARK = f"\x00{secrets.token_hex(8)}\x00"  # around a slot's number in a skeleton's text


@dataclass(frozen=True, slots=True)
class Block:
    """Rows of a table, made by the row filler: bytes of its buffer."""

    view: memoryview


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


TEXT, MARKUP, BLOCK = 0, 1, 2  # how a slot's value is shown: escaped, as it is, as bytes
_LIST, _DICT, _OTHER = object(), object(), object()  # markers of the shape


def flatten(value, shape: list, values: list, kinds: list) -> None:
    """Append `value`'s shape to `shape` and its texts, markup and blocks (the slots, in
    order) to `values`, their kinds to `kinds`."""
    kind = type(value)
    if kind is str:
        shape.append("t" if value else "")
        values.append(value)
        kinds.append(TEXT)
    elif kind is tuple or kind is list:
        shape += (_LIST, kind, len(value))
        for item in value:
            if type(item) is str:  # (the most common item: walked here)
                shape.append("t" if item else "")
                values.append(item)
                kinds.append(TEXT)
            else:
                flatten(item, shape, values, kinds)
    elif kind is dict:
        shape += (_DICT, tuple(value))
        for item in value.values():
            flatten(item, shape, values, kinds)
    elif kind is Block or hasattr(value, "__html__"):
        block = kind is Block
        shape.append("b" if block else "m" if value else "M")
        values.append(value)
        kinds.append(BLOCK if block else MARKUP)
    elif value is None or kind is bool:
        shape.append(value)
    elif kind is int:
        shape += (_OTHER, kind, value)
    else:  # another value the template shows as it is: by its text (0.0 ≠ -0.0, NaN = NaN)
        shape += (_OTHER, kind, str(value))


class _Text(str):
    """A text's token in a skeleton's data: true, and equal to a value, as its page's text is
    (each comparison kept in `guards`)."""

    def __new__(cls, slot: int, value, guards: list):
        token = super().__new__(cls, f"{MARK}{slot}{MARK}")
        token.slot, token.value, token.guards = slot, value, guards
        return token

    def __bool__(self) -> bool:
        return bool(self.value)

    def __eq__(self, other) -> bool:
        return _compared(self, other)

    def __ne__(self, other) -> bool:
        return not _compared(self, other)

    __hash__ = str.__hash__


class _Markup(Markup):
    """A markup's or a block's token: shown as it is (not escaped), else as `_Text`."""

    def __new__(cls, slot: int, value, guards: list):
        token = super().__new__(cls, f"{MARK}{slot}{MARK}")
        token.slot, token.value, token.guards = slot, value, guards
        return token

    __bool__ = _Text.__bool__
    __eq__ = _Text.__eq__
    __ne__ = _Text.__ne__
    __hash__ = str.__hash__


def _compared(token, other) -> bool:
    """`token`'s value == `other` (a value or another token), kept as a guard."""
    other_slot = other.slot if isinstance(other, (_Text, _Markup)) else None
    other_value = other.value if other_slot is not None else other
    result = bool(token.value == other_value)
    token.guards.append(
        (token.slot, other_slot, other_value if other_slot is None else None, result)
    )
    return result


def with_tokens(value, kinds: list, guards: list, count: list):
    """`value` (as `flatten` walks it) with each slot's value replaced by its token."""
    kind = type(value)
    if kind is tuple or kind is list:
        return kind(with_tokens(item, kinds, guards, count) for item in value)
    if kind is dict:
        return {k: with_tokens(v, kinds, guards, count) for k, v in value.items()}
    if kind is str or kind is Block or hasattr(value, "__html__"):
        slot = count[0]
        count[0] += 1
        return (_Text if kinds[slot] == TEXT else _Markup)(slot, value, guards)
    return value


@dataclass
class Skeleton:
    """A template rendered with tokens: `parts` its text and its slots' numbers in turn (text,
    slot, text…, text); `guards` (slot, other slot or None, value, result): the comparisons
    of the values made while rendering it, which a page's values must give alike."""

    parts: list
    guards: list

    def holds(self, values: list) -> bool:
        for slot, other, value, result in self.guards:
            if (values[slot] == (value if other is None else values[other])) != result:
                return False
        return True

    def fill(self, values: list, kinds: list, escaped: Escaped) -> list:
        """The page: its text as bytes and its blocks' memory views, in order."""
        parts = self.parts
        out: list = []
        text: list = []
        for i in range(1, len(parts), 2):
            text.append(parts[i - 1])
            slot = parts[i]
            kind = kinds[slot]
            if kind == TEXT:
                text.append(escaped[values[slot]])
            elif kind == MARKUP:
                text.append(values[slot].__html__())
            else:
                out += ("".join(text).encode(), values[slot].view)
                text = []
        text.append(parts[-1])
        out.append("".join(text).encode())
        return out


class Escaped(dict):
    """Texts escaped as the templates escape them (`markupsafe.escape`), each escaped once
    (the labels and names many pages show)."""

    def __missing__(self, value: str) -> str:
        if len(self) >= ESCAPED:
            self.clear()
        shown = self[value] = str(escape(value))
        return shown


SEEN, ESCAPED = 4096, 1 << 16  # lists and texts kept at most (then forgotten, all at once)
MACROS = ("head_links", "site_header", "navigation", "table_open", "thead", "legend", "crumb_links")


class Renderer:
    """The templates in one language, with the site's navigation (label, site path), and the
    skeletons rendered so far (by template and shape)."""

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
        self.env.globals.update({name: getattr(macros, name) for name in MACROS})
        self.env.globals["m"] = macros  # the other macros, without an import in each page
        self._skeletons: dict[tuple, list[Skeleton]] = {}
        self._seen: dict[int, object] = {}  # id -> a list or tuple given to one page so far
        self._shared: dict[int, tuple] = {}  # id -> (a list or tuple given to several, marker)
        self._escaped = Escaped()

    def pieces(self, page: Page) -> list:
        """The page as bytes and the memory views of its blocks, in order."""
        data = {"root": root_of(page.path), **page.data}
        shape: list = [page.template, tuple(data)]
        values: list = []
        kinds: list = []
        shared: list = []
        for name, value in data.items():
            marker = self._shared_marker(value)
            if marker is None:
                flatten(value, shape, values, kinds)
            else:
                shape.append(marker)
                shared.append(name)
        skeletons = self._skeletons.setdefault(tuple(shape), [])
        for skeleton in skeletons:
            if skeleton.holds(values):
                return skeleton.fill(values, kinds, self._escaped)
        skeleton = self.skeleton(page.template, data, kinds, shared)
        skeletons.append(skeleton)
        return skeleton.fill(values, kinds, self._escaped)

    def _shared_marker(self, value) -> tuple | None:
        """For a list or tuple given to more than one page (their columns, breadcrumbs, a
        chart's legend: the same object), a marker of that object in the shape: the skeleton
        shows its values themselves (page data is not changed once made); else None."""
        if type(value) is not tuple and type(value) is not list:
            return None
        key = id(value)
        known = self._shared.get(key)
        if known is not None and known[0] is value:
            return known[1]
        if self._seen.get(key) is not value:
            if len(self._seen) >= SEEN:
                self._seen.clear()
            self._seen[key] = value
            return None
        del self._seen[key]
        known = self._shared[key] = (value, ("shared", len(self._shared)))
        return known[1]

    def skeleton(self, template: str, data: dict, kinds: list, shared: list) -> Skeleton:
        """`template` rendered with `data`'s tokens (but the `shared` values), split at them."""
        guards: list = []
        count = [0]
        given = {
            name: value if name in shared else with_tokens(value, kinds, guards, count)
            for name, value in data.items()
        }
        text = self.env.get_template(template).render(given)
        parts: list = text.split(MARK)
        if len(parts) % 2 == 0 or not all(p.isdigit() for p in parts[1::2]):
            raise ValueError(f"{template} changes a value's token (a filter on a value?)")
        parts[1::2] = [int(p) for p in parts[1::2]]
        return Skeleton(parts, guards)

    def text(self, page: Page) -> str:
        return b"".join(bytes(p) for p in self.pieces(page)).decode()
