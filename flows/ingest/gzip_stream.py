"""Gunzip the blocks of a file: gzip members one after the other; a corrupt or cut stream
ends the data and leaves its reason as the unreadable rest of the file (what decompressed
before it is read normally)."""

from __future__ import annotations

import zlib
from collections.abc import Iterator

from flows.ingest.line_split import Special, Stream

GZIP_MAGIC = b"\x1f\x8b"


class Gunzip:
    """Decompress gzip members one after the other; a corrupt or cut stream ends the data
    and leaves its reason in `stream.problem` (what decompressed before it is kept)."""

    def __init__(self, max_out: int):
        self.max_out = max_out  # output per step: a gzip bomb is read a block at a time

    def run(self, first: bytes, blocks: Iterator[bytes], stream: Stream) -> Iterator[bytes]:
        d, data, consumed = zlib.decompressobj(wbits=31), first, 0
        try:
            while True:
                if not data:
                    data = next(blocks, None)
                    if data is None:
                        break
                    continue
                if d.eof:
                    if not data.strip(b"\x00"):  # zero padding after the last member
                        data = b""
                        continue
                    if not data.startswith(GZIP_MAGIC):
                        stream.problem = _gzip_problem(
                            f"bytes after the gzip data (byte {consumed})"
                        )
                        break
                    d = zlib.decompressobj(wbits=31)
                out = d.decompress(data, self.max_out)
                consumed += len(data) - len(d.unconsumed_tail) - len(d.unused_data)
                data = d.unconsumed_tail or d.unused_data
                if out:
                    yield out
            if rest := d.flush():
                yield rest
        except zlib.error as err:
            stream.problem = _gzip_problem(f"corrupt gzip data at byte {consumed} ({err})")
        if stream.problem is not None:
            for _ in blocks:  # the file is still hashed whole
                pass
        elif not d.eof and consumed:
            stream.problem = _gzip_problem("truncated gzip: the file ends inside compressed data")


def _gzip_problem(reason: str) -> Special:
    return Special(0, "", "gzip", reason + "; the rest of the file is unreadable")
