"""A warehouse's location and its store: a local folder (`LocalStore`) or `s3://bucket/prefix`
(`S3Store`), both `Store`s (flows/storage/store.py)."""

from __future__ import annotations

from pathlib import Path

from flows.errors import UserError
from flows.storage.local import LocalStore
from flows.storage.options import StorageOptions
from flows.storage.s3 import S3Store
from flows.storage.store import Store, is_url

_DEFAULT_OPTIONS: list[StorageOptions | None] = [None]  # the storage settings of this process


def configure(options: StorageOptions | None) -> None:
    """The storage settings used when a caller gives none (`load_settings` sets them: one
    process, one set of settings), so every reader of a `s3://` location gets the same."""
    _DEFAULT_OPTIONS[0] = options


def open_store(location: Path | str, options: StorageOptions | None = None) -> Store:
    """The store of a warehouse location: a local folder, or `s3://bucket/prefix` (any
    S3-compatible store; endpoint and credentials from `options`, else the `AWS_*` variables)."""
    if not is_url(location):
        return LocalStore(location)
    scheme = str(location).split("://", 1)[0].lower()
    if scheme in ("s3", "s3a"):
        return S3Store(str(location), options or _DEFAULT_OPTIONS[0])
    raise UserError(
        f"warehouse {location}: unsupported location (a local folder or s3://bucket/prefix)"
    )
