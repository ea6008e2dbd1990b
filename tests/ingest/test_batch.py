"""Small files validated together (`flows/ingest/batch.py`): each file keeps its own line
numbers, duplicates, reasons and counts — the tables are those of files validated one by one."""

from __future__ import annotations

import gzip

import polars as pl
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from flows.ingest.batch import Batches
from flows.ingest.validate import Validator

from .cases import (
    assert_total,
    deal,
    dumps,
    event,
    ff_deal,
    match,
    mutated,
    reasons,
    result,
    run,
    table,
    write,
)

TABLES = ("simultane_deal", "ff_match", "ff_deal", "bridge_event", "bridge_result",
          "bridge_penalty", "quarantine", "ingest_log")  # fmt: skip
RUN_COLUMNS = ("run_id", "ingested_at", "logged_at")


@pytest.fixture
def checks(monkeypatch) -> list[int]:
    """The number of lines of every chunk validated."""
    sizes: list[int] = []
    finish = Validator.finish

    def counted(self, prepared, chunk, file):
        sizes.append(len(chunk.line_no))
        return finish(self, prepared, chunk, file)

    monkeypatch.setattr(Validator, "finish", counted)
    return sizes


def _tables(wh) -> dict[str, pl.DataFrame]:
    out = {}
    for name in TABLES:
        rows = table(wh, name)
        if rows.height:
            rows = rows.drop([c for c in RUN_COLUMNS if c in rows.columns])
            out[name] = rows.sort(rows.columns, nulls_last=True)
    return out


def _alone_and_batched(tmp_path, paths, monkeypatch):
    """The tables of a run with files validated one by one, then of one with batches."""
    with monkeypatch.context() as m:
        m.setattr(Batches, "takes", lambda self, size: False)
        _, alone = run(tmp_path / "alone", *paths)
    _, batched = run(tmp_path / "batched", *paths)
    return _tables(alone), _tables(batched), batched


def test_small_files_are_validated_as_one_chunk_each_with_its_own_lines(tmp_path, checks):
    landing = tmp_path / "landing"
    landing.mkdir()
    same = dumps(deal("ann"))
    a = write(landing / "a.jsonl", [same, same, dumps(deal("ann", made=90)), "{oops"])
    b = write(landing / "b.jsonl", [same, "{oops", dumps(ff_deal("m9"))])
    c = write(landing / "c.jsonl", [dumps(match("m9")), dumps(ff_deal("m9", 2)), "{oops"])
    _, wh = run(tmp_path, landing)
    assert checks == [10]  # three files, one chunk
    assert reasons(wh, a) == [
        (2, "duplicate of line 1"),
        (3, "conflicting duplicate of line 1 (same tournament_id, deal_no, player_id)"),
        (4, "invalid JSON"),
    ]
    assert reasons(wh, b) == [(2, "invalid JSON")]  # line 1 is no copy: a's line 1 is a's
    assert reasons(wh, c) == [(3, "invalid JSON")]  # `{oops` again, but in another file
    assert sorted(table(wh, "ff_deal")["deal_no"]) == [1, 2]  # b's child finds c's match
    bronze = table(wh, "simultane_deal").sort("source_file")
    assert bronze.select("source_file", "line_no").rows() == [(str(a), 1), (str(b), 1)]
    assert table(wh, "ff_match")["delivery"].to_list() == [3]  # c is the third delivery
    assert_total(wh, a, b, c)


def test_a_small_file_that_is_no_plain_utf8_chunk_is_validated_alone(tmp_path, checks):
    landing = tmp_path / "landing"
    landing.mkdir()
    write(landing / "a.jsonl", [dumps(deal("ann"))])
    (landing / "b.jsonl").write_bytes((dumps(deal("bob")) + "\n").encode("utf-16"))
    write(landing / "c.jsonl.gz", [dumps(deal("cy"))], gz=True)
    cut = gzip.compress("".join(dumps(deal(f"p{n}")) + "\n" for n in range(50)).encode())
    (landing / "d.jsonl.gz").write_bytes(cut[: len(cut) // 2])
    write(landing / "e.jsonl", [dumps(deal("eve"))])
    _, wh = run(tmp_path, landing)
    assert len(checks) == 3 and 3 in checks  # b and d (cut) alone; a, c and e together
    assert {"ann", "bob", "cy", "eve"} <= set(table(wh, "simultane_deal")["player_id"])
    assert reasons(wh, landing / "d.jsonl.gz")[-1][1].startswith("truncated gzip")
    assert_total(wh, *(landing / n for n in ("a.jsonl", "b.jsonl", "c.jsonl.gz", "e.jsonl")))


def test_a_batch_is_validated_when_it_holds_a_chunk(tmp_path, checks):
    landing = tmp_path / "landing"
    landing.mkdir()
    for n in range(40):
        write(landing / f"f{n:02}.jsonl", [dumps(deal(f"p{n}", d)) for d in (1, 2)])
    _, wh = run(tmp_path, landing, ingest={"chunk_bytes": 16 * 1024})  # files of ~0.9 KiB
    assert len(checks) > 1 and sum(checks) == 80
    assert max(checks) < 80
    assert table(wh, "simultane_deal").height == 80


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    files=st.lists(
        st.tuples(
            st.lists(
                st.one_of(
                    mutated(),
                    st.sampled_from(
                        [
                            dumps(deal("ann")).encode(),
                            dumps(event()).encode(),
                            dumps(result()).encode(),
                            dumps(match()).encode(),
                            dumps(ff_deal()).encode(),
                        ]
                    ),
                ),  # copies across files
                min_size=1,
                max_size=12,
            ),
            st.booleans(),  # gzipped
        ),
        min_size=2,
        max_size=6,
    )
)
def test_batched_tables_are_those_of_files_read_one_by_one(tmp_path_factory, monkeypatch, files):
    tmp_path = tmp_path_factory.mktemp("batch")
    landing = tmp_path / "landing"
    landing.mkdir()
    for n, (lines, gz) in enumerate(files):
        # a plain file starting with the gzip magic is read as gzip (by design, tested in
        # test_bytes): not a premise of this test
        assume(gz or not lines[0].startswith(b"\x1f\x8b"))
        name = f"f{n}.jsonl" + (".gz" if gz else "")
        write(landing / name, [line.replace(b"\n", b" ") for line in lines], gz=gz)
    alone, batched, wh = _alone_and_batched(tmp_path, [landing], monkeypatch)
    assert alone.keys() == batched.keys()
    for name, rows in alone.items():
        assert rows.equals(batched[name]), name
    firsts = {p.read_bytes(): p for p in sorted(landing.iterdir(), reverse=True)}  # a copy
    assert_total(wh, *firsts.values())  # of an earlier file is `already_ingested`


def test_a_small_file_that_cannot_be_read_leaves_the_batch_to_the_others(tmp_path, monkeypatch):
    from flows.ingest.file_stream import FileStream

    landing = tmp_path / "landing"
    landing.mkdir()
    paths = [write(landing / f"{n}.jsonl", [dumps(deal(n))]) for n in ("a", "b", "c")]
    real = FileStream._blocks

    def vanish(self):
        if self.name == "b.jsonl":
            raise FileNotFoundError(2, "No such file or directory")
        yield from real(self)

    monkeypatch.setattr(FileStream, "_blocks", vanish)
    result, wh = run(tmp_path, landing)
    assert [f.status for f in result.files] == [
        "ingested",
        "error: No such file or directory",
        "ingested",
    ]
    assert sorted(table(wh, "simultane_deal")["player_id"]) == ["a", "c"]
    assert_total(wh, paths[0], paths[2])
