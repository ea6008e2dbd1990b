"""Small delivered files and the checks every ingest case makes: the exact reason, the other
lines and files published, nothing lost."""

from __future__ import annotations

import gzip
import json
import threading
from datetime import date
from pathlib import Path

import polars as pl
from hypothesis import strategies as st

from flows.ingest import IngestOptions, IngestResult, Window, reader_threads
from flows.ingest.file_stream import FileStream
from flows.ingest.stage import quarantine_lines
from flows.settings import Settings
from flows.steps import StepContext, ingest_step
from flows.storage.warehouse import Warehouse, new_run_id
from tests_support import read_table

AS_OF = date(2026, 11, 30)  # the run date of these tests: times up to 2026-12-02 are plausible
WINDOW = Window.around(IngestOptions(), AS_OF).text


def deal(player: str = "ann", deal_no: int = 1, made: int = 100, conceded: int = 62, **extra):
    row = {
        "type": "simultane.deal",
        "tournament_id": "T1",
        "tournament_start": "2026-11-03T19:00:00+01:00",
        "deals_in_tournament": 2,
        "deal_no": deal_no,
        "player_id": player,
        "is_bot": player == "BOT",
        "started_at": "2026-11-03T18:00:05Z",
        "finished_at": "2026-11-03T18:01:05Z",
        "status": "finished",
        "points_made": made,
        "points_conceded": conceded,
    }
    return row | extra


def match(match_id: str = "m1", **extra) -> dict:
    return {
        "type": "ff.match",
        "match_id": match_id,
        "match_type": "attaque",
        "player_a": "ann",
        "player_b": "BOT",
        "ranked": True,
        "created_at": "2026-11-03T19:50:00Z",
        "started_at": "2026-11-03T19:55:00Z",
        "ended_at": "2026-11-03T20:40:00Z",
    } | extra


def ff_deal(match_id: str = "m1", deal_no: int = 1, player: str = "ann", **extra) -> dict:
    return {
        "type": "ff.deal",
        "match_id": match_id,
        "deal_no": deal_no,
        "role": "attack",
        "player_id": player,
        "started_at": "2026-11-03T20:00:00Z",
        "finished_at": "2026-11-03T20:02:00Z",
        "points_made": 100,
        "points_conceded": 62,
    } | extra


def event(event_id: str = "E1", **extra) -> dict:
    return {
        "type": "bridge.event",
        "event_id": event_id,
        "date": "2026-11-03",
        "scoring": "matchpoints",
    } | extra


def result(board: int = 1, ns: str = "1", ew: str = "2", score: int = 420, **extra) -> dict:
    return {
        "type": "bridge.result",
        "event_id": "E1",
        "board": board,
        "ns_pair": ns,
        "ew_pair": ew,
        "score_ns": score,
    } | extra


def penalty(**extra) -> dict:
    return {"type": "bridge.penalty", "event_id": "E1", "pair": "1", "kind": "p"} | extra


def dumps(record: dict) -> str:
    return json.dumps(record, ensure_ascii=False)


def write(path: Path, lines: list[str | bytes], gz: bool = False) -> Path:
    data = b"".join((x if isinstance(x, bytes) else x.encode()) + b"\n" for x in lines)
    path.write_bytes(gzip.compress(data, mtime=0) if gz else data)
    return path


def good_file(folder: Path, name: str = "other.jsonl") -> Path:
    """Another file of the same night: its two lines must be published whatever happens."""
    return write(folder / name, [dumps(deal("zoe")), dumps(deal("zoe", 2))])


def run(
    tmp_path: Path, *paths: Path, as_of: date = AS_OF, **settings
) -> tuple[IngestResult, Warehouse]:
    """One ingest run (published), as the nightly's ingest step does it."""
    config = Settings(warehouse=tmp_path / "wh", **settings)
    wh = Warehouse(config.warehouse)
    run_id = new_run_id()
    with wh.run(run_id) as tx:
        result, ops = ingest_step(StepContext(config, run_id, as_of), list(paths))
        tx.extend(ops)
    return result, wh


def table(wh: Warehouse, name: str) -> pl.DataFrame:
    return read_table(wh, name)


def quarantined(wh: Warehouse) -> pl.DataFrame:
    """The quarantine table with a row per line (a row of a run of identical lines stands for
    each line of the run), checked against its own counts."""
    rows = table(wh, "quarantine")
    if not rows.height:
        return rows
    assert (rows["last_line_no"] - rows["line_no"] + 1 == rows["line_count"]).all()
    return quarantine_lines(rows)


def reasons(wh: Warehouse, path: Path | None = None) -> list[tuple[int, str]]:
    """(line, reason) of the quarantined lines of a file (all files when None), in line
    order."""
    rows = quarantined(wh)
    if not rows.height:
        return []
    if path is not None:
        rows = rows.filter(pl.col("file") == str(path))
    return rows.sort("line_no", "reason").select("line_no", "reason").rows()


def accepted(wh: Warehouse, table_name: str, path: Path) -> list[int]:
    """Line numbers of a file's rows in a bronze table."""
    rows = table(wh, table_name)
    if not rows.height:
        return []
    return sorted(rows.filter(pl.col("source_file") == str(path))["line_no"].to_list())


def physical_lines(path: Path) -> int:
    """Lines of a file counted independently of the ingest: decompressed and decoded."""
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    for bom, codec in ((b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16")):
        if data.startswith(bom):
            data = data.decode(codec).encode()
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def assert_total(wh: Warehouse, *paths: Path, lines: dict[Path, int] | None = None) -> None:
    """Every line accounted for: per file, lines read = accepted + quarantined = its lines,
    and the bronze and quarantine tables hold exactly those rows."""
    log = table(wh, "ingest_log")
    for path in paths:
        rows = log.filter((pl.col("file") == str(path)) & (pl.col("status") != "replayed"))
        assert rows.height == 1, (path, rows)
        row = rows.row(0, named=True)
        expected = lines[path] if lines and path in lines else physical_lines(path)
        assert row["lines_read"] == expected, (path, row)
        assert row["lines_read"] == row["rows_accepted"] + row["rows_quarantined"], row
        in_bronze = sum(
            len(accepted(wh, t, path))
            for t in (
                "simultane_deal",
                "ff_match",
                "ff_deal",
                "ff_disconnect",
                "bridge_event",
                "bridge_result",
                "bridge_penalty",
            )
            if wh.files(t)
        )
        assert in_bronze == row["rows_accepted"], (path, in_bronze, row)
        assert len(reasons(wh, path)) == row["rows_quarantined"], (path, row)


def stream_lines(data: bytes, name: str = "x.jsonl") -> int:
    return sum(c.lines for c in FileStream(data, name, IngestOptions()).chunks())


# --------------------------------------------------------------------------- fuzzing
VALID = [
    dumps(deal("ann")),
    dumps(deal("bob", 2)),
    dumps(deal("BOT")),
    dumps(match()),
    dumps(ff_deal()),
    dumps(event()),
    dumps(result()),
    dumps(penalty(amount=1.5)),
]
ODD_VALUES = ["null", "true", '"x"', "[]", "{}", "-1", "1.5", "9223372036854775808", "1e400",
              "NaN", "-Infinity", '"\\ud800"', '"2026-13-45T99:00:00Z"', "0"]  # fmt: skip


@st.composite
def mutated(draw) -> bytes:
    line = draw(st.sampled_from(VALID)).encode()
    kind = draw(st.sampled_from(["same", "flip", "cut", "swap", "nul", "bytes", "drop"]))
    if kind == "flip":
        for _ in range(draw(st.integers(1, 4))):
            at = draw(st.integers(0, len(line) - 1))
            line = line[:at] + bytes([draw(st.integers(0, 255))]) + line[at + 1 :]
    elif kind == "cut":
        line = line[: draw(st.integers(0, len(line) - 1))]
    elif kind == "swap":  # a field's value replaced by one of another type or size
        record = json.loads(line)
        key = draw(st.sampled_from(sorted(record)))
        text = json.dumps(record).replace(
            f'"{key}": {json.dumps(record[key])}', f'"{key}": {draw(st.sampled_from(ODD_VALUES))}'
        )
        line = text.encode()
    elif kind == "nul":
        at = draw(st.integers(0, len(line)))
        line = line[:at] + b"\x00" + line[at:]
    elif kind == "bytes":
        line = draw(st.binary(max_size=60)).replace(b"\x00", b"")
    elif kind == "drop":  # a required field missing
        record = json.loads(line)
        record.pop(draw(st.sampled_from(sorted(record))))
        line = json.dumps(record).encode()
    return line


def assert_readers_free() -> None:
    """Every reader thread of the process is free at once (tasks that wait for each other
    all finish), and there are no others."""
    threads = reader_threads.READER_THREADS
    every = threading.Barrier(threads, timeout=5)
    tasks = [reader_threads._reader().submit(every.wait) for _ in range(threads)]
    assert sorted(t.result(timeout=5) for t in tasks) == list(range(threads))
    readers = [t for t in threading.enumerate() if t.name.startswith("ingest-reader")]
    assert len(readers) <= threads


def failing_blocks(name: str, block: int):
    """`FileStream._blocks` raising an I/O error at block number `block` of file `name`."""
    real = FileStream._blocks

    def blocks(self):
        for n, data in enumerate(real(self)):
            if n == block and self.name == name:
                raise OSError(5, "Input/output error")
            yield data

    return blocks
