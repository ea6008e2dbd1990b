"""Pages from Jinja2 templates: one template per kind of page (`templates/<competition>/`),
each extending `base.html.j2` (head, the site's navigation, breadcrumbs, title) and filling
its `content` block with its data.

A page is `Page(path, template, data)`. `Renderer.pieces(page)` gives what the writer writes
one after the other: the page's text (bytes) and the rows of its big tables, `Block`s — byte
ranges of the buffer the row filler (`markup`) made for every page of a kind, written as they
are (a block of less than `SMALL` bytes is copied into the text around it).

A template is rendered once per *shape* of the data it gets, a skeleton (`Skeleton`): the
data's structure (dicts' keys, lists' lengths, numbers, None, which texts are empty) and the
page's way to the site root kept, each text, markup or block replaced by a token (`MARK`, its
slot's number, `MARK`). A page of that shape is the skeleton's text between the tokens and its
own values in their place, each escaped as the template escapes it (`markupsafe.escape`;
markup and blocks as they are). A token compares as its value: each comparison the template
makes (`title == w.site`) is a guard of the skeleton, and a page whose values compare otherwise
gets a skeleton of its own. A list or tuple given to many pages (the same object: a table's
columns) is in their skeleton as it is. A template shows, joins (`~`), compares and tests its
texts; it does not measure, slice or filter them (a filter that changes a token is refused,
`Renderer.skeleton`).
"""

from __future__ import annotations

import operator
import secrets
from dataclasses import dataclass
from pathlib import Path

import jinja2
from markupsafe import Markup, escape

HERE = Path(__file__).resolve().parent
TABLE_CLOSE = "\n</tbody>\n</table>\n</div>"
MARK = f"\x00{secrets.token_hex(8)}\x00"  # around a slot's number in a skeleton's text


@dataclass(slots=True)
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


def flatten(value, shape: list, values: list) -> None:
    """Append `value`'s shape to `shape` and its texts, markup and blocks (the slots, in
    order) to `values`; the shape tells each slot's kind (`kind_of`)."""
    kind = type(value)
    if kind is str:
        shape.append("t" if value else "")
        values.append(value)
    elif kind is tuple or kind is list:
        shape += (_LIST, kind, len(value))
        for item in value:
            if type(item) is str:  # (the most common items, walked here: texts, pairs of texts)
                shape.append("t" if item else "")
                values.append(item)
            elif type(item) is tuple and len(item) == 2 and type(item[0]) is type(item[1]) is str:
                shape += (_LIST, tuple, 2, "t" if item[0] else "", "t" if item[1] else "")
                values += item
            else:
                flatten(item, shape, values)
    elif kind is dict:
        shape += (_DICT, tuple(value))
        for item in value.values():
            flatten(item, shape, values)
    elif kind is Block:
        shape.append("b")
        values.append(value)
    elif hasattr(value, "__html__"):
        shape.append("m" if value else "M")
        values.append(value)
    elif value is None or kind is bool:
        shape.append(value)
    elif kind is int:
        shape += (_OTHER, kind, value)
    else:  # another value the template shows as it is: by its text (0.0 ≠ -0.0, NaN = NaN)
        shape += (_OTHER, kind, str(value))


def kind_of(value) -> int:
    """How a slot's value is shown (`TEXT`, `MARKUP`, `BLOCK`)."""
    if type(value) is Block:
        return BLOCK
    return TEXT if type(value) is str else MARKUP


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


def with_tokens(value, guards: list, count: list):
    """`value` (as `flatten` walks it) with each slot's value replaced by its token."""
    kind = type(value)
    if kind is tuple or kind is list:
        return kind(with_tokens(item, guards, count) for item in value)
    if kind is dict:
        return {k: with_tokens(v, guards, count) for k, v in value.items()}
    if kind is str or kind is Block or hasattr(value, "__html__"):
        slot = count[0]
        count[0] += 1
        return (_Text if kind is str else _Markup)(slot, value, guards)
    return value


class Skeleton:
    """A template rendered with tokens, as pieces to fill: each a text with `%s` where its
    slots go (`%` doubled elsewhere), its slots' numbers and kinds, and the block after it
    (a slot's number, or None at the end); `guards` (slot, other slot or None, value, result):
    the comparisons of the values made while rendering it, which a page's values must give
    alike."""

    def __init__(self, text: str, kinds: list, guards: list):
        split = text.split(MARK)
        if len(split) % 2 == 0 or not all(p.isdigit() for p in split[1::2]):
            raise ValueError("a template changes a value's token (a filter on a value?)")
        self.guards = guards
        self.pieces: list[tuple[str, tuple, tuple, int | None]] = []
        literal: list = []
        slots: list = []
        for i, part in enumerate(split):
            if i % 2 == 0:
                literal.append(part)
                continue
            slot = int(part)
            if kinds[slot] == BLOCK:
                self._piece(literal, slots, slot)
                literal, slots = [], []
            else:
                slots.append((slot, kinds[slot] == TEXT))
        self._piece(literal, slots, None)

    def _piece(self, literal: list, slots: list, block: int | None) -> None:
        """A piece: its texts around its slots (a format), the slots, the block after it."""
        if slots:
            text = "%s".join(part.replace("%", "%%") for part in literal)
        else:
            text = literal[0].encode()
        at = tuple(slot for slot, _ in slots)
        escape_it = tuple(text for _, text in slots)
        if all(escape_it):  # (the most common piece: only texts, no Python step per slot)
            at = operator.itemgetter(*at, *at[:1]) if at else None  # (a tuple even for one)
            escape_it = len(slots)
        self.pieces.append((text, at, escape_it, block))

    def holds(self, values: list) -> bool:
        for slot, other, value, result in self.guards:
            if (values[slot] == (value if other is None else values[other])) != result:
                return False
        return True

    def fill(self, values: list, escaped: Escaped) -> list:
        """The page: its text as bytes and its blocks' memory views, in order; a block of
        fewer than `SMALL` bytes is copied into the text around it (fewer pieces to hash and
        write)."""
        out: list = []
        run: list = []  # bytes and small blocks, joined into one piece
        escape = escaped.__getitem__
        for text, at, escape_it, block in self.pieces:
            if at is None:
                run.append(text)
            elif type(escape_it) is int:
                shown = tuple(map(escape, at(values)[:escape_it]))
                run.append((text % shown).encode())
            else:
                shown = tuple(
                    [
                        escape(values[s]) if e else values[s].__html__()
                        for s, e in zip(at, escape_it, strict=True)
                    ]
                )
                run.append((text % shown).encode())
            if block is not None:
                view = values[block].view
                if len(view) < SMALL:
                    run.append(view)
                else:
                    out += (b"".join(run), view)
                    run = []
        out.append(b"".join(run))
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
SMALL = 8192  # bytes of a block copied into the text around it
SHARED = 64  # pages given a list before it is shown in their skeleton
MACROS = ("head_links", "site_header", "navigation", "table_open", "thead", "legend", "crumb_links")


class Renderer:
    """The templates in one language, with the site's navigation (label, site path), and the
    skeletons rendered so far (by template and shape)."""

    def __init__(self, lang: str, words: dict, nav: list | tuple = (), shared: int = SHARED):
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
        self.shared = shared  # pages given a list before it is shown in their skeleton
        self._caches()

    def sibling(self) -> Renderer:
        """A renderer of the same templates (compiled once) with caches of its own: one per
        thread."""
        other = object.__new__(Renderer)
        other.env, other.shared = self.env, self.shared
        other._caches()
        return other

    def _caches(self) -> None:
        self._escaped = Escaped()
        self._skeletons: dict[tuple, list[Skeleton]] = {}
        self._seen: dict[int, list] = {}  # id -> [a list or tuple, the pages given it so far]
        self._shared: dict[int, tuple] = {}  # id -> (a list or tuple given to several, marker)

    def pieces(self, page: Page) -> list:
        """The page as bytes and the memory views of its blocks, in order."""
        root = root_of(page.path)  # (in the shape: a page's links are shown with it)
        data = page.data
        shape: list = [page.template, root, tuple(data)]
        values: list = []
        shared: list = []
        for name, value in data.items():
            kind = type(value)
            if kind is str:  # (the most common values: taken here, as `flatten` takes them)
                shape.append("t" if value else "")
                values.append(value)
            elif kind is Block:
                shape.append("b")
                values.append(value)
            elif value is None:
                shape.append(None)
            elif kind is tuple or kind is list:
                marker = self._shared_marker(value)
                if marker is None:
                    flatten(value, shape, values)
                else:
                    shape.append(marker)
                    shared.append(name)
            else:
                flatten(value, shape, values)
        skeletons = self._skeletons.setdefault(tuple(shape), [])
        for skeleton in skeletons:
            if skeleton.holds(values):
                return skeleton.fill(values, self._escaped)
        kinds = [kind_of(v) for v in values]
        skeleton = self.skeleton(page.template, {"root": root, **data}, kinds, shared + ["root"])
        skeletons.append(skeleton)
        return skeleton.fill(values, self._escaped)

    def _shared_marker(self, value) -> tuple | None:
        """For a list or tuple given to many pages (`shared` at least: their columns,
        breadcrumbs, a chart's legend, the same object), a marker of that object in the shape:
        the skeleton shows its values themselves (page data is not changed once made); else
        None. (A list a few pages share, an event's breadcrumbs, is shown as the others are:
        a skeleton of its own would cost more than it saves.)"""
        key = id(value)
        known = self._shared.get(key)
        if known is not None and known[0] is value:
            return known[1]
        seen = self._seen.get(key)
        if seen is None or seen[0] is not value:
            if len(self._seen) >= SEEN:
                self._seen.clear()
            self._seen[key] = [value, 1]
            return None
        seen[1] += 1
        if seen[1] < self.shared:
            return None
        del self._seen[key]
        known = self._shared[key] = (value, ("shared", len(self._shared)))
        return known[1]

    def skeleton(self, template: str, data: dict, kinds: list, shared: list) -> Skeleton:
        """`template` rendered with `data`'s tokens (but the `shared` values), split at them."""
        guards: list = []
        count = [0]
        given = {
            name: value if name in shared else with_tokens(value, guards, count)
            for name, value in data.items()
        }
        try:
            return Skeleton(self.env.get_template(template).render(given), kinds, guards)
        except ValueError as err:
            raise ValueError(f"{template}: {err}") from None

    def text(self, page: Page) -> str:
        return b"".join(bytes(p) for p in self.pieces(page)).decode()
