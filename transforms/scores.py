"""The one contract every game's scoring follows.

    score_<grain>(inputs, opts) -> <Game>Scores(tables, issues)

- `inputs`: the bronze rows the game reads, by record type (`{"ff.match": …, "ff.deal": …}`),
  re-deliveries already resolved;
- `opts`: the game's options object (a frozen dataclass of the spec's **Decisions** with their
  defaults; bridge options are per event, so bridge takes the caller's overrides instead);
- `tables`: each published table the step produces, by its name, as a LazyFrame;
- `issues`: the `data_issues` rows (month, kind, keys, detail) the scoring found.

Entry points: `transforms.simultane.scoring.score_tournaments`,
`transforms.face_a_face.matches.score_matches`, `transforms.bridge.event.score_events`.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl


@dataclass(frozen=True)
class Scores:
    tables: dict[str, pl.LazyFrame]  # published table name -> its rows
    issues: pl.LazyFrame  # data_issues rows

    def collect(self) -> tuple[dict[str, pl.DataFrame], pl.DataFrame]:
        """Every table and the issues, materialised in one pass (shared work computed once)."""
        names = list(self.tables)
        *frames, issues = pl.collect_all([*self.tables.values(), self.issues])
        return dict(zip(names, frames, strict=True)), issues
