"""The landing folder is untrusted: a file is opened once (no link followed, never blocking)
and checked on its descriptor; what changed after the listing is never read. Names are kept
losslessly; a delivery corrected in place under `touch -r` is read again. The swaps happen
between the listing and the opening, through the ingest's own listing (monkeypatched)."""

from __future__ import annotations

import errno
import os
import tempfile
import threading
from pathlib import Path

import polars as pl
import pytest

from flows import cli
from flows.ingest import run as ingest_run
from flows.ingest.names import file_name, file_text
from flows.storage.warehouse import Warehouse

from .cases import accepted, assert_total, deal, dumps, good_file, reasons, run, table, write

SECRET = "root:x:0:0:secret"


def _outside(tmp_path: Path) -> Path:
    """A file outside the landing folder that the ingest must never read."""
    folder = tmp_path / "outside"
    folder.mkdir()
    return write(folder / "secret.jsonl", [dumps({"type": "x", "secret": SECRET})])


def _after_listing(monkeypatch, swap) -> None:
    """Run `swap()` once, right after the ingest lists the landing folder."""
    real = ingest_run.list_inputs

    def listing(*args, **kwargs):
        inputs = real(*args, **kwargs)
        swap()
        return inputs

    monkeypatch.setattr(ingest_run, "list_inputs", listing)


def _nothing_of(wh: Warehouse, text: str) -> None:
    """No published table holds `text`, and no delivery's bytes were kept."""
    for name in ("quarantine", "simultane_deal"):
        rows = table(wh, name)
        if rows.height:
            assert not rows.select(pl.all().cast(pl.String).str.contains(text).any()).row(0)[0]
            assert not any(text in str(v) for v in rows.rows())
    assert not wh.files("quarantine_files")


def _status(result, path: Path) -> str:
    return next(f.status for f in result.files if f.file == str(path))


def test_a_file_swapped_for_a_link_outside_after_the_listing_is_never_read(tmp_path, monkeypatch):
    landing = tmp_path / "landing"
    landing.mkdir()
    swapped = write(landing / "a.jsonl", [dumps(deal("ann"))])
    other = good_file(landing, "b.jsonl")
    secret = _outside(tmp_path)

    def swap():
        swapped.unlink()
        swapped.symlink_to(secret)

    _after_listing(monkeypatch, swap)
    result, wh = run(tmp_path, landing)
    assert _status(result, swapped) == "error: changed after the listing (a symlink now); not read"
    _nothing_of(wh, SECRET)
    assert accepted(wh, "simultane_deal", swapped) == []
    assert accepted(wh, "simultane_deal", other) == [1, 2]
    assert_total(wh, other)
    monkeypatch.undo()  # the next night lists the link as what it is
    result, wh = run(tmp_path, landing)
    assert _status(result, swapped) == "refused: symlink outside the landing folder"
    _nothing_of(wh, SECRET)
    log = table(wh, "ingest_log").filter(pl.col("file") == str(swapped)).sort("ingested_at")
    assert log["status"].to_list() == [
        "error: changed after the listing (a symlink now); not read",
        "refused: symlink outside the landing folder",
    ]


def test_a_link_inside_swapped_to_lead_outside_reads_the_file_listed(tmp_path, monkeypatch):
    """A symlink to a file of the landing is opened as that file (listed through the link):
    re-pointing the link outside after the listing changes nothing that is read."""
    landing = tmp_path / "landing"
    landing.mkdir()
    target = write(landing / "a.jsonl", [dumps(deal("ann"))])
    link = landing / "z.jsonl"
    link.symlink_to(target)
    secret = _outside(tmp_path)

    def swap():
        link.unlink()
        link.symlink_to(secret)

    _after_listing(monkeypatch, swap)
    result, wh = run(tmp_path, landing)
    assert [_status(result, target), _status(result, link)] == ["ingested", "already_ingested"]
    _nothing_of(wh, SECRET)


def test_a_file_swapped_for_a_fifo_after_the_listing_neither_hangs_nor_holds_the_lock(
    tmp_path, monkeypatch
):
    landing = tmp_path / "landing"
    landing.mkdir()
    swapped = write(landing / "a.jsonl", [dumps(deal("ann"))])
    other = good_file(landing, "b.jsonl")

    def swap():
        swapped.unlink()
        os.mkfifo(swapped)

    _after_listing(monkeypatch, swap)
    done: list = []
    worker = threading.Thread(target=lambda: done.append(run(tmp_path, landing)), daemon=True)
    worker.start()
    worker.join(120)
    assert not worker.is_alive(), "the ingest blocked on a FIFO"
    result, wh = done[0]
    assert _status(result, swapped) == "error: changed after the listing (a FIFO now); not read"
    assert accepted(wh, "simultane_deal", other) == [1, 2]
    with wh.store.lock(0):  # released: the next run may start at once
        pass
    monkeypatch.undo()
    result, wh = run(tmp_path, landing)
    assert _status(result, swapped) == "skipped: not a regular file"
    assert accepted(wh, "simultane_deal", swapped) == []


def test_a_file_replaced_by_another_after_the_listing_is_read_next_run(tmp_path, monkeypatch):
    """Not the inode listed (a delivery renamed over the file): not read now, read next run."""
    landing = tmp_path / "landing"
    landing.mkdir()
    replaced = write(landing / "a.jsonl", [dumps(deal("ann"))])

    def swap():
        write(landing / "a.tmp", [dumps(deal("bob"))]).replace(replaced)

    _after_listing(monkeypatch, swap)
    result, wh = run(tmp_path, landing)
    status = "error: changed after the listing (another file now); not read"
    assert _status(result, replaced) == status
    assert accepted(wh, "simultane_deal", replaced) == []
    monkeypatch.undo()
    result, wh = run(tmp_path, landing)
    assert _status(result, replaced) == "ingested"
    assert table(wh, "simultane_deal")["player_id"].to_list() == ["bob"]


def test_a_name_that_is_not_utf8_is_kept_losslessly_and_never_stops_the_night(tmp_path):
    landing = tmp_path / "landing"
    landing.mkdir()
    raw_name = os.fsencode(landing) + b"/bad\xff\xfename.jsonl"
    with open(raw_name, "wb") as out:
        out.write((dumps(deal("ann")) + "\n{bad\n").encode())
    path = Path(os.fsdecode(raw_name))
    other = good_file(landing, "b.jsonl")  # small files: validated together (a batch)
    big = write(landing / "c\\x.jsonl", [dumps(deal(f"p{i}", 1 + i % 2)) for i in range(400)])
    result, wh = run(tmp_path, landing, ingest={"chunk_bytes": 4096})  # c: read alone
    stored = str(landing) + "/bad\\xff\\xfename.jsonl"
    assert file_text(path) == stored and file_name(stored) == raw_name
    assert file_name(file_text(big)) == os.fsencode(big)  # a backslash is doubled
    status = {f.file: f.status for f in result.files}
    assert status == {stored: "ingested", str(other): "ingested", file_text(big): "ingested"}
    log = table(wh, "ingest_log")
    assert sorted(log["file"]) == sorted(status)
    bronze = table(wh, "simultane_deal").filter(pl.col("source_file") == stored)
    assert bronze["line_no"].to_list() == [1]
    rows = table(wh, "quarantine").filter(pl.col("file") == stored)
    assert rows.select("line_no", "reason").rows() == [(2, "invalid JSON")]
    assert len(accepted(wh, "simultane_deal", Path(file_text(big)))) == 400
    result, _ = run(tmp_path, landing)  # known by its stored name: not read again
    assert not any(f.logged for f in result.files)


def test_a_file_corrected_in_place_under_touch_r_is_read_again(tmp_path):
    landing = tmp_path / "landing"
    landing.mkdir()
    path = write(landing / "a.jsonl", [dumps(deal("ann", made=100))])
    _, wh = run(tmp_path, landing)
    before = path.stat()
    with open(path, "r+b") as handle:  # the same size, the same mtime (`touch -r`)
        data = handle.read().replace(b'"points_made": 100', b'"points_made": 200')
        handle.seek(0)
        handle.write(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    result, wh = run(tmp_path, landing)
    assert [(f.status, f.delivery) for f in result.files] == [("ingested", 2)]
    rows = table(wh, "simultane_deal").sort("delivery")
    assert rows.select("delivery", "points_made").rows() == [(1, 100), (2, 200)]
    log = table(wh, "ingest_log").sort("ingested_at")
    assert log.select("ctime_ns", "inode").rows()[-1] == (after.st_ctime_ns, after.st_ino)
    result, _ = run(tmp_path, landing)  # now unchanged: neither read nor logged
    assert not any(f.logged for f in result.files)


def _fail_nth(monkeypatch, owner, name: str, error: BaseException, nth: int = 1) -> list:
    """`owner.name` raising `error` at its `nth` call (the calls made are returned)."""
    real = getattr(owner, name)
    calls: list = []

    def failing(*args, **kwargs):
        calls.append(args)
        if len(calls) == nth:
            raise error
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, failing)
    return calls


def _scratch_parquet_failing(monkeypatch, error: BaseException) -> list:
    """The run's scratch Parquet files (spilled quarantine rows) fail to be written."""
    from flows.ingest import stage

    monkeypatch.setattr(stage, "QUARANTINE_BUFFER", 1)  # every chunk's rejects spilled
    real = pl.DataFrame.write_parquet
    calls: list = []

    def write_parquet(self, path, *args, **kwargs):
        if "duplirank-ingest-" in str(path):
            calls.append(path)
            raise error
        return real(self, path, *args, **kwargs)

    monkeypatch.setattr(pl.DataFrame, "write_parquet", write_parquet)
    return calls


def _copy_failing(monkeypatch, error: BaseException) -> list:
    """The scratch copy of an unreadable delivery's bytes fails to be written."""
    from flows.ingest import stage

    calls: list = []

    def failing_open(path, mode="r", *args, **kwargs):
        calls.append(path)
        if "w" in mode:
            raise error
        return open(path, mode, *args, **kwargs)

    monkeypatch.setattr(stage, "open", failing_open, raising=False)
    return calls


def _publication_failing(monkeypatch, error: BaseException) -> list:
    """Every `fsync` of the publication (its manifest) fails."""
    from flows.storage import warehouse

    real = warehouse.Transaction.commit
    calls: list = []

    def fsync(fd):
        calls.append(fd)
        raise error

    def commit(self):
        with pytest.MonkeyPatch.context() as inner:
            inner.setattr(os, "fsync", fsync)
            return real(self)

    monkeypatch.setattr(warehouse.Transaction, "commit", commit)
    return calls


def _seams():
    import duckdb
    import polars.exceptions as ple

    from flows.ingest import parse, validate
    from flows.storage import warehouse

    full = OSError(errno.ENOSPC, "No space left on device")
    return {
        # a bronze or quarantine file staged in the warehouse (the second: one was staged)
        "staging, Polars' disk full": lambda mp: _fail_nth(
            mp,
            warehouse.Transaction,
            "write",
            ple.ComputeError("parquet: No space left on device (os error 28)"),
            2,
        ),
        "staging, disk full": lambda mp: _fail_nth(mp, warehouse.Transaction, "write", full, 2),
        "staging, quota": lambda mp: _fail_nth(
            mp, warehouse.Transaction, "write", OSError(errno.EDQUOT, "Disk quota exceeded"), 2
        ),
        "staging, permission denied": lambda mp: _fail_nth(
            mp,
            warehouse.Transaction,
            "write",
            ple.ComputeError("failed to create file: Permission denied (os error 13)"),
            2,
        ),
        "staging, out of memory": lambda mp: _fail_nth(
            mp, warehouse.Transaction, "write", MemoryError(), 2
        ),
        "scratch spill, disk full": lambda mp: _scratch_parquet_failing(
            mp, ple.ComputeError("No space left on device (os error 28)")
        ),
        "unreadable delivery's copy, disk full": lambda mp: _copy_failing(mp, full),
        "chunk's memory file, out of memory": lambda mp: _fail_nth(
            mp, parse._Scratch, "write", OSError(errno.ENOMEM, "Cannot allocate memory")
        ),
        "validation, DuckDB out of memory": lambda mp: _fail_nth(
            mp,
            validate,
            "parse_chunk",
            duckdb.OutOfMemoryException(
                "Out of Memory Error: failed to allocate data of size "
                "256.0 KiB (1.0 GiB/1.0 GiB used)"
            ),
        ),
        "validation, Python out of memory": lambda mp: _fail_nth(
            mp, validate.Validator, "finish", MemoryError()
        ),
        "validation, DuckDB's temp disk full": lambda mp: _fail_nth(
            mp,
            validate,
            "parse_chunk",
            duckdb.IOException(
                'IO Error: Could not write file "/tmp/x.tmp": No space left on device'
            ),
        ),
        "publication, disk full": lambda mp: _publication_failing(mp, full),
    }


WORDS = {
    "disk full": "no space left on the device",
    "quota": "disk quota exceeded",
    "permission denied": "permission denied",
    "memory": "out of memory",
    "temp disk full": "no space left on the device",
}


@pytest.mark.parametrize("where", list(_seams()))
def test_a_resource_failure_is_one_line_and_leaves_nothing_staged(
    tmp_path, monkeypatch, capsys, where
):
    """Disk full, quota, memory exhausted, permission denied in any step of an ingest: one
    line, exit code 2, nothing published, the run's staged and scratch files removed by the
    run itself; the next run then ingests every line."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    landing = tmp_path / "landing"
    landing.mkdir()
    wh_path = tmp_path / "wh"
    first = good_file(landing, "0.jsonl")
    argv = ["ingest", str(landing), "--warehouse", str(wh_path), "--quiet"]
    monkeypatch.setenv("DUPLIRANK_INGEST__CHUNK_BYTES", "4096")
    assert cli.main(argv) == 0
    before = sorted(p for p in wh_path.rglob("*") if p.is_file() and p.name != ".lock")
    lines = [dumps(deal(f"p{i:03d}", 1 + i % 2)) for i in range(300)] + ["{bad"]
    big = write(landing / "a.jsonl", lines)  # read alone (more than chunk_bytes / 16)
    broken = write(landing / "c.jsonl", ["{bad", "x"] * 200)  # unreadable: its bytes kept
    small = write(landing / "b.jsonl", [dumps(deal("yan")), dumps(deal("yan", 2))])  # batched
    calls = _seams()[where](monkeypatch)
    capsys.readouterr()
    code = cli.main(argv)
    err = capsys.readouterr().err.strip()
    assert calls, "the failure was never met"
    assert code == 2, err
    words = next(w for k, w in WORDS.items() if where.endswith(k))
    assert len(err.splitlines()) == 1 and words in err, err
    after = sorted(p for p in wh_path.rglob("*") if p.is_file() and p.name != ".lock")
    assert after == before
    assert [p.name for p in scratch.iterdir() if p.name.startswith("duplirank-")] == []
    monkeypatch.undo()
    assert cli.main(argv) == 0
    wh = Warehouse(wh_path)
    assert len(accepted(wh, "simultane_deal", big)) == 300
    assert reasons(wh, big) == [(301, "invalid JSON")]
    assert_total(wh, first, big, broken, small)
    assert len(wh.files("quarantine_files")) == 1


def test_a_landing_folder_that_cannot_be_listed_is_one_line_a_sub_folder_a_status(
    tmp_path, monkeypatch, capsys
):
    """Permission denied on the landing folder: one line, exit code 2, no warehouse left; on a
    sub-folder: an `error:` entry of the log (looked at again next run), the rest ingested."""
    landing = tmp_path / "landing"
    (landing / "locked").mkdir(parents=True)
    write(landing / "locked" / "a.jsonl", [dumps(deal("ann"))])
    other = good_file(landing, "b.jsonl")
    denied: set[Path] = set()
    real = os.walk

    def walk(top, topdown=True, onerror=None, followlinks=False):
        def scandir_refused(path):  # os.walk's own way: onerror, then the folder is skipped
            onerror(PermissionError(errno.EACCES, "Permission denied", str(path)))

        if Path(top) in denied:
            scandir_refused(top)
            return
        for here, dirs, files in real(top, topdown, onerror, followlinks):
            for name in [d for d in dirs if Path(here) / d in denied]:
                dirs.remove(name)
                scandir_refused(Path(here) / name)
            yield here, dirs, files

    monkeypatch.setattr(os, "walk", walk)
    wh_path = tmp_path / "wh"
    argv = ["ingest", str(landing), "--warehouse", str(wh_path), "--quiet"]
    denied.add(landing)
    capsys.readouterr()
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.splitlines() == [
        f"duplirank ingest: error: cannot list the landing folder {landing}: permission denied"
    ]
    assert not wh_path.exists()
    denied.clear()
    denied.add(landing / "locked")
    result, wh = run(tmp_path, landing)
    status = "error: cannot list the folder: Permission denied"
    assert {f.file: f.status for f in result.files} == {
        str(landing / "locked"): status,
        str(other): "ingested",
    }
    assert_total(wh, other)
    denied.clear()  # readable again: read
    result, wh = run(tmp_path, landing)
    assert accepted(wh, "simultane_deal", landing / "locked" / "a.jsonl") == [1]


def test_a_folder_swapped_for_a_link_outside_after_the_listing_is_never_entered(
    tmp_path, monkeypatch
):
    """A sub-folder of the landing replaced by a link to a folder outside holding a file of
    the same name: nothing on the way is followed, the file is never read."""
    landing = tmp_path / "landing"
    (landing / "day").mkdir(parents=True)
    listed = write(landing / "day" / "a.jsonl", [dumps(deal("ann"))])
    other = good_file(landing, "b.jsonl")
    secret = _outside(tmp_path)
    secret.rename(secret.parent / "a.jsonl")

    def swap():
        listed.unlink()
        (landing / "day").rmdir()
        (landing / "day").symlink_to(secret.parent)

    _after_listing(monkeypatch, swap)
    result, wh = run(tmp_path, landing)
    assert _status(result, listed) == "error: changed after the listing (a symlink now); not read"
    _nothing_of(wh, SECRET)
    assert accepted(wh, "simultane_deal", other) == [1, 2]
    assert_total(wh, other)


def test_the_scratch_of_a_run_that_died_is_removed_by_the_next(tmp_path, monkeypatch):
    """A run killed or aborted (a failed allocation ends a process without its clean-up)
    leaves its scratch folder: the next run on the host removes it, never that of a process
    still running nor of another host."""
    import socket
    import subprocess
    import sys

    from flows.ingest import stage

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    host = socket.gethostname()
    dead = scratch / f"duplirank-ingest-{host}-{int(gone.stdout)}-abc_12"
    alive = scratch / f"duplirank-ingest-{host}-{os.getppid()}-def_34"
    elsewhere = scratch / f"duplirank-ingest-{host}-x-{int(gone.stdout)}-ghi_56"
    for folder in (dead, alive, elsewhere):
        folder.mkdir()
        (folder / "quarantine-0.parquet").write_bytes(b"rows")
    landing = tmp_path / "landing"
    landing.mkdir()
    other = good_file(landing, "b.jsonl")
    monkeypatch.setattr(stage, "QUARANTINE_BUFFER", 1)  # this run has a scratch folder too
    write(landing / "a.jsonl", [dumps(deal("ann")), "{bad"])
    _, wh = run(tmp_path, landing)
    assert sorted(p.name for p in scratch.iterdir()) == sorted([alive.name, elsewhere.name])
    assert_total(wh, other, landing / "a.jsonl")
