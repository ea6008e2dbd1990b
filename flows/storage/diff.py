"""What changed between two publications, table by table (`duplirank diff N M`).

Only the partitions whose files differ between the two manifests are read (a table whose files
are the same is unchanged). Rows are matched by the table's key (`key` in `sql/catalog.toml`):
a key only in the second is added, only in the first removed, in both with another value in
some column changed — with the value before and after of each changed column. A table without a
key is compared by whole rows (added and removed only).
"""

from __future__ import annotations

import dataclasses

import polars as pl

from flows.storage import catalog
from flows.storage import manifest as mf
from flows.storage.warehouse import Warehouse


@dataclasses.dataclass
class TableDiff:
    table: str
    key: tuple[str, ...]
    added: pl.DataFrame  # the rows of the second publication only
    removed: pl.DataFrame  # the rows of the first publication only
    changed: pl.DataFrame  # key, column, before, after: one row per changed value
    changed_ids: pl.DataFrame  # the key (and month) of each changed row

    @property
    def changed_rows(self) -> int:
        return self.changed_ids.height

    @property
    def empty(self) -> bool:
        return not (self.added.height or self.removed.height or self.changed_rows)

    def rows(self) -> pl.DataFrame:
        """Every difference as text: change (added, removed, changed), the key (or, without
        one, the row as JSON), column, before, after."""
        key = list(self.key)

        def whole(frame: pl.DataFrame, change: str) -> pl.DataFrame:
            ids = frame.select(key) if key else frame.select(_json_row(frame.columns))
            return ids.with_columns(
                pl.lit(change).alias("change"),
                pl.lit(None, pl.String).alias("column"),
                pl.lit(None, pl.String).alias("before"),
                pl.lit(None, pl.String).alias("after"),
            )

        parts = [whole(self.removed, "removed"), whole(self.added, "added")]
        if self.changed.height:
            parts.append(self.changed.with_columns(pl.lit("changed").alias("change")))
        frame = pl.concat([_text(p) for p in parts], how="diagonal")
        ids = key or ["row"]
        return frame.select(["change", *ids, "column", "before", "after"])

    def months(self) -> dict[str, int]:
        """Rows added, removed or changed per month (tables with a `month` column)."""
        counts: dict[str, int] = {}
        for frame in (self.added, self.removed, self.changed_ids):
            if "month" not in frame.columns:
                continue
            for month, n in frame.group_by("month").len().iter_rows():
                if month is not None:
                    counts[month] = counts.get(month, 0) + n
        return counts


def _json_row(columns: list[str]) -> pl.Expr:
    return pl.struct(columns).struct.json_encode().alias("row")


def _text(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(
        pl.col(c).cast(pl.String) for c, t in frame.schema.items() if t != pl.String
    )


def _as_text(column: str, dtype) -> pl.Expr:
    """A value as text; a nested one (list, struct) as JSON."""
    if dtype.is_nested():
        return pl.struct(pl.col(column).alias("v")).struct.json_encode().str.slice(5).str.head(-1)
    return pl.col(column).cast(pl.String)


def diff(
    wh: Warehouse, first: str, second: str, tables: list[str] | None = None
) -> list[TableDiff]:
    """The differences of each table from publication folder `first` to `second`."""
    location = wh.store.url if wh.root is None else wh.root
    storage = getattr(wh.store, "options", None)
    old = Warehouse(location, storage, pinned=first)
    new = Warehouse(location, storage, pinned=second)
    changed = mf.changed_partitions(old.manifest(), new.manifest())
    documented = catalog.tables()
    out = []
    for table in sorted(changed):
        if tables is not None and table not in tables:
            continue
        parts = [p for p in changed[table] if not p.startswith("_schema")]
        files_old = [e for e in old.entries(table, parts) if e["path"].endswith(".parquet")]
        files_new = [e for e in new.entries(table, parts) if e["path"].endswith(".parquet")]
        if not files_old and not files_new:
            continue
        before = _read(old, table, parts, files_old)
        after = _read(new, table, parts, files_new)
        if before is None:
            before = after.clear()
        if after is None:
            after = before.clear()
        doc = documented.get(table)
        key = tuple(doc.key) if doc and doc.key else ()
        result = compare(table, before, after, key)
        if not result.empty:
            out.append(result)
    return out


def _read(wh: Warehouse, table: str, parts: list[str], entries: list[dict]):
    if not entries:
        return None
    return wh.scan(table, parts).collect()


def compare(
    table: str, before: pl.DataFrame, after: pl.DataFrame, key: tuple[str, ...]
) -> TableDiff:
    """The differences between two versions of a table's rows, matched by `key`."""
    common = [c for c in after.columns if c in before.columns]
    before, after = before.select(common), after.select(common)
    if (
        not key
        or any(k not in common for k in key)
        or not (_unique(before, key) and _unique(after, key))
    ):
        # no key, or one that does not identify a row here: whole rows are compared
        added = after.join(before, on=common, how="anti", nulls_equal=True)
        removed = before.join(after, on=common, how="anti", nulls_equal=True)
        return TableDiff(table, (), added, removed, pl.DataFrame(), pl.DataFrame())
    keys = list(key)
    added = after.join(before.select(keys), on=keys, how="anti", nulls_equal=True)
    removed = before.join(after.select(keys), on=keys, how="anti", nulls_equal=True)
    both = before.join(after, on=keys, how="inner", suffix="__after", nulls_equal=True)
    values = [c for c in common if c not in key]
    differs = {c: pl.col(c).ne_missing(pl.col(f"{c}__after")) for c in values}
    changed_rows = (
        both.filter(pl.any_horizontal(list(differs.values()))) if values else both.clear()
    )
    cells = [
        changed_rows.filter(differs[c]).select(
            *keys,
            pl.lit(c).alias("column"),
            _as_text(c, before.schema[c]).alias("before"),
            _as_text(f"{c}__after", after.schema[c]).alias("after"),
        )
        for c in values
    ]
    changed = (
        pl.concat(cells)
        if cells
        else pl.DataFrame(schema={**{k: before.schema[k] for k in keys}, "column": pl.String})
    )
    ids = keys + (["month"] if "month" in common and "month" not in keys else [])
    return TableDiff(table, key, added, removed, changed, changed_rows.select(ids))


def _unique(frame: pl.DataFrame, key: tuple[str, ...]) -> bool:
    return frame.select(list(key)).is_unique().all()


def published_months(diffs: list[TableDiff]) -> dict[str, int]:
    """Rows added, removed or changed per month, over every table."""
    total: dict[str, int] = {}
    for table_diff in diffs:
        for month, n in table_diff.months().items():
            total[month] = total.get(month, 0) + n
    return dict(sorted(total.items()))
