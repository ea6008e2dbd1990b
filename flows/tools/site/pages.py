"""Pages of one kind put together on columns (`Pages`), written as slices of a few buffers.

A kind of page (the players, the tournaments…) is a frame of its pages, one row each (its
path, its title, its fingerprint, the values its small texts need), and a list of *parts*, the
same for every page: text computed on that frame (a heading, a caption, the shell around the
content: `Pages.add`), the rows of a table (`Pages.rows`: each page's byte range of the rows
of every page, `tables.Rows`) or constant text. `Pages.done` gives a `PageSet`: for each page,
a list of byte ranges that `build.write_pages` writes with one `writev`, without making the
page's text at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from flows.tools.site import markup
from flows.tools.site.tables import Rows


@dataclass
class Span:
    """One part of every page of a set: page `i`'s bytes are `view[start[i]:end[i]]`."""

    view: memoryview
    start: list[int]
    end: list[int]
    owner: object = None  # keeps the buffer alive


@dataclass
class PageSet:
    """Pages put together on columns: `paths` (site paths), `parts` (bytes in every page, or a
    `Span`), `fingerprints` (of the rows each page shows, or None)."""

    paths: list[str]
    parts: list[bytes | Span]
    fingerprints: list[str | None]

    def slices(self, i: int) -> list:
        return [p if isinstance(p, bytes) else p.view[p.start[i] : p.end[i]] for p in self.parts]

    def content(self, i: int) -> bytes:
        return b"".join(bytes(s) for s in self.slices(i))


@dataclass
class Pages:
    """A builder of a `PageSet` over `frame` (one row per page, with `path` and, optionally,
    `fingerprint`)."""

    frame: pl.DataFrame
    parts: list[bytes | Span] = field(default_factory=list)
    _pending: list = field(default_factory=list)  # template items not yet made

    def add(self, *items) -> Pages:
        """Text of each page: strings (the same in every page) and expressions of the pages'
        frame (`markup` items: computed on the frame, page by page)."""
        self._pending += items
        return self

    def rows(self, rows: Rows, on: str | list[str], before: str = "", after: str = "",
             missing: str | None = None) -> Pages:  # fmt: skip
        """Each page's rows of `rows`, matched on the key columns `on` (the same names in both
        frames), between `before` and `after`; a page with no row gets `missing` instead of
        all three when given (else the empty table)."""
        on = [on] if isinstance(on, str) else on
        ranges = self.frame.select(on).join(rows.ranges, on=on, how="left", nulls_equal=True,
                                            maintain_order="left")  # fmt: skip
        has = ranges["_s"].is_not_null()
        if missing is None:
            self.add(before)
        else:
            self.add(pl.when(pl.lit(has)).then(pl.lit(before)).otherwise(pl.lit(missing)))
        self._flush()
        start = ranges["_s"].fill_null(0).to_list()
        end = ranges["_e"].fill_null(0).to_list()
        self.parts.append(Span(rows.joined.view, start, end, rows.joined.data))
        if missing is None:
            self.add(after)
        else:
            self.add(pl.when(pl.lit(has)).then(pl.lit(after)).otherwise(pl.lit("")))
        return self

    def _flush(self) -> None:
        items, self._pending = self._pending, []
        if not items:
            return
        if all(isinstance(i, str) for i in items):
            if "".join(items):
                self.parts.append("".join(items).encode())
            return
        made = self.frame.select(
            pl.concat_str(
                [pl.lit(i) if isinstance(i, str) else i for i in items], ignore_nulls=True
            )
        ).to_series()
        if len(made) != self.frame.height:  # constant expressions only: the same in every page
            self.parts.append((made[0] or "").encode())
            return
        joined = markup.texts(made)
        self.parts.append(Span(joined.view, joined.starts().tolist(), joined.ends.tolist(),
                               joined.data))  # fmt: skip

    def done(self) -> PageSet:
        self._flush()
        parts: list[bytes | Span] = []
        for part in self.parts:  # constant text next to constant text: one part
            if isinstance(part, bytes) and parts and isinstance(parts[-1], bytes):
                parts[-1] += part
            else:
                parts.append(part)
        fingerprints = (
            self.frame["fingerprint"].to_list() if "fingerprint" in self.frame.columns
            else [None] * self.frame.height
        )  # fmt: skip
        return PageSet(self.frame["path"].to_list(), parts, fingerprints)
