"""Staged operations: what a run changes in the published state, as typed values.

A run writes its data files at once (under new names, invisible until published) and stages
operations that say what the next manifest lists: `PutFile` (a partition's files replaced by
one), `AddFile` (a file added to a partition), `RemovePartition`, `MarkDirty` and `MarkClean`
(months whose results must be rebuilt, or have been). They are frozen dataclasses (plain data,
so tasks running elsewhere return theirs and the run merges them before one commit);
`Operation` is their union, and `manifest.apply_ops` matches on the class: a misspelt field is
a TypeError when the operation is made, never an operation silently ignored.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class StagedFile:
    """A data file a run wrote, as the manifest lists it."""

    path: str  # relative to the warehouse: `<layer>/<table>/<partition>/<run id>-….parquet`
    sha256: str
    bytes: int

    def entry(self) -> dict:
        """The manifest's entry of the file."""
        return {"path": self.path, "sha256": self.sha256, "bytes": self.bytes}


@dataclass(frozen=True)
class PutFile:
    """The files of a partition of a table replaced by one file."""

    layer: str
    table: str
    partition: str
    file: StagedFile


@dataclass(frozen=True)
class AddFile:
    """A file added to a partition of a table (bronze deliveries, a month written in batches)."""

    layer: str
    table: str
    partition: str
    file: StagedFile


@dataclass(frozen=True)
class RemovePartition:
    """A partition of a table unpublished (it no longer has rows)."""

    table: str
    partition: str


@dataclass(frozen=True)
class MarkDirty:
    """Months of a competition whose bronze changed: their results must be rebuilt."""

    competition: str
    months: tuple[str, ...]


@dataclass(frozen=True)
class MarkClean:
    """Months of a competition rebuilt by this run: no longer dirty."""

    competition: str
    months: tuple[str, ...]


TableOperation = PutFile | AddFile | RemovePartition  # what changes a table's files
Operation = TableOperation | MarkDirty | MarkClean


def touching(ops: Iterable[Operation], table: str) -> list[TableOperation]:
    """The operations of `ops` that change the files of `table`."""
    return [op for op in ops if isinstance(op, TableOperation) and op.table == table]
