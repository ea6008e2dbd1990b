"""List the delivered files: every file under the given files and folders, in name order,
each with the status of one that is not read (unknown suffix, not a regular file, a symlink
leading outside its folder, a folder that cannot be listed). A landing location may be
`s3://bucket/prefix` (flows/storage/s3.py): its objects are listed with their size and time
of last modification, each a `RemoteFile` the reading streams (the ingest log names it by its
URI, so an unchanged object is neither read nor logged again)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from flows.errors import UserError
from flows.ingest.faults import ResourceError
from flows.ingest.landing import Input, Landing, RemoteFile
from flows.ingest.names import file_text

INPUT_SUFFIXES = (".jsonl", ".jsonl.gz", ".json", ".json.gz", ".ndjson", ".ndjson.gz", ".pbn",
                  ".xml")  # fmt: skip


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
