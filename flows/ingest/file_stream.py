"""Read one file (or bytes in memory) as chunks of lines: a stream of blocks of `chunk_bytes`
(hashed as they are read), gunzipped (`.gz` or gzip magic; several members allowed), decoded
to UTF-8 when it is UTF-16/UTF-32 (a UTF-8 BOM is dropped), and cut into lines
(flows/ingest/line_split.py). Memory is bounded by a few chunks whatever the size of the file."""

from __future__ import annotations

import codecs
import hashlib
import itertools
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from flows.ingest import block_pool
from flows.ingest.gzip_stream import GZIP_MAGIC, Gunzip
from flows.ingest.landing import LandingFile, RemoteFile, open_input
from flows.ingest.line_split import (
    NO_BYTES,
    Chunk,
    LineSplitter,
    Special,
    after_last_line_end,
    head_bytes,
)
from flows.ingest.options import IngestOptions
from flows.ingest.text_encoding import BOMS, UNDECODABLE, looks_like_text, sniff_encoding

EMPTY = 1 << 16  # bytes asked of a file empty when it was opened


def _listed_size(source: Path | RemoteFile | LandingFile) -> int | None:
    """The size of a source when it was opened or listed (None: not known)."""
    if isinstance(source, LandingFile):
        return source.stat.st_size
    if isinstance(source, RemoteFile):
        return source.size
    return None


def _read_into(handle, view: memoryview) -> int:
    """Fill `view` from `handle` (fewer bytes only at the end of the file)."""
    done = 0
    while done < len(view):
        read = handle.readinto(view[done:])
        if not read:
            break
        done += read
    return done


class FileStream:
    """The lines of one file (or of bytes in memory), chunk by chunk; `sha256` once read."""

    def __init__(self, source: Path | RemoteFile | bytes, name: str, opts: IngestOptions):
        self.source, self.name, self.opts = source, name, opts
        self.sha256: str | None = None
        self.encoding = "utf-8"
        self.problem: Special | None = None  # the unreadable rest of the stream, if any
        self.size = 0
        self.whole: np.ndarray | bytes | None = None  # its bytes, when read in one block

    def chunks(self) -> Iterator[Chunk]:
        blocks = self._gunzip(self._blocks())
        return LineSplitter(self.opts).split(self._to_utf8(blocks), self)

    def _blocks(self) -> Iterator[bytes | np.ndarray]:
        """The bytes of the source in blocks of about `chunk_bytes` (uint8 arrays), each cut
        after its last line end: the start of the line it cut is read into the next block,
        in front of the bytes that follow it (joining them copied every block: ~18 ms a 32
        MiB block, and a `bytes` or `bytearray` buffer costs a copy or a fill more than an
        array left uninitialised before it is read into)."""
        digest = hashlib.sha256()
        if isinstance(self.source, bytes):
            digest.update(self.source)
            self.size = len(self.source)
            self.whole = self.source
            yield self.source
        else:
            size, listed = self.opts.chunk_bytes, _listed_size(self.source)
            with open_input(self.source) as handle:
                rest = NO_BYTES
                while True:
                    # the rest of the file as opened (and a byte to see its end) when that
                    # is less than a block: its bytes are read in place, never copied
                    left = listed - self.size if listed is not None else size
                    want = min(size, left + 1) if left > 0 else size if self.size else EMPTY
                    if want == size:  # a whole block: into a buffer a block has left
                        block = block_pool.take(len(rest) + want, size + self.opts.max_line_bytes)
                    else:
                        block = np.empty(len(rest) + want, np.uint8)
                    block[: len(rest)] = rest
                    read = _read_into(handle, memoryview(block)[len(rest) :])
                    if not read:
                        break
                    digest.update(block[len(rest) : len(rest) + read])
                    self.size += read
                    block = block[: len(rest) + read]
                    if read < want // 2:  # much less than the buffer: copied at its size
                        block = block.copy()
                    # all of it when it ends here (a file of one block: a small file)
                    self.whole = block if self.size == read else None
                    if read < want:  # the end of the file: no next block to carry a line to
                        rest = NO_BYTES
                        yield block
                        break
                    cut = after_last_line_end(block) or len(block)  # a long line: all
                    block, rest = block[:cut], block[cut:].copy()
                    yield block
                if len(rest):
                    yield rest
        self.sha256 = digest.hexdigest()

    def _gunzip(self, blocks: Iterator[bytes | np.ndarray]) -> Iterator[bytes | np.ndarray]:
        first = next(blocks, b"")
        gzipped = head_bytes(first, 2) == GZIP_MAGIC or (
            self.name.lower().endswith(".gz") and not looks_like_text(head_bytes(first, 1024))
        )  # a plain text file named `.gz` is read as the text it is
        if not gzipped:
            yield first
            yield from blocks
            return
        compressed = (bytes(memoryview(block)) for block in blocks)
        yield from Gunzip(self.opts.chunk_bytes).run(bytes(memoryview(first)), compressed, self)

    def _to_utf8(self, blocks: Iterator[bytes | np.ndarray]) -> Iterator[bytes | np.ndarray]:
        first = next(blocks, b"")
        head = head_bytes(first, 4096)
        encoding = sniff_encoding(head)
        for bom, name in BOMS:
            if encoding == name and head.startswith(bom):
                first = first[len(bom) :]
        if encoding in (None, "utf-8"):  # no BOM, or a UTF-8 one (dropped)
            yield first
            yield from blocks
            return
        self.encoding = encoding
        decoder = codecs.getincrementaldecoder(encoding)(UNDECODABLE)
        for block in itertools.chain([first], blocks):
            text = decoder.decode(bytes(memoryview(block)))  # it joins bytes to bytes
            yield text.encode("utf-8", "surrogateescape")
        try:
            yield decoder.decode(b"", final=True).encode("utf-8", "surrogateescape")
        except UnicodeDecodeError:
            yield b"\xff"  # an odd byte at the end: the last line does not decode
