"""What every step receives: one context object, and the bronze it reads.

A step is a plain function `(context, key) -> staged operations`: it reads the published state
plus the operations already staged by this run (`context.pending`: e.g. the bronze of this
night's ingest), calls the pure transforms, writes its output files, and returns the
operations that publish them. Nothing here knows about Prefect, so the same steps run in tests,
in a plain script or on a Dask worker (the context is plain data: settings, run id, date, the
pending operations, and the publication the run builds on: a step reads that one, never a newer
one another run may have published since, wherever it runs).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from datetime import date
from functools import cached_property

import polars as pl

from flows.settings import Settings
from flows.storage.operations import Operation, touching
from flows.storage.warehouse import Transaction, Warehouse
from transforms.calendar import RAW_MONTH
from transforms.deliveries import latest_delivery
from transforms.record_types import RECORD_TYPES

COMPETITIONS: dict[str, tuple[str, ...]] = {
    "simultane": ("simultane.deal",),
    "face_a_face": ("ff.match", "ff.deal", "ff.disconnect"),
    "bridge": ("bridge.event", "bridge.result", "bridge.penalty"),
}


@dataclasses.dataclass(frozen=True)
class StepContext:
    settings: Settings
    run_id: str
    as_of: date | None = None
    pending: tuple[Operation, ...] = ()
    base: str | None = None  # the publication the run builds on (when `pinned`)
    pinned: bool = False
    # histories recomputed from their first record (a backfill), not from the state the
    # publication carries as of the first point the run's new data touches (a nightly)
    from_scratch: bool = False

    @cached_property
    def wh(self) -> Warehouse:
        settings = self.settings
        if self.pinned:
            return Warehouse(settings.warehouse, settings.storage, pinned=self.base)
        return Warehouse(settings.warehouse, settings.storage)

    def __getstate__(self) -> dict:
        """Plain data only (sent to Dask workers): the warehouse is opened where it is used."""
        return {k: v for k, v in self.__dict__.items() if k != "wh"}

    def with_pending(self, ops: Iterable[Operation]) -> StepContext:
        return dataclasses.replace(self, pending=tuple(ops))

    def transaction(self) -> Transaction:
        """A transaction for one step's output (its operations join the run's commit)."""
        return Transaction(self.wh, self.run_id, pending=self.pending)

    def bronze(self, record_type: str, partitions: list[str] | None) -> pl.LazyFrame:
        """Bronze rows of some partitions (all re-deliveries, as stored)."""
        keys = None if partitions is None else [f"{RAW_MONTH}={p}" for p in partitions]
        return self.wh.scan(
            bronze_table(record_type),
            keys,
            RECORD_TYPES[record_type].schema(),
            list(self.pending),
        )

    def current(self, record_type: str, partitions: list[str]) -> tuple[pl.LazyFrame, pl.LazyFrame]:
        """Current bronze rows of some partitions (re-deliveries resolved) and the issues of the
        superseded ones."""
        return resolved(self.bronze(record_type, partitions), record_type)


def partition_rows(ctx: StepContext, competition: str, part: str) -> int:
    """The bronze rows of one partition of a competition, as stored (from the files' footers)."""
    return sum(
        ctx.bronze(record_type, [part]).select(pl.len()).collect().item()
        for record_type in COMPETITIONS[competition]
    )


def rescored_partitions(ctx: StepContext, table: str) -> list[str]:
    """The partitions of a table this run has rescored so far (staged in `ctx.pending`)."""
    return sorted(
        {op.partition for op in touching(ctx.pending, table) if not op.partition.startswith("_")}
    )


def partition_spans(
    ctx: StepContext,
    pending: list[Operation] | None,
    table: str,
    span: str,
    schema: dict[str, pl.DataType],
    parts: tuple[str, ...] | None,
    compute: Callable[[str], pl.DataFrame],
) -> pl.DataFrame:
    """The `span` rows (one per partition of `table`: its size and times) of the partitions
    `parts`, or all, in a view (`pending`; None: as published); a partition without a published
    span gets `compute(key)`, from its own rows."""
    wh = ctx.wh
    keys = [k for k in wh.partitions(table, pending) if k.startswith(f"{RAW_MONTH}=")]
    keys = {k for k in keys if parts is None or k in parts}
    known = [k for k in wh.partitions(span, pending) if k in keys]
    frames = [wh.scan(span, known, pending=pending).collect()] if known else []
    frames += [compute(key) for key in sorted(keys - set(known))]
    return pl.concat([f.select(*schema) for f in frames] or [pl.DataFrame(schema=schema)])


def bronze_table(record_type: str) -> str:
    return RECORD_TYPES[record_type].bronze_name


def resolved(frame: pl.LazyFrame, record_type: str) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """(current rows, superseded-record issues), materialised together in one pass.

    Collecting the two halves of `latest_delivery` separately re-enters its cached scan, which
    makes Polars 2.1 panic on multi-file string columns; one `collect_all` avoids it.
    """
    current, superseded = pl.collect_all(list(latest_delivery(frame, record_type)))
    return current.lazy(), superseded.lazy()


COMPACT_FILES = 32  # a bronze partition of more files than this is rewritten as one


def compact_bronze(tx: Transaction, competition: str, part: str) -> None:
    """One file per bronze partition once it holds more than COMPACT_FILES (a file per chunk
    of each delivery): scans and views stay fast, and a nightly does not rewrite the bronze
    it has just written (1 M lines of a first nightly are ~23 files: rewriting them was 0.5 s,
    a sixth of the partition's scoring)."""
    for record_type in COMPETITIONS[competition]:
        tx.compact(
            "bronze",
            bronze_table(record_type),
            f"{RAW_MONTH}={part}",
            max_files=COMPACT_FILES,
            statistics=False,
        )


def buckets(rows: int, batch_rows: int) -> int:
    """How many hash buckets keep each batch under `batch_rows` rows."""
    return max(1, -(-rows // batch_rows))


def in_bucket(column: str, bucket: int, count: int) -> pl.Expr:
    """Rows whose key falls in one of `count` stable hash buckets (all rows when count = 1)."""
    if count == 1:
        return pl.lit(True)
    return pl.col(column).hash(seed=0) % count == bucket
