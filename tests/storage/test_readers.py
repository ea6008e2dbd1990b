"""Readers during nightlies: a connection opened before two nightlies answers during and after
both, and reads in a loop see the publication before or after a run, never parts of both."""

from __future__ import annotations

import shutil
import threading

import duckdb

from flows.nightly import nightly_run
from flows.settings import Settings
from flows.tools.query import run_sql

# one statement reading tables written by every stage of a night: ingest (bronze, ingest log,
# quarantine), deal-level scoring (silver), history (gold)
FINGERPRINT = """
select (select count(*) from simultane_deal) as bronze,
       (select count(*) from ingest_log) as logged,
       (select count(*) from quarantine) as quarantined,
       (select count(*) from simultane_deal_results) as silver,
       (select count(*) from ff_matches) as matches,
       (select count(*) from simultane_blocks) as gold,
       (select count(*) from bridge_standings) as standings
"""


def test_readers_see_one_publication_at_a_time_and_old_connections_keep_working(states, tmp_path):
    before_root, landing, _, _ = states
    root = tmp_path / "wh"
    shutil.copytree(before_root, root, symlinks=True)
    before = run_sql(root, FINGERPRINT).row(0)
    old = duckdb.connect(str(root / "duplirank.duckdb"), read_only=True)
    old.execute("set file_search_path = $p", {"p": str(root)})
    assert old.execute(FINGERPRINT).fetchall()[0] == before

    seen: set[tuple] = set()
    errors: list[str] = []
    stop = threading.Event()

    def read_in_a_loop() -> None:
        while not stop.is_set():
            try:
                seen.add(run_sql(root, FINGERPRINT).row(0))
                seen.add(old.execute(FINGERPRINT).fetchall()[0])
            except Exception as err:  # noqa: BLE001 — every error is a failure here
                errors.append(repr(err))

    reader = threading.Thread(target=read_in_a_loop)
    reader.start()
    try:
        nightly_run(Settings(warehouse=root, landing=landing))
        after = run_sql(root, FINGERPRINT).row(0)
        nightly_run(Settings(warehouse=root, landing=landing, retention_days=7))  # nothing new
    finally:
        stop.set()
        reader.join()
    assert errors == [], sorted({e[:300] for e in errors})[:5]
    assert before != after and seen <= {before, after}, seen
    assert after in seen  # the loop really ran across the swap
    assert old.execute(FINGERPRINT).fetchall()[0] == before  # its snapshot, still readable
    old.close()


def test_a_swap_while_a_reader_opens_gives_it_one_whole_publication(states, tmp_path, monkeypatch):
    """The pointer read first decides every later read of the opening reader: a run swapping
    it in between (made deterministic: the pointer moves right after the first read) changes
    nothing for that reader."""
    from flows.storage.local import LocalStore

    _, landing, _, _ = states
    root = tmp_path / "wh"
    shutil.copytree(states[0], root, symlinks=True)
    before = run_sql(root, FINGERPRINT).row(0)
    old = LocalStore(root).read_pointer()
    nightly_run(Settings(warehouse=root, landing=landing))
    new = LocalStore(root).read_pointer()
    after = run_sql(root, FINGERPRINT).row(0)
    assert old != new and before != after

    reads = []

    def swapped_after_the_first_read(self):
        reads.append(1)
        return old if len(reads) == 1 else new

    monkeypatch.setattr(LocalStore, "read_pointer", swapped_after_the_first_read)
    assert run_sql(root, FINGERPRINT).row(0) == before
