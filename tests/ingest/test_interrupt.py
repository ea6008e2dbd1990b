"""Ctrl-C in the middle of a file: nothing is published, no reader thread is left behind,
and the next run ingests everything."""

from __future__ import annotations

import threading

import pytest

from flows.ingest import read
from flows.ingest.validate import Validator

from .cases import assert_total, deal, dumps, run, table, write


def test_an_interrupted_run_publishes_nothing_and_the_next_one_everything(tmp_path, monkeypatch):
    path = write(tmp_path / "day.jsonl", [dumps(deal(f"p{i:03d}", 1 + i % 2)) for i in range(400)])
    real = Validator.finish
    calls = []

    def interrupted(self, prepared, chunk, file):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(self, prepared, chunk, file)

    monkeypatch.setattr(Validator, "finish", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, path, ingest={"chunk_bytes": 4096})
    # the reader threads stopped reading that file: all are free for the next one at once
    # (tasks that wait for each other all finish), and there are no others
    threads = read.READER_THREADS
    every = threading.Barrier(threads, timeout=5)
    tasks = [read._reader().submit(every.wait) for _ in range(threads)]
    assert sorted(t.result(timeout=5) for t in tasks) == list(range(threads))
    readers = [t for t in threading.enumerate() if t.name.startswith("ingest-reader")]
    assert len(readers) <= threads
    wh_root = tmp_path / "wh"
    assert not (wh_root / "manifest.json").exists()  # nothing published
    monkeypatch.setattr(Validator, "finish", real)
    _, wh = run(tmp_path, path, ingest={"chunk_bytes": 4096})
    assert table(wh, "simultane_deal").height == 400
    assert_total(wh, path)
