"""Where each page lives: the one place that turns keys (month, player, tournament…) into the
site's relative paths. Links are written relative to the page they are on, so the folder can
be copied to any web server or opened from disk.

Ids come from raw logs: any character may appear. `slug` keeps a safe id (letters, digits,
`_ . -`, not starting with a dot, at most 100 characters) as it is and writes any other one as
`~` and the hex of its UTF-8 bytes, which no safe id can be — or, when that hex would be too
long for a file name (`MAX_SLUG`: two slugs and a few letters stay within the usual 255-byte
limit), as `~~` and the SHA-256 of its bytes (so one long id in the logs never stops a site
build). `slug_expr` is the same rule on a whole column.
"""

from __future__ import annotations

import hashlib
import posixpath
import re

import numpy as np
import polars as pl

SAFE = r"^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,99}$"
MAX_SLUG = 120  # characters of a slug: "paire-<section>-<pair>.html" stays under 255 bytes


def slug(key: str) -> str:
    """A file-name-safe, collision-free form of an id."""
    key = str(key)
    if _SAFE.fullmatch(key):
        return key
    data = key.encode()
    if 1 + 2 * len(data) <= MAX_SLUG:
        return "~" + data.hex()
    return "~~" + hashlib.sha256(data).hexdigest()


_SAFE = re.compile(SAFE)


def slug_expr(column: str | pl.Expr) -> pl.Expr:
    """`slug` of a whole column."""
    expr = pl.col(column) if isinstance(column, str) else column
    return (
        pl.when(expr.str.contains(SAFE))
        .then(expr)
        .when(1 + 2 * expr.str.len_bytes() <= MAX_SLUG)
        .then(pl.concat_str(pl.lit("~"), expr.str.encode("hex")))
        .otherwise(expr.map_batches(_long_slugs, pl.String, is_elementwise=True))
    )


def _long_slugs(values: pl.Series) -> pl.Series:
    """`slug` of the ids too long to be written in hex (rare: only those are looked at)."""
    out: list[str | None] = [None] * len(values)
    long = (1 + 2 * values.str.len_bytes() > MAX_SLUG).fill_null(False).to_numpy()
    for i in np.flatnonzero(long):
        out[i] = slug(values[int(i)])
    return pl.Series(values.name, out, dtype=pl.String)


def section_slug(section: str | None) -> str:
    """A bridge section in page names: nothing when the event has no sections."""
    return "" if section is None else slug(section)


def section_slug_expr(column: str) -> pl.Expr:
    return pl.when(pl.col(column).is_null()).then(pl.lit("")).otherwise(slug_expr(column))


INDEX = "index.html"
CSS = "site.css"
JS = "site.js"


def rel(folder: str, to: str) -> str:
    """The relative way from a page of `folder` (site-relative, "" or ending with "/") to the
    site path `to` (a folder ending with "/", or a file): links are written relative to the
    page, the shortest way ("../joueurs/" from a tournament to a player)."""
    if not folder:
        return to
    way = posixpath.relpath(to, folder)
    return way + "/" if to.endswith("/") and not way.endswith("/") else way


def sim_month(month: str) -> str:
    return f"simultane/{month}/index.html"


def sim_day(day: str) -> str:  # day: YYYY-MM-DD
    return f"simultane/{day[:7]}/{day}.html"


def sim_tournament(tournament_slug: str) -> str:
    return f"simultane/tournois/{tournament_slug}.html"


def sim_player(player_slug: str) -> str:
    return f"simultane/joueurs/{player_slug}.html"


def ff_month(month: str) -> str:
    return f"face-a-face/{month}/index.html"


def ff_month_matches(month: str) -> str:
    return f"face-a-face/{month}/matches.html"


def ff_match_day(day: str) -> str:
    """The matches of a day (YYYY-MM-DD, in the platform's time zone), each a section
    `#m-<match slug>` (`ff_match_anchor`)."""
    return f"face-a-face/matches/{day}.html"


def ff_match_anchor(match_slug: str) -> str:
    return f"m-{match_slug}"


def player_row_anchor_expr(column: str = "player_id") -> pl.Expr:
    """The anchor of a player's row in a monthly ranking: `p-<player slug>`."""
    return pl.concat_str(pl.lit("p-"), slug_expr(column))


def ff_player(player_slug: str) -> str:
    return f"face-a-face/joueurs/{player_slug}.html"


def bridge_month(month: str) -> str:
    return f"bridge/{month}/index.html"


def bridge_event_base(event_slug: str) -> str:
    """Folder of one event's pages in the site (`score --format html` uses "" instead)."""
    return f"bridge/tournois/{event_slug}/"


def bridge_event(base: str) -> str:
    return f"{base}index.html"


def bridge_board(base: str, section_slug: str, board: int) -> str:
    prefix = f"{section_slug}-" if section_slug else ""
    return f"{base}donne-{prefix}{board}.html"


def bridge_pair(base: str, section_slug: str, pair_slug: str) -> str:
    prefix = f"{section_slug}-" if section_slug else ""
    return f"{base}paire-{prefix}{pair_slug}.html"
