"""What a page is before it is rendered, and the published tables the site reads.

`read_tables` reads every table the site needs once (a few columns each, one `collect_all`);
the page builders then group those frames by page. A table that is not published (a warehouse
with no bridge events yet) comes back as None and its competition has no pages.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from flows.errors import UserError
from transforms.bridge.deals import board_deals

ReadTable = Callable[[str], "pl.LazyFrame | pl.DataFrame"]

COLUMNS = {
    "simultane_monthly": ["month", "player_id", "indice", "victoire", "tournaments", "wins",
                          "pct_actuel", "representative", "rank_indice"],
    "simultane_daily": ["date", "month", "player_id", "indice", "victoire", "tournaments",
                        "wins"],
    "simultane_tournament_results": ["tournament_id", "month", "tournament_start", "player_id",
                                     "is_bot", "points", "top", "mp_pct", "deals_played",
                                     "rank", "is_winner", "completed"],
    "simultane_deal_results": ["tournament_id", "deal_no", "player_id", "status", "pct",
                               "is_top", "is_bulle"],
    "simultane_blocks": ["player_id", "block_no", "ended_at", "month", "pct_cumul",
                         "pct_actuel", "k", "representative", "in_window"],
    "ff_monthly_ranking": ["month", "rank", "player_id", "points", "elo", "matches",
                           "attaque_counted", "classique_counted"],
    "ff_matches": ["match_id", "month", "match_type", "player_a", "player_b", "status",
                   "forfeit_by", "mp_a", "mp_b", "outcome_a", "counts_for_ranking",
                   "created_at", "started_at", "elo_a_before", "elo_a_after",
                   "elo_b_before", "elo_b_after", "value_a", "value_b"],
    "ff_deal_results": ["match_id", "deal_no", "role_a", "role_b", "d_a", "d_b",
                        "unfinished_a", "unfinished_b", "mp_a", "mp_b"],
    "ff_elo": ["player_id", "match_id", "ended_at", "elo_seq", "elo_before", "elo_after"],
    "bridge_standings": ["month", "event_id", "section", "field", "pair", "method", "total",
                         "max", "pct", "rank", "imps", "vp", "penalties", "boards", "names"],
    "bridge_board_results": ["month", "event_id", "section", "board", "pair", "direction",
                             "round", "opponent", "contract", "declarer", "result", "score",
                             "score_ns", "mp", "mp_top", "pct", "imp", "adjusted"],
    "bridge_event": ["event_id", "date"],
}  # fmt: skip
# tables the site derives from a published one as it reads it: name -> (source, derivation)
DERIVED: dict[str, tuple[str, Callable[[pl.LazyFrame], pl.LazyFrame]]] = {
    "bridge_deals": ("bridge_result", board_deals),  # one row per board with its deal
}


@dataclass(frozen=True)
class Reuse:
    """A page whose rows have the fingerprint of the previous site's page at the same path,
    in the same context (code, language, settings, navigation): linked, not made again."""

    path: str
    fingerprint: str


class Previous:
    """The previous site: its page hashes, and the fingerprints of its pages' rows when it
    was built in the same context."""

    def __init__(self, folder: Path | None, pages: dict[str, str], fingerprints: dict[str, str]):
        self.folder = folder
        self.pages = pages
        self.fingerprints = fingerprints
        self._prefix = f"{folder}/" if folder is not None else ""  # paths as text: 50 k pages

    def file(self, path: str) -> str:
        return self._prefix + path

    def unchanged(self, path: str, fingerprint: str) -> bool:
        return (
            self.folder is not None
            and self.fingerprints.get(path) == fingerprint
            and path in self.pages
            and os.path.isfile(self._prefix + path)
        )


NO_PREVIOUS = Previous(None, {}, {})


def fingerprints(key: str, *frames: pl.DataFrame) -> pl.DataFrame:
    """key, fingerprint: for each value of `key`, a digest of all the rows of every frame that
    have it (any row order: the wrapping sum of the rows' hashes). Polars' hash is stable
    within one Polars version, which is part of the context the fingerprints are compared in.
    The site reads only the columns it shows (`COLUMNS`): a change the pages do not show does
    not make them again."""
    parts = []
    for i, frame in enumerate(frames):
        parts.append(
            pl.DataFrame({key: frame[key], "_h": frame.hash_rows(seed=i)})
            .group_by(key)
            .agg(pl.col("_h").sum().alias(f"_h{i}"))
        )
    out = parts[0]
    for part in parts[1:]:
        out = out.join(part, on=key, how="full", coalesce=True)
    digest = pl.concat_str(
        [pl.col(f"_h{i}").fill_null(0).cast(pl.String) for i in range(len(frames))],
        separator="-",
    )
    return out.select(key, digest.alias("fingerprint"))


def split_unchanged(
    fps: pl.DataFrame, key: str, page: Callable[[str], str], previous: Previous
) -> tuple[list[Reuse], pl.DataFrame]:
    """The pages of `fps` (key, fingerprint) whose rows did not change, and key, fingerprint
    of the others (to make); `page(key)` is a page's path (`paths.py`)."""
    reuse, todo = [], []
    for value, fingerprint in fps.select(key, "fingerprint").iter_rows():
        path = page(value)
        if previous.unchanged(path, fingerprint):
            reuse.append(Reuse(path, fingerprint))
        else:
            todo.append(value)
    return reuse, fps.filter(pl.col(key).is_in(todo))


def rows_of(
    frame: pl.DataFrame | None, key: str, todo: pl.DataFrame, reuse: list
) -> pl.DataFrame | None:
    """The rows of `frame` whose `key` is one of the pages to make (`todo`): all of them,
    without a copy, when no page is reused."""
    if frame is None or not reuse:
        return frame
    return frame.filter(pl.col(key).is_in(todo[key].implode()))


def read_tables(read_table: ReadTable) -> dict[str, pl.DataFrame | None]:
    """Every table the site shows, read once: {name: frame, or None when not published}."""
    lazy: dict[str, pl.LazyFrame] = {}
    for name, columns in COLUMNS.items():
        try:
            frame = read_table(name)
        except (UserError, KeyError, FileNotFoundError):
            continue
        frame = frame.lazy() if isinstance(frame, pl.DataFrame) else frame
        present = frame.collect_schema().names()
        lazy[name] = frame.select(
            [pl.col(c) if c in present else pl.lit(None).alias(c) for c in columns]
        )
    for name, (source, derive) in DERIVED.items():
        try:
            frame = read_table(source)
        except (UserError, KeyError, FileNotFoundError):
            continue
        lazy[name] = derive(frame.lazy())
    names = list(lazy)
    frames = dict(zip(names, pl.collect_all([lazy[n] for n in names]), strict=True))
    return {name: frames.get(name) for name in [*COLUMNS, *DERIVED]}
