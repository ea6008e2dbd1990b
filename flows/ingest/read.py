"""Read delivered files: what is in the landing folder, and the physical lines of each file.

A file is read as a stream of blocks of `chunk_bytes` (hashed as they are read), gunzipped
(`.gz` or gzip magic; several members allowed), decoded to UTF-8 when it is UTF-16/UTF-32
(by its byte-order mark, or the NUL bytes of UTF-16 text without one; a UTF-8 BOM is dropped),
and cut into lines with numpy (the positions of `\\n`), handed over as a pyarrow binary array
per chunk. Memory is bounded by a few chunks whatever the size of the file.

What cannot be read is a line of its own, quarantined with its reason, and the reading goes
on: a line longer than `max_line_bytes` (kept: its first KiB), and the rest of a gzip stream
that is truncated or corrupt (kept: the partial last line, or nothing) — what decompressed
before it is read normally.

A landing location may be `s3://bucket/prefix` (flows/storage/s3.py): its objects are listed
with their size and time of last modification, each a `RemoteFile` the reading streams (the
ingest log names it by its URI, so an unchanged object is neither read nor logged again).
"""

from __future__ import annotations

import codecs
import errno
import hashlib
import itertools
import os
import queue
import re
import stat
import threading
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import numpy as np
import pyarrow as pa

from flows.errors import UserError
from flows.ingest.faults import ResourceError
from flows.ingest.options import IngestOptions
from flows.storage.store import Store

INPUT_SUFFIXES = (".jsonl", ".jsonl.gz", ".json", ".json.gz", ".ndjson", ".ndjson.gz", ".pbn",
                  ".xml")  # fmt: skip
GZIP_MAGIC = b"\x1f\x8b"
BOMS = (  # longest first: the UTF-32 LE BOM starts like the UTF-16 LE one
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
HEAD_KEEP = 1024  # bytes kept of a line too long to read
UNDECODABLE = "duplirank-undecodable"


def _undecodable(err: UnicodeDecodeError) -> tuple[str, int]:
    """Bytes of a UTF-16/UTF-32 file that do not decode become bytes no UTF-8 text holds
    (0xFF, by `surrogateescape` when re-encoded): their line is quarantined as not valid text
    in the file's encoding. (`surrogateescape` alone raises on a sequence holding a byte
    below 0x80, e.g. `\\xff\\xfe\\x00\\x00{…`: UTF-32 by its BOM, UTF-16 in fact.)"""
    return "\udcff" * (err.end - err.start), err.end


codecs.register_error(UNDECODABLE, _undecodable)


class RemoteFile:
    """An object of an `s3://` landing, with the few `Path` methods the ingest uses."""

    def __init__(self, store: Store, path: str, size: int, mtime: float):
        self.store, self.key, self.size = store, path, size
        self.mtime_ns = int(mtime * 1e9)
        self.name = path.rsplit("/", 1)[-1]

    def __str__(self) -> str:
        return self.store.uri(self.key)

    __repr__ = __str__

    @property
    def suffixes(self) -> list[str]:
        return Path(self.name).suffixes

    def stat(self) -> _Stat:
        return _Stat(self.size, self.mtime_ns)

    def open(self, mode: str = "rb") -> IO[bytes]:
        if mode != "rb":
            raise ValueError(f"{self}: a landing object is only read (mode 'rb', not {mode!r})")
        return self.store.open(self.key)

    def read_bytes(self) -> bytes:
        return self.store.read_bytes(self.key)


@dataclass(frozen=True)
class _Stat:
    st_size: int
    st_mtime_ns: int


def open_input(path: Path | RemoteFile | LandingFile):
    """A binary file object of an input (local, opened landing file, or remote)."""
    return path.open("rb") if not isinstance(path, Path) else open(path, "rb")


def _read_into(handle, view: memoryview) -> int:
    """Fill `view` from `handle` (fewer bytes only at the end of the file)."""
    done = 0
    while done < len(view):
        read = handle.readinto(view[done:])
        if not read:
            break
        done += read
    return done


# --------------------------------------------------------------------------- file names
_UNDECODED = re.compile("[\udc80-\udcff]")
_ESCAPE = re.compile(r"\\(x[0-9a-f]{2}|\\)")


def file_text(path: Path | RemoteFile | str) -> str:
    """The stored text of a file's name (ingest log, quarantine, bronze `source_file`),
    lossless: its UTF-8 text, each byte that is not part of valid UTF-8 written `\\xHH`
    (two lower-case hex digits) and each backslash doubled (`file_name` reverses it)."""
    text = str(path)
    if "\\" not in text and not _UNDECODED.search(text):
        return text  # every usual name: valid UTF-8, no backslash
    text = text.replace("\\", "\\\\")
    return _UNDECODED.sub(lambda m: f"\\x{ord(m.group()) - 0xDC00:02x}", text)


def file_name(text: str) -> bytes:
    """The bytes of a file name from its stored text (`file_text`)."""

    def unescape(match: re.Match) -> str:
        code = match.group(1)
        return "\\" if code == "\\" else chr(0xDC00 + int(code[1:], 16))

    return os.fsencode(_ESCAPE.sub(unescape, text))


# --------------------------------------------------------------------------- landing files
OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
FOLDER_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC


class Landing:
    """A folder files are opened from (relative to its descriptor, opened once)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.fd: int | None = None

    def dir_fd(self) -> int:
        if self.fd is None:
            self.fd = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        return self.fd

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    __del__ = close


class Changed(Exception):
    """A landing entry that is not the file listed when it is opened (never read)."""

    def __init__(self, what: str):
        super().__init__(what)
        self.status = f"error: changed after the listing ({what}); not read"


class LandingFile:
    """A landing file opened once (links not followed, not blocking) and checked on its
    descriptor; every read of it goes through that descriptor, at its own offset."""

    def __init__(self, fd: int, stat: os.stat_result):
        self.fd, self.stat = fd, stat

    def open(self, mode: str = "rb") -> _Reader:
        return _Reader(self.fd)

    def read_bytes(self) -> bytes:
        with self.open() as handle:
            return handle.read()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


class _Reader:
    """A file object over a shared descriptor, reading from its own offset (`pread`)."""

    def __init__(self, fd: int):
        self.fd, self.at = fd, 0

    def readinto(self, view) -> int:
        read = os.preadv(self.fd, [view], self.at)
        self.at += read
        return read

    def read(self, size: int = -1) -> bytes:
        if size < 0:
            parts = []
            while part := self.read(1 << 24):
                parts.append(part)
            return b"".join(parts)
        data = os.pread(self.fd, size, self.at)
        self.at += len(data)
        return data

    def __enter__(self) -> _Reader:
        return self

    def __exit__(self, *exc) -> None:
        pass


_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISDIR, "a folder"), (stat.S_ISLNK, "a symlink"))  # fmt: skip


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def open_landing(item: Input) -> LandingFile:
    """Open a listed local file once: relative to its landing folder's descriptor, no link
    followed on the way (`O_NOFOLLOW` on every part), without blocking (a FIFO or device
    swapped in opens at once), then checked on the descriptor: a regular file, the device
    and inode listed. Raises `Changed` (its `status`) or the `OSError` of the open."""
    at = item.landing.dir_fd()
    folders = []
    try:
        for part in item.parts[:-1]:
            try:
                at = os.open(part, FOLDER_FLAGS, dir_fd=at)
            except NotADirectoryError:  # a link (never followed) or a file now
                seen = os.stat(part, dir_fd=at, follow_symlinks=False)
                raise Changed(
                    "a symlink now"
                    if stat.S_ISLNK(seen.st_mode)
                    else "a folder on its way is not one now"
                ) from None
            folders.append(at)
        fd = os.open(item.parts[-1], OPEN_FLAGS, dir_fd=at)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise Changed("a symlink now") from None
        if err.errno == errno.ENOTDIR:
            raise Changed("a folder on its way is not one now") from None
        raise
    finally:
        for folder in folders:
            os.close(folder)
    found = os.fstat(fd)
    listed = item.stat
    problem = None
    if not stat.S_ISREG(found.st_mode):
        problem = _kind(found.st_mode) + " now"
    elif (found.st_dev, found.st_ino) != (listed.st_dev, listed.st_ino):
        problem = "another file now"
    if problem is not None:
        os.close(fd)
        raise Changed(problem)
    return LandingFile(fd, found)


@dataclass
class Input:
    """A file found in the given paths; `skip` is its log status when it is not read.

    A local file has the landing folder it is opened from (`landing`), its path there
    (`parts`: a symlink inside the folder is opened as its target), and what the listing
    saw of it (`stat`: links not followed for one not read; its target's for a link)."""

    path: Path | RemoteFile
    skip: str | None = None
    stat: os.stat_result | None = None
    landing: Landing | None = None
    parts: tuple[str, ...] = ()
    opened: LandingFile | None = None

    @property
    def file(self) -> str:
        return file_text(self.path)

    def open(self) -> LandingFile | RemoteFile:
        """The file to read (opened once, kept until `close`)."""
        if isinstance(self.path, RemoteFile):
            return self.path
        if self.opened is None:
            self.opened = open_landing(self)
        return self.opened

    def close(self) -> None:
        if self.opened is not None:
            self.opened.close()
            self.opened = None


def list_inputs(paths: list[Path | str], exclude: Path | str | None = None) -> list[Input]:
    """Every file under the given files/folders, in name order (deliveries are ordered).

    In a folder, files whose name has no known suffix (case-insensitive), entries that are
    not regular files and symlinks leading outside the folder are listed with a status and
    not read (a symlink is never followed out of the folder it was found in). The folder
    `exclude` (the warehouse, when it is inside a folder given) is not walked. A path given
    as `s3://bucket/prefix` lists the objects under that prefix.
    """
    found: list[Input] = []
    local_exclude = exclude.resolve() if isinstance(exclude, Path) else None
    for path in paths:
        if isinstance(path, str) and "://" in path:
            found += _list_remote(path, exclude)
        elif path.is_dir():
            found += _walk(path, local_exclude)
        elif path.is_file():  # named by the user: a link is followed to the file it names
            target = path.resolve()
            found.append(Input(path, None, os.stat(target), Landing(target.parent), (target.name,)))
        else:
            raise UserError(f"no such file or folder: {file_text(path)}")
    return sorted(found, key=lambda i: (i.path.name, str(i.path)))


def _list_remote(url: str, exclude: Path | str | None) -> list[Input]:
    """The objects under an `s3://` landing prefix (the warehouse's, if inside, left out)."""
    from flows.storage.locations import open_store

    store = open_store(url)
    skip = str(exclude).rstrip("/") + "/" if isinstance(exclude, str) else None
    out = []
    for entry in store.list(""):
        item = RemoteFile(store, entry.path, entry.size, entry.mtime)
        if skip and str(item).startswith(skip):
            continue
        known = item.name.lower().endswith(INPUT_SUFFIXES)
        out.append(Input(item, None if known else "skipped: unknown suffix"))
    return out


def _walk(folder: Path, exclude: Path | None) -> list[Input]:
    """The files of a landing folder. A sub-folder that cannot be listed (permission denied,
    an I/O error) is an `error: …` entry of the log, looked at again next run; the folder
    itself, a one-line error (nothing of it could be read)."""
    root = folder.resolve()
    landing = Landing(folder)
    out = []

    def unlisted(err: OSError) -> None:
        path = Path(err.filename) if err.filename else folder
        if path == folder:
            reason = (err.strerror or str(err)).lower()
            raise ResourceError(f"cannot list the landing folder {file_text(folder)}: {reason}")
        out.append(Input(path, f"error: cannot list the folder: {err.strerror or err}"))

    for here, dirs, files in os.walk(folder, onerror=unlisted, followlinks=False):
        dirs[:] = [d for d in dirs if (Path(here) / d).resolve() != exclude]
        for name in sorted(dirs):
            path = Path(here) / name
            if path.is_symlink():  # not walked into: say so
                out.append(Input(path, _link_status(path, root), _lstat(path)))
        for name in sorted(files):
            out.append(_listed(Path(here) / name, folder, root, landing))
    return out


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None


def _link_status(path: Path, root: Path) -> str:
    target = path.resolve()
    if not target.is_relative_to(root):
        return "refused: symlink outside the landing folder"
    return "skipped: symlink to a folder"


def _listed(path: Path, folder: Path, root: Path, landing: Landing) -> Input:
    """A file of a landing folder with its status (None: to be read) and what to open."""
    try:
        seen = os.lstat(path)
    except OSError as err:
        return Input(path, f"error: {err.strerror or err}")
    parts = path.relative_to(folder).parts
    if stat.S_ISLNK(seen.st_mode):
        try:
            target = path.resolve(strict=True)
            followed = os.stat(target)
        except (OSError, RuntimeError):
            return Input(path, "skipped: broken symlink", seen)
        if not target.is_relative_to(root):
            return Input(path, "refused: symlink outside the landing folder", seen)
        seen, parts = followed, target.relative_to(root).parts
    if not stat.S_ISREG(seen.st_mode):
        return Input(path, "skipped: not a regular file", seen)
    if not path.name.lower().endswith(INPUT_SUFFIXES):
        return Input(path, "skipped: unknown suffix", seen)
    return Input(path, None, seen, landing, parts)


def is_pbn(path: Path | str) -> bool:
    """A bridge event file read whole (PBN, or USEBIO XML), not as lines."""
    return str(path).lower().endswith((".pbn", ".xml"))


# --------------------------------------------------------------------------- lines of a file
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
        return _LineSplitter(self.opts).split(self._to_utf8(blocks), self)

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
            size = self.opts.chunk_bytes
            with open_input(self.source) as handle:
                rest = _NO_BYTES
                while True:
                    block = np.empty(len(rest) + size, np.uint8)
                    block[: len(rest)] = rest
                    read = _read_into(handle, memoryview(block)[len(rest) :])
                    if not read:
                        break
                    digest.update(block[len(rest) : len(rest) + read])
                    self.size += read
                    block = block[: len(rest) + read]
                    if read < size // 2:  # a small file: copied at its size
                        block = block.copy()
                    # all of it when it ends here (a file of one block: a small file)
                    self.whole = block if self.size == read else None
                    cut = _after_last_line_end(block) or len(block)  # a long line: all
                    block, rest = block[:cut], block[cut:].copy()
                    yield block
                if len(rest):
                    yield rest
        self.sha256 = digest.hexdigest()

    def _gunzip(self, blocks: Iterator[bytes | np.ndarray]) -> Iterator[bytes | np.ndarray]:
        first = next(blocks, b"")
        gzipped = _head(first, 2) == GZIP_MAGIC or (
            self.name.lower().endswith(".gz") and not _looks_like_text(_head(first, 1024))
        )  # a plain text file named `.gz` is read as the text it is
        if not gzipped:
            yield first
            yield from blocks
            return
        compressed = (bytes(memoryview(block)) for block in blocks)
        yield from _Gunzip(self.opts.chunk_bytes).run(bytes(memoryview(first)), compressed, self)

    def _to_utf8(self, blocks: Iterator[bytes | np.ndarray]) -> Iterator[bytes | np.ndarray]:
        first = next(blocks, b"")
        head = _head(first, 4096)
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


_NO_BYTES = np.empty(0, np.uint8)
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


def _head(block: bytes | np.ndarray, size: int) -> bytes:
    """The first bytes of a block, as bytes."""
    return bytes(memoryview(block)[:size])


def _after_last_line_end(block: np.ndarray) -> int:
    """Where the bytes after the last `\\n` of a block start (its length when it ends with
    one; 0 when it has none)."""
    start = max(len(block) - _TAIL, 0)
    ends = line_ends(block[start:])
    if not len(ends) and start:
        start, ends = 0, line_ends(block)
    return start + int(ends[-1]) if len(ends) else 0


def _looks_like_text(head: bytes) -> bool:
    """The start of a file is text: its first KiB decodes (a character may be cut at the end)
    and holds no control byte but tab, CR and LF."""
    sample = head[:1024]
    if not sample or sniff_encoding(sample) not in (None, "utf-8"):
        return bool(sample)  # UTF-16/32 text (by its BOM or NULs) is text too
    try:
        text = sample.decode("utf-8")
    except UnicodeDecodeError as err:
        if err.start < len(sample) - 3:
            return False
        text = sample[: err.start].decode("utf-8")
    return not any(c < " " and c not in "\t\r\n" for c in text)


def sniff_encoding(head: bytes) -> str | None:
    """The encoding of text starting with `head`: by its BOM, or UTF-16 by the NUL bytes of
    its ASCII characters; None for anything else (read as UTF-8, line by line)."""
    for bom, name in BOMS:
        if head.startswith(bom):
            return name if not name.startswith("utf-32") or _is_utf32(head) else _utf16(name)
    sample = head[:4096]
    if len(sample) >= 4 and sample.count(0) >= len(sample) // 3:
        even, odd = sample[0::2].count(0), sample[1::2].count(0)
        if odd > 2 * max(even, 1) and sample[0] != 0:
            return "utf-16-le"
        if even > 2 * max(odd, 1) and sample[1] != 0:
            return "utf-16-be"
    return None


def _is_utf32(head: bytes) -> bool:
    """The UTF-32 LE BOM is the UTF-16 LE BOM followed by a NUL character: UTF-32 only when
    the start decodes as UTF-32 (a character cut at the end of the sample allowed)."""
    sample = head[: min(len(head), 4096) // 4 * 4]
    try:
        sample.decode("utf-32")
    except UnicodeDecodeError:
        return False
    return True


def _utf16(utf32: str) -> str:
    return utf32.replace("32", "16")


class _Gunzip:
    """Decompress gzip members one after the other; a corrupt or cut stream ends the data
    and leaves its reason in `stream.problem` (what decompressed before it is kept)."""

    def __init__(self, max_out: int):
        self.max_out = max_out  # output per step: a gzip bomb is read a block at a time

    def run(self, first: bytes, blocks: Iterator[bytes], stream: FileStream) -> Iterator[bytes]:
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


LONG = "line of {} bytes is longer than the limit ({} bytes, setting ingest.max_line_bytes)"


class _LineSplitter:
    """Cut blocks of bytes into chunks of complete lines, numbered from 1."""

    def __init__(self, opts: IngestOptions):
        self.limit = opts.max_line_bytes
        self.max_lines = opts.chunk_lines
        self.line_no = 1
        self.long: Special | None = None  # a line too long, being skipped
        self.long_size = 0

    def split(self, blocks: Iterator[bytes | np.ndarray], stream: FileStream) -> Iterator[Chunk]:
        """Chunks of the lines of `blocks` (uint8 arrays, or bytes: read as arrays without a
        copy); a block that does not end with a line end is joined to the next one."""
        carry, pending = _NO_BYTES, []
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
                self.long_size, carry = len(carry), _NO_BYTES
                self.line_no += 1
        yield from self._last(carry, stream, pending)

    def _last(
        self, carry: np.ndarray, stream: FileStream, pending: list[Special]
    ) -> Iterator[Chunk]:
        if self.long is not None:
            pending.append(self._end_long())
        if stream.problem is not None:  # the partial last line is part of the unreadable rest
            stream.problem.line_no = self.line_no
            stream.problem.raw = _text(carry[:HEAD_KEEP]).rstrip("\r\n")
            pending.append(stream.problem)
            carry = _NO_BYTES
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


def _empty_chunk() -> Chunk:
    return Chunk(np.empty(0, np.int64), pa.array([], pa.large_binary()))


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
