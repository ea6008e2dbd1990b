"""What the steps of one ingest run share (`Context`), whatever reads the file: the JSON
Lines reader (flows/ingest/run.py), the PBN and USEBIO readers, the replay of quarantine."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Protocol

from flows.ingest.batch import Batches
from flows.ingest.landing import Input
from flows.ingest.log import FileReport, LogState, read_state
from flows.ingest.options import IngestOptions, Window
from flows.ingest.stage import Sink
from flows.ingest.validate import Validator
from flows.storage.warehouse import Transaction, Warehouse

Progress = Callable[[int, int], None]  # (files done, lines read so far)


class ReadAhead(Protocol):
    """An input being read ahead of its turn (flows/ingest/run.py), stopped by `close`."""

    item: Input

    def close(self) -> None: ...


@dataclass
class Context:
    """What the steps of one ingest run share."""

    wh: Warehouse
    tx: Transaction
    opts: IngestOptions
    window: Window
    sink: Sink
    validator: Validator
    state: LogState
    progress: Progress | None = None
    lines: int = 0
    replayed_reports: list[FileReport] = field(default_factory=list)
    batches: Batches | None = None  # small files validated together (`ingest` only)
    upcoming: list[Input] = field(default_factory=list)  # the inputs after the current one
    ahead: ReadAhead | None = None  # the next input, being read already


def open_context(
    wh: Warehouse, tx: Transaction, opts: IngestOptions | None = None, run_date: date | None = None
) -> Context:
    opts = opts or IngestOptions()
    window = Window.around(opts, run_date)
    sink = Sink(wh, tx, datetime.now(UTC))
    return Context(wh, tx, opts, window, sink, Validator(window), read_state(wh))
