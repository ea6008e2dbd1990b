"""Ctrl-C in the middle of a file: nothing is published, no reader thread is left behind,
and the next run ingests everything."""

from __future__ import annotations

import pytest

from flows.ingest.validate import Validator

from .cases import assert_readers_free, assert_total, deal, dumps, run, table, write


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
    assert_readers_free()  # the reader threads stopped reading that file
    wh_root = tmp_path / "wh"
    assert not (wh_root / "manifest.json").exists()  # nothing published
    monkeypatch.setattr(Validator, "finish", real)
    _, wh = run(tmp_path, path, ingest={"chunk_bytes": 4096})
    assert table(wh, "simultane_deal").height == 400
    assert_total(wh, path)
