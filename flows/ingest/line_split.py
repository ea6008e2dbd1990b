"""Cut blocks of bytes into chunks of complete lines, numbered from 1: the positions of `\\n`
found with numpy, the lines of a chunk handed over as a pyarrow binary array over the block's
bytes (no copy). A line longer than `max_line_bytes` is a line of its own, quarantined with its
reason (kept: its first KiB); so is the unreadable rest of a stream (`Stream.problem`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import pyarrow as pa

from flows.ingest.options import IngestOptions

HEAD_KEEP = 1024  # bytes kept of a line too long to read


@dataclass
class Special:
    """A line the reader could not read as text: quarantined as it is, with its reason."""

    line_no: int
    raw: str
    rule: str
    reason: str


@dataclass
class Chunk:
    """Consecutive physical lines of one file: their numbers and bytes (each with its `\\n`)."""

    line_no: np.ndarray  # int64
    raw: pa.LargeBinaryArray
    special: list[Special] = field(default_factory=list)

    @property
    def lines(self) -> int:
        return len(self.line_no) + len(self.special)


class Stream(Protocol):
    """What the splitter reads of the stream its blocks come from: its unreadable rest."""

    problem: Special | None


NO_BYTES = np.empty(0, np.uint8)
_TAIL = 1 << 16  # where the last line end of a block is looked for first


LINE_END_BLOCK = 1 << 20  # bytes searched for `\n` at a time: their flags stay in the cache


def line_ends(data: np.ndarray) -> np.ndarray:
    """Where each line of `data` ends (the place after its `\\n`), searched 1 MiB at a time:
    one pass over a 32 MiB chunk made and read back a 32 MiB array of flags (12.6 vs 8.7 ms,
    and its fresh pages faulted in every chunk)."""
    if len(data) <= LINE_END_BLOCK:
        return np.flatnonzero(data == 10) + 1
    parts = [
        np.flatnonzero(data[at : at + LINE_END_BLOCK] == 10) + (at + 1)
        for at in range(0, len(data), LINE_END_BLOCK)
    ]
    return np.concatenate(parts)


def _line_ends_by(data: np.ndarray, lines: int) -> Iterator[np.ndarray]:
    """`line_ends(data)` in arrays of `lines` line ends (the last one fewer; none when
    `data` has no line end), searched 1 MiB at a time: a block of empty lines never makes an
    array of all its line ends at once (32 million of them in a 32 MiB block)."""
    if len(data) <= lines:  # too short to hold more lines than that
        ends = line_ends(data)
        if len(ends):
            yield ends
        return
    found, count = [], 0
    for at in range(0, len(data), LINE_END_BLOCK):
        part = np.flatnonzero(data[at : at + LINE_END_BLOCK] == 10) + (at + 1)
        found.append(part)
        count += len(part)
        if count >= lines:
            ends = np.concatenate(found)
            full = count // lines * lines
            for start in range(0, full, lines):
                yield ends[start : start + lines].copy()  # not a view of all of them
            found, count = [ends[full:].copy()], count - full
    if count:
        yield np.concatenate(found)


def _as_array(block: bytes | memoryview | np.ndarray) -> np.ndarray:
    """The bytes of a block as a uint8 array (bytes are viewed, not copied)."""
    return block if isinstance(block, np.ndarray) else np.frombuffer(block, np.uint8)


def head_bytes(block: bytes | np.ndarray, size: int) -> bytes:
    """The first bytes of a block, as bytes."""
    return bytes(memoryview(block)[:size])


def after_last_line_end(block: np.ndarray) -> int:
    """Where the bytes after the last `\\n` of a block start (its length when it ends with
    one; 0 when it has none)."""
    start = max(len(block) - _TAIL, 0)
    ends = line_ends(block[start:])
    if not len(ends) and start:
        start, ends = 0, line_ends(block)
    return start + int(ends[-1]) if len(ends) else 0


LONG = "line of {} bytes is longer than the limit ({} bytes, setting ingest.max_line_bytes)"


class LineSplitter:
    """Cut blocks of bytes into chunks of complete lines, numbered from 1."""

    def __init__(self, opts: IngestOptions):
        self.limit = opts.max_line_bytes
        self.max_lines = opts.chunk_lines
        self.line_no = 1
        self.long: Special | None = None  # a line too long, being skipped
        self.long_size = 0

    def split(self, blocks: Iterator[bytes | np.ndarray], stream: Stream) -> Iterator[Chunk]:
        """Chunks of the lines of `blocks` (uint8 arrays, or bytes: read as arrays without a
        copy); a block that does not end with a line end is joined to the next one."""
        carry, pending = NO_BYTES, []
        for block in blocks:
            block = _as_array(block)
            if self.long is not None:
                ends = line_ends(block)
                self.long_size += len(block) if not len(ends) else int(ends[0]) - 1
                if not len(ends):
                    continue
                pending.append(self._end_long())
                block = block[int(ends[0]) :]
            data = np.concatenate([carry, block]) if len(carry) else block
            end = 0
            for ends in _line_ends_by(data, self.max_lines):  # chunks of at most that many lines
                chunk = self._chunk(data[end : int(ends[-1])], ends - end)  # no copy of the block
                chunk.special[:0], pending = pending, []
                end = int(ends[-1])
                yield chunk
            carry = data[end:]  # the start of a line: small
            if len(carry) > self.limit:
                self.long, self.long_size = Special(self.line_no, "", "line_length", ""), 0
                self.long.raw = _text(carry[:HEAD_KEEP])
                self.long_size, carry = len(carry), NO_BYTES
                self.line_no += 1
        yield from self._last(carry, stream, pending)

    def _last(self, carry: np.ndarray, stream: Stream, pending: list[Special]) -> Iterator[Chunk]:
        if self.long is not None:
            pending.append(self._end_long())
        if stream.problem is not None:  # the partial last line is part of the unreadable rest
            stream.problem.line_no = self.line_no
            stream.problem.raw = _text(carry[:HEAD_KEEP]).rstrip("\r\n")
            pending.append(stream.problem)
            carry = NO_BYTES
        if not len(carry) and not pending:
            return
        if len(carry):
            data = np.concatenate([carry, _NEWLINE])
            chunk = self._chunk(data, np.array([len(data)]))
        else:
            chunk = _empty_chunk()
        chunk.special += pending
        if chunk.lines:
            yield chunk

    def _chunk(self, data: np.ndarray | bytes, ends: np.ndarray | None = None) -> Chunk:
        """The lines of `data` (complete lines: it ends with `\\n`; `ends`: where each
        line ends, after its `\\n`, if known)."""
        data = _as_array(data)
        ends = line_ends(data) if ends is None else ends
        offsets = np.concatenate([np.zeros(1, np.int64), ends.astype(np.int64)])
        count = len(ends)
        line_no = np.arange(self.line_no, self.line_no + count, dtype=np.int64)
        self.line_no += count
        raw = pa.LargeBinaryArray.from_buffers(
            pa.large_binary(), count, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
        )
        too_long = np.flatnonzero(np.diff(offsets) > self.limit + 1)
        if not len(too_long):
            return Chunk(line_no, raw)
        special = []
        for i in too_long:
            line = raw[int(i)].as_py()
            head = line[:HEAD_KEEP].decode("utf-8", "replace")
            size = len(line.rstrip(b"\r\n"))
            special.append(
                Special(int(line_no[i]), head, "line_length", LONG.format(size, self.limit))
            )
        keep = np.setdiff1d(np.arange(count), too_long)  # rare: rebuilt line by line
        return Chunk(line_no[keep], pa.array(lines_at(raw, keep), pa.large_binary()), special)

    def _end_long(self) -> Special:
        special, self.long = self.long, None
        special.reason = LONG.format(self.long_size, self.limit)
        return special


_NEWLINE = np.array([10], np.uint8)


def _text(data: np.ndarray) -> str:
    return bytes(memoryview(data)).decode("utf-8", "replace")


def lines_at(raw: pa.Array, positions) -> list[bytes]:
    """Some lines of a chunk as bytes (for the few lines looked at one by one)."""
    return [raw[int(i)].as_py() for i in positions]


TRAIL_STEPS = 4  # trailing CR/LF bytes looked past with numpy; a longer run: `bytes.rstrip`


def text_lengths(raw: pa.Array, positions: np.ndarray) -> np.ndarray:
    """The length of each line at `positions` of a chunk without the run of CR and LF bytes
    that ends it, found from its end with numpy (a few bytes a line, never the chunk's)."""
    offsets = np.frombuffer(raw.buffers()[1], np.int64)[raw.offset : raw.offset + len(raw) + 1]
    data = np.frombuffer(raw.buffers()[2], np.uint8) if len(raw) else NO_BYTES
    starts, cut = offsets[positions], offsets[positions + 1].copy()
    active = np.arange(len(starts))
    for _ in range(TRAIL_STEPS):
        active = active[cut[active] > starts[active]]
        last = data[cut[active] - 1]
        active = active[(last == 10) | (last == 13)]
        cut[active] -= 1
        if not len(active):
            break
    else:  # a longer run: those lines stripped whole (few)
        for i, line in zip(active, lines_at(raw, positions[active]), strict=True):
            cut[i] = starts[i] + len(line.rstrip(b"\r\n"))
    return cut - starts


def _empty_chunk() -> Chunk:
    return Chunk(np.empty(0, np.int64), pa.array([], pa.large_binary()))
