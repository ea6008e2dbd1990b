"""A small published warehouse, a folder outside it, and a watch on every file around them."""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest

from flows.storage.warehouse import Warehouse


@dataclass(frozen=True)
class Sample:
    root: Path  # the warehouse
    outside: Path  # a folder beside it, holding files no query may read or touch
    watched: Path  # the current folder and $TMPDIR while queries run
    spill: Path  # sql.temp_directory
    published: str  # one published Parquet file, relative to the warehouse

    @property
    def folders(self) -> tuple[Path, ...]:
        return (self.root, self.outside, self.watched, self.spill)


def publish_sample(root: Path) -> Warehouse:
    """Two tables (one with nested columns) over two months, published like a nightly does."""
    wh = Warehouse(root)
    tx = wh.transaction("r1")
    t = pl.DataFrame(
        {
            "month": ["2026-10", "2026-11", "2026-11"],
            "player_id": ["P1", "P2", "P3"],
            "x": [1, 2, 3],
            "l": [[1, 2], [3], []],
            "s": [{"a": 1, "b": "x,y"}, {"a": 2, "b": 'q"'}, {"a": None, "b": None}],
        }
    )
    tx.put_months("gold", "t", t, ["2026-10", "2026-11"])
    u = pl.DataFrame({"month": ["2026-11"], "y": [0.5]})
    tx.put_months("silver", "u", u, ["2026-11"])
    tx.commit()
    return wh


def snapshot(*folders: Path) -> dict[str, tuple]:
    """Every entry under the folders: a file's bytes (sha256), size, mode and mtime; a link's
    target; a folder's mode. Links are not followed."""
    out: dict[str, tuple] = {}
    for folder in folders:
        for top, dirs, files in os.walk(folder, followlinks=False):
            for name in dirs + files:
                path = Path(top) / name
                info = os.lstat(path)
                if stat.S_ISLNK(info.st_mode):
                    out[str(path)] = ("link", os.readlink(path))
                elif stat.S_ISDIR(info.st_mode):
                    out[str(path)] = ("dir", info.st_mode)
                else:
                    digest = hashlib.sha256(path.read_bytes()).hexdigest()
                    out[str(path)] = ("file", digest, info.st_size, info.st_mode, info.st_mtime_ns)
    return out


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> Sample:
    base = tmp_path_factory.mktemp("security")
    root, outside, watched, spill = (base / n for n in ("wh", "outside", "watched", "spill"))
    for folder in (outside, watched, spill):
        folder.mkdir()
    wh = publish_sample(root)
    (outside / "secret.txt").write_text("secret\n")
    pl.DataFrame({"secret": ["s3cr3t"]}).write_parquet(outside / "secret.parquet")
    # planted links inside the warehouse, pointing out of it (not published)
    (root / "gold" / "t" / "evil.parquet").symlink_to(outside / "secret.parquet")
    (root / "gold" / "passwd.txt").symlink_to(outside / "secret.txt")
    published = wh.manifest()["tables"]["t"]["partitions"]["month=2026-11"][0]["path"]
    return Sample(root, outside, watched, spill, published)


@pytest.fixture
def watch(sample, monkeypatch):
    """Run in the watched folder with $TMPDIR there; afterwards nothing may have changed in the
    warehouse, outside it, in the watched folder, or been left in the spill folder."""
    monkeypatch.chdir(sample.watched)
    monkeypatch.setenv("TMPDIR", str(sample.watched))
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads $TMPDIR again
    monkeypatch.setenv("DUPLIRANK_SQL__TEMP_DIRECTORY", str(sample.spill))
    before = snapshot(*sample.folders)
    yield sample
    after = snapshot(*sample.folders)
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    assert not changed, f"files changed: {sorted(changed)}"
