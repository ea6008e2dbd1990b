"""A warehouse on S3-compatible object storage: `s3://bucket/prefix`, a `Store` (and a
`Mirror`: flows/storage/store.py) like `LocalStore`, through s3fs (aiobotocore).

What replaces the file system's guarantees:
- **The pointer** is the object `current.json` (`{"publication": "_publications/…", …}`),
  replaced by a *conditional* PUT: `If-Match` on the ETag this process read when it learnt the
  publication it builds on, `If-None-Match: *` for a warehouse's first publication. A run that
  lost the race gets HTTP 412 and stops with one line (`Conflict`); nothing of it is
  published. Each pointer body holds a fresh nonce, so no two pointers share an ETag (the
  ETag of a simple PUT is the MD5 of the body: `recover` going back to an older publication
  must still change it).
- **No lock.** Runs on two machines may overlap; only one can publish from a given base (the
  conditional PUT), and garbage collection never deletes an unlisted object younger than
  `storage.gc_grace_hours` (it may belong to a run in flight elsewhere).
- **Checksums.** Every object duplirank writes carries its sha256 in its metadata
  (`x-amz-meta-sha256`). Reading a file, the nightly checks its size and that metadata with
  one HEAD (an object replaced by any other tool lacks it, or has another one, and is then
  hashed in full); `duplirank verify` always hashes every byte.
- **DuckDB** has no `httpfs` here: every connection registers this store's s3fs file system
  (`prepare_duckdb`), and the views name files by their full `s3://` URI (DuckDB's
  `file_search_path` does not apply to registered file systems).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TypeVar

from flows.errors import UserError
from flows.storage.options import StorageOptions
from flows.storage.store import POINTER, Conflict, Entry, StoreError, safe_path, sha256_of

POINTER_OBJECT = POINTER + ".json"
BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
SHA_KEY = "sha256"  # user metadata of every object written (x-amz-meta-sha256)
_SHARED: dict[tuple, object] = {}  # s3fs file systems of this process, by configuration
_SHARED_LOCK = threading.Lock()
T = TypeVar("T")


def parse_url(url: str) -> tuple[str, str]:
    """(bucket, prefix) of `s3://bucket/prefix`, checked; the prefix has no trailing slash."""
    rest = url.split("://", 1)[1]
    bucket, _, prefix = rest.partition("/")
    prefix = prefix.strip("/")
    if not BUCKET.match(bucket):
        raise UserError(f"{url}: {bucket!r} is not a valid bucket name (3-63 of a-z 0-9 . -)")
    if prefix:
        try:
            safe_path(prefix)
        except ValueError:
            raise UserError(f"{url}: the prefix {prefix!r} is not a plain path") from None
    return bucket, prefix


class S3Store:
    """A warehouse under a prefix of an S3 bucket."""

    kind = "s3"
    root = None  # no local folder

    def __init__(self, url: str, options: StorageOptions | None = None):
        self.bucket, self.prefix = parse_url(url)
        self.url = f"s3://{self.bucket}" + (f"/{self.prefix}" if self.prefix else "")
        self.options = options or StorageOptions()
        self.gc_grace_s = self.options.gc_grace_hours * 3600
        self._fs = self._duckdb_fs = None
        self._config: dict | None = None
        self._etags: dict[str | None, str] = {}  # pointer target -> ETag it was read with

    def __repr__(self) -> str:
        return f"S3Store({self.url})"

    def __getstate__(self) -> dict:  # a file system and its event loop are not sent along
        return {**self.__dict__, "_fs": None, "_duckdb_fs": None}

    # ------------------------------------------------------------------ connection
    def config(self) -> dict:
        """Endpoint, region and credentials: the settings, else what botocore finds (the
        `AWS_*` variables, `~/.aws/…`, an instance role)."""
        if self._config is None:
            import botocore.session

            opts = self.options
            session = botocore.session.Session()
            region = opts.region or session.get_config_variable("region") or "us-east-1"
            endpoint = (
                opts.endpoint_url
                or os.environ.get("AWS_ENDPOINT_URL_S3")
                or os.environ.get("AWS_ENDPOINT_URL")
            )
            key, secret, token = opts.access_key_id, opts.secret_access_key, opts.session_token
            if key is None:
                creds = session.get_credentials()
                if creds is not None:
                    frozen = creds.get_frozen_credentials()
                    key, secret, token = frozen.access_key, frozen.secret_key, frozen.token
            self._config = {
                "endpoint": endpoint,
                "region": region,
                "key": key,
                "secret": secret,
                "token": token,
            }
        return self._config

    @property
    def fs(self):
        if self._fs is None:
            self._fs = self._new_fs()
        return self._fs

    def _new_fs(self, cls=None):
        """The s3fs file system of this configuration, one per process and class: making its
        client costs a quarter of a second (botocore's session), so stores opened one after
        the other (each query, each task) share it."""
        import s3fs

        c = self.config()
        cls = cls or s3fs.S3FileSystem
        ident = (cls.__name__, os.getpid(), *sorted(c.items()))
        with _SHARED_LOCK:
            if ident not in _SHARED:
                config_kwargs = {"s3": {"addressing_style": "path"}} if c["endpoint"] else {}
                _SHARED[ident] = cls(
                    key=c["key"],
                    secret=c["secret"],
                    token=c["token"],
                    anon=c["key"] is None,
                    endpoint_url=c["endpoint"],
                    client_kwargs={"region_name": c["region"]},
                    config_kwargs=config_kwargs,
                    use_listings_cache=False,
                    skip_instance_cache=True,
                )
            return _SHARED[ident]

    @property
    def duckdb_fs(self):
        """The file system DuckDB reads through: s3fs, the description (HEAD) of each Parquet
        object kept once read — DuckDB asks for a file's size and time a dozen times, and the
        data files duplirank writes are never modified (new files get new names)."""
        if self._duckdb_fs is None:
            self._duckdb_fs = self._new_fs(_described_once())
        return self._duckdb_fs

    @property
    def polars_options(self) -> dict:
        """`storage_options` for Polars (object_store), from the same configuration."""
        c = self.config()
        options = {"aws_region": c["region"]}
        if c["endpoint"]:
            options["aws_endpoint_url"] = c["endpoint"]
            if c["endpoint"].startswith("http://"):
                options["aws_allow_http"] = "true"
        if c["key"]:
            options["aws_access_key_id"] = c["key"]
            options["aws_secret_access_key"] = c["secret"] or ""
            if c["token"]:
                options["aws_session_token"] = c["token"]
        else:
            options["aws_skip_signature"] = "true"
        return options

    # ------------------------------------------------------------------ paths
    def key(self, path: str) -> str:
        """`bucket/prefix/path`: how s3fs names a stored object."""
        base = f"{self.bucket}/{self.prefix}" if self.prefix else self.bucket
        return f"{base}/{safe_path(path)}" if path else base

    def uri(self, path: str) -> str:
        return "s3://" + self.key(path)

    def exists(self) -> bool:
        return self.guarded(lambda: self.fs.exists(self.bucket), "read the bucket")

    def has(self, path: str) -> bool:
        return self.guarded(lambda: self.fs.exists(self.key(path)), f"read {path}")

    def is_legacy(self) -> bool:
        return False  # manifest format 1 never lived on object storage

    # ------------------------------------------------------------------ DuckDB
    def view_path(self, path: str) -> str:
        return self.uri(path)

    def readable_paths(self, path: str) -> list[str]:
        return [self.uri(path)]

    def prepare_duckdb(self, con) -> None:
        """Register the s3fs file system on a DuckDB connection (no httpfs extension here)."""
        con.register_filesystem(self.duckdb_fs)

    def cache_folder(self, name: str) -> Path:
        """A local folder of this machine for this warehouse (`storage.cache_dir`, default
        `~/.cache/duplirank`), e.g. the views databases fetched, the site last built."""
        base = Path(self.options.cache_dir or _cache_home()).expanduser()
        folder = base / "warehouses" / _slug(self.url) / name
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise UserError(f"cannot write the cache folder {folder}: {err.strerror}") from None
        return folder

    def fetch(self, path: str) -> Path:
        """A local copy of a stored object, kept in the cache folder (objects duplirank
        writes are never modified: a publication's views database is cached for good)."""
        local = self.cache_folder("objects") / safe_path(path)
        if local.is_file():
            return local
        try:
            local.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=local.parent, prefix=".fetch-")
            os.close(fd)
        except OSError as err:
            raise UserError(f"cannot write the cache {local.parent}: {err.strerror}") from None
        try:
            self.guarded(lambda: self.fs.get_file(self.key(path), tmp), f"read {path}")
            os.replace(tmp, local)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        return local

    def forget_fetched(self, path: str) -> None:
        """Drop the cached copy of an object rewritten in place (a views database rebuilt by
        `relink` or a repair)."""
        with contextlib.suppress(FileNotFoundError):
            (self.cache_folder("objects") / safe_path(path)).unlink()

    # ------------------------------------------------------------------ reading
    def read_bytes(self, path: str) -> bytes:
        return self.guarded(lambda: self.fs.cat_file(self.key(path)), f"read {path}")

    def open(self, path: str) -> IO[bytes]:
        return self.fs.open(self.key(path), "rb", block_size=1 << 24)

    def list(self, prefix: str) -> Iterator[Entry]:
        """Every object under a folder, with its size and time of last modification."""
        base = self.key(prefix)
        try:
            found = self.guarded(lambda: self.fs.find(base, detail=True), f"list {prefix}")
        except FileNotFoundError:
            return
        start = len(self.key("")) + 1
        for name, info in sorted(found.items()):
            if info.get("type") == "directory":
                continue
            modified = info.get("LastModified")
            mtime = modified.timestamp() if isinstance(modified, datetime) else 0.0
            yield Entry(name[start:], int(info.get("size") or 0), mtime)

    def folders(self, prefix: str) -> list[str]:
        try:
            found = self.guarded(
                lambda: self.fs.ls(self.key(prefix), detail=True), f"list {prefix}"
            )
        except FileNotFoundError:
            return []
        return sorted(
            info["name"].rstrip("/").rsplit("/", 1)[-1]
            for info in found
            if info.get("type") == "directory"
        )

    # ------------------------------------------------------------------ checksums
    def sha256(self, path: str) -> str:
        digest = hashlib.sha256()

        def read() -> None:
            with self.fs.open(self.key(path), "rb", block_size=1 << 22) as handle:
                while chunk := handle.read(1 << 22):
                    digest.update(chunk)

        self.guarded(read, f"read {path}")
        return digest.hexdigest()

    def check(self, path: str, sha256: str, size: int, deep: bool = False) -> str | None:
        """None if the object has these bytes, else `missing` or `damaged`. Unless `deep`,
        an object carrying the expected sha256 in its metadata (written by duplirank, never
        replaced since) is trusted on its size; any other is hashed in full."""
        try:
            info = self.guarded(
                lambda: self.fs.call_s3(
                    "head_object", Bucket=self.bucket, Key=self.key(path).split("/", 1)[1]
                ),
                f"read {path}",
            )
        except FileNotFoundError:
            return "missing"
        if int(info.get("ContentLength", -1)) != size:
            return "damaged"
        if not deep and (info.get("Metadata") or {}).get(SHA_KEY) == sha256:
            return None
        try:
            return None if self.sha256(path) == sha256 else "damaged"
        except FileNotFoundError:
            return "missing"

    # ------------------------------------------------------------------ writing
    def staging(self) -> Path:
        """A private local folder for files being built (uploaded by `publish_file`)."""
        try:
            return Path(tempfile.mkdtemp(prefix="duplirank-staging-"))
        except OSError as err:
            raise StoreError(f"cannot create a local staging folder: {err.strerror}") from None

    def publish_file(
        self, path: str, source: Path, read_only: bool = True, sha256: str | None = None
    ) -> None:
        """Upload a finished file under `path` (names are new: nothing is overwritten), its
        sha256 in the object's metadata; the local file is removed."""
        digest = sha256 or sha256_of(source)
        self.guarded(
            lambda: self.fs.put_file(str(source), self.key(path), Metadata={SHA_KEY: digest}),
            f"write {path}",
        )
        with contextlib.suppress(OSError):
            os.unlink(source)

    def write_bytes(self, path: str, data: bytes, read_only: bool = True) -> None:
        digest = hashlib.sha256(data).hexdigest()
        self._put(path, data, {}, Metadata={SHA_KEY: digest})

    def mirror(self, local: Path, prefix: str, index: str = "_pages.json") -> tuple[int, int]:
        """Make the objects under `prefix` the files of the local folder `local`: upload the
        files whose MD5 differs from the object's ETag (or that are new), the file `index`
        last; then delete the objects no longer in the folder. Returns (uploaded, deleted)."""
        base = self.key(prefix)
        try:
            found = self.guarded(lambda: self.fs.find(base, detail=True), f"list {prefix}")
        except FileNotFoundError:
            found = {}
        remote = {
            name[len(base) + 1 :]: str(info.get("ETag", "")).strip('"')
            for name, info in found.items()
            if info.get("type") != "directory"
        }
        files = sorted((str(p.relative_to(local)), p) for p in local.rglob("*") if p.is_file())
        uploads = [(rel, path) for rel, path in files if remote.get(rel) != _md5(path)]
        uploads.sort(key=lambda item: item[0] == index)  # the index last
        for rel, path in uploads:
            key = f"{base}/{rel}"
            self.guarded(lambda p=path, k=key: self.fs.put_file(str(p), k), f"write {prefix}/{rel}")
        gone = sorted(set(remote) - {rel for rel, _ in files})
        if gone:
            self.guarded(lambda: self.fs.rm([f"{base}/{rel}" for rel in gone]), f"delete {prefix}")
        return len(uploads), len(gone)

    def delete(self, path: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.guarded(lambda: self.fs.rm_file(self.key(path)), f"delete {path}")

    def delete_tree(self, path: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.guarded(lambda: self.fs.rm(self.key(path), recursive=True), f"delete {path}")

    def prune_empty_folders(self, prefix: str) -> None:
        pass  # object stores have no folders

    def in_flight(self, prefix: str) -> bool:
        """Whether the objects under `prefix` may be a run's in progress on another machine
        (no lock on object storage): all written within `storage.gc_grace_hours`."""
        young = datetime.now(UTC).timestamp() - self.gc_grace_s
        times = [entry.mtime for entry in self.list(prefix)]
        return bool(times) and min(times) > young

    # ------------------------------------------------------------------ pointer
    def read_pointer(self) -> str | None:
        """The current publication folder, as `current.json` names it (None: no publication
        yet). The ETag is kept: the swap that replaces this pointer is conditional on it."""
        try:
            response = self.guarded(
                lambda: self.fs.call_s3(
                    "get_object", Bucket=self.bucket, Key=self._object_key(POINTER_OBJECT)
                ),
                "read the current publication",
            )
        except FileNotFoundError:
            self._etags[None] = "*"
            return None
        body = self.guarded(lambda: _read_body(self.fs, response), "read the current publication")
        try:
            target = json.loads(body)["publication"]
            if not isinstance(target, str):
                raise TypeError(target)
        except (ValueError, KeyError, TypeError):
            target = f"<{POINTER_OBJECT} unreadable>"  # refused by the warehouse's checks
        # the first ETag read for a publication is the one the swap is conditional on: a
        # pointer rewritten since (even back to the same publication) is a conflict
        self._etags.setdefault(target, response["ETag"])
        return target

    def swap_pointer(self, target: str, expected: str | None) -> None:
        """Point `current.json` at `target` if it still is what this process read as
        `expected` (If-Match on its ETag; If-None-Match: * when there was none)."""
        safe_path(target)
        if expected not in self._etags:
            if self.read_pointer() != expected:
                raise self._conflict()
        body = json.dumps(
            {
                "publication": target,
                "previous": expected,
                "written_at": datetime.now(UTC).isoformat(),
                "nonce": uuid.uuid4().hex,
            },
            indent=1,
        ).encode()
        condition = {"IfNoneMatch": "*"} if expected is None else {"IfMatch": self._etags[expected]}
        response = self._put(POINTER_OBJECT, body, condition, ContentType="application/json")
        self._etags = {target: response["ETag"]}

    def ensure_link(self, name: str, target: str) -> None:
        pass  # no links on object storage: readers follow current.json

    # ------------------------------------------------------------------ locking
    @contextlib.contextmanager
    def lock(self, wait_s: float) -> Iterator[None]:
        """No lock on object storage: the conditional swap of the pointer is the rule (a run
        that lost the race publishes nothing). Only checks that the bucket answers."""
        if not self.exists():
            raise UserError(f"warehouse {self.url}: bucket {self.bucket} does not exist")
        yield

    # ------------------------------------------------------------------ internals
    def _object_key(self, path: str) -> str:
        return self.key(path).split("/", 1)[1]

    def _put(self, path: str, body: bytes, condition: dict, **extra) -> dict:
        """One PUT through the raw client (so a 412 stays a 412), conditions included."""
        from botocore.exceptions import ClientError
        from fsspec.asyn import sync

        async def put():
            s3 = await self.fs.get_s3(self.bucket)
            return await s3.put_object(
                Bucket=self.bucket, Key=self._object_key(path), Body=body, **condition, **extra
            )

        try:
            return self.guarded(lambda: sync(self.fs.loop, put), f"write {path}")
        except ClientError as err:
            status = err.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            code = err.response.get("Error", {}).get("Code")
            if condition and (
                status in (409, 412) or code in ("PreconditionFailed", "ConditionalRequestConflict")
            ):
                raise self._conflict() from None
            raise StoreError(f"warehouse {self.url}: cannot write {path}: {code or err}") from None

    def _conflict(self) -> Conflict:
        return Conflict(
            f"warehouse {self.url} was published by another run while this one ran; nothing "
            "of this run was published: run it again"
        )

    def guarded(self, action: Callable[[], T], what: str) -> T:
        """Faults of the store as one line (StoreError); FileNotFoundError passes through."""
        try:
            return action()
        except FileNotFoundError:
            raise
        except PermissionError as err:
            raise StoreError(f"warehouse {self.url}: cannot {what}: access denied") from err
        except Exception as err:
            name = type(err).__name__
            if name == "ClientError":
                raise
            if name in ("NoCredentialsError", "PartialCredentialsError"):
                raise StoreError(
                    f"warehouse {self.url}: no credentials for the object store (set "
                    "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or the storage.* settings)"
                ) from err
            if name in (
                "EndpointConnectionError",
                "ConnectTimeoutError",
                "ReadTimeoutError",
                "ClientConnectorError",
                "ServerDisconnectedError",
                "ConnectionClosedError",
            ) or isinstance(err, ConnectionError):
                where = self.config()["endpoint"] or "AWS S3"
                raise StoreError(
                    f"warehouse {self.url}: cannot reach the object store at {where}: {name}"
                ) from err
            if isinstance(err, OSError):
                text = " ".join(str(err).split())[:200]
                raise StoreError(f"warehouse {self.url}: cannot {what}: {text}") from err
            raise


@functools.cache
def _described_once():
    """An s3fs file system class that keeps the description of every object it has read."""
    import s3fs

    class DescribedOnce(s3fs.S3FileSystem):
        async def _info(self, path, *args, **kwargs):
            infos = self.__dict__.setdefault("_infos", {})
            name = self._strip_protocol(path)
            if name not in infos:
                info = await super()._info(path, *args, **kwargs)
                if info.get("type") != "file" or not name.endswith(".parquet"):
                    return info
                infos[name] = info
            return dict(infos[name])

    return DescribedOnce


def _read_body(fs, response) -> bytes:
    from fsspec.asyn import sync

    async def read():
        async with response["Body"] as stream:
            return await stream.read()

    return sync(fs.loop, read)


def _md5(path: Path) -> str:
    """The ETag S3 gives a file uploaded in one PUT."""
    digest = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _cache_home() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "duplirank"


def _slug(url: str) -> str:
    """A folder name for a warehouse URL: readable, and unique by its hash."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", url.split("://", 1)[1])[:60]
    return f"{readable}-{hashlib.sha256(url.encode()).hexdigest()[:12]}"


__all__ = ["S3Store", "parse_url"]
