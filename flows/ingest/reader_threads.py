"""Iterate in the reader threads of the process: a file is read (bytes, hash, lines) in one,
parsed in another and checked in the third, each a chunk ahead of the next stage and of the
main thread (`Prefetch`; flows/ingest/run.py)."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

_READER: ThreadPoolExecutor | None = None


READER_THREADS = 3  # a file is read, parsed and checked in three stages (`flows.ingest.run`)


def _reader() -> ThreadPoolExecutor:
    """The reader threads of the process: a file is read (bytes, hash, lines) in one, parsed
    in another and checked in the third while the main thread finishes the chunk before
    (`prefetch`es of `prefetch`es). A pool, not a thread per file, which left the allocator's
    per-thread memory behind each time (measured: +3 MB a chunk over a 4 M-line run)."""
    global _READER
    if _READER is None:
        _READER = ThreadPoolExecutor(READER_THREADS, thread_name_prefix="ingest-reader")
    return _READER


class Prefetch:
    """Iterate `items` in a reader thread, `depth` items ahead, started at once (reading the
    next chunk overlaps with parsing this one, and with checking the one before; memory stays
    a few chunks). The task waits in the pool's queue while both threads are busy: the
    reading of the next file starts as soon as a thread is free (`flows.ingest.run`)."""

    def __init__(self, items: Iterator, depth: int = 1):
        self.items = items
        self.slots: queue.Queue = queue.Queue(maxsize=depth)
        self.stop = threading.Event()
        self.finished = False
        self.worker = _reader().submit(self._run)

    def _put(self, item) -> bool:
        while not self.stop.is_set():
            try:
                self.slots.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _run(self) -> None:
        try:
            if self.stop.is_set():
                return
            for item in self.items:
                if not self._put(("item", item)):
                    return
            self._put(("end", None))
        except BaseException as err:  # handed to the consumer, raised there
            self._put(("error", err))
        finally:
            if hasattr(self.items, "close"):
                self.items.close()

    def __iter__(self) -> Prefetch:
        return self

    def __next__(self):
        if self.finished:
            raise StopIteration
        kind, value = self.slots.get()
        if kind == "end":
            self.close()
            raise StopIteration
        if kind == "error":
            self.close()
            raise value
        return value

    def close(self) -> None:
        """Stop the task (at its next item) and wait for it; one not started never runs."""
        if self.finished:
            return
        self.finished = True
        self.stop.set()
        if self.worker.cancel():  # still queued
            if hasattr(self.items, "close"):
                self.items.close()
            return
        self.worker.result()


def prefetch(items: Iterator, depth: int = 1) -> Iterator:
    """`Prefetch` as a generator: closed when the caller stops iterating."""
    ahead = Prefetch(items, depth)
    try:
        yield from ahead
    finally:
        ahead.close()
