"""An S3-compatible object store for the tests: moto's S3 server, in this process (a thread on
a free port of 127.0.0.1), which enforces conditional writes (412) like AWS S3 does."""

from __future__ import annotations

import logging
import uuid

import pytest

from flows.cluster_options import ClusterOptions
from flows.settings import Settings, SiteOptions
from tests.storage.conftest import split_landing  # noqa: F401 (the tests import it from here)

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
               "AWS_REGION": "us-east-1"}  # fmt: skip


@pytest.fixture(scope="session")
def s3_server():
    """The endpoint URL of a moto S3 server running for the whole session."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def s3(s3_server, tmp_path, monkeypatch):
    """A new bucket; the `AWS_*` variables point at the server (as a user would set them),
    and the cache of fetched objects is private to the test."""
    for name, value in {**CREDENTIALS, "AWS_ENDPOINT_URL": s3_server}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    import s3fs

    bucket = f"wh-{uuid.uuid4().hex[:12]}"
    fs = s3fs.S3FileSystem(
        endpoint_url=s3_server,
        key="testing",
        secret="testing",
        skip_instance_cache=True,
        use_listings_cache=False,
    )
    fs.mkdir(bucket)
    return Bucket(bucket, fs, s3_server)


class Bucket:
    def __init__(self, name: str, fs, endpoint: str):
        self.name, self.fs, self.endpoint = name, fs, endpoint

    def url(self, prefix: str) -> str:
        return f"s3://{self.name}/{prefix}"

    def keys(self, prefix: str) -> list[str]:
        start = len(f"{self.name}/{prefix}/")
        try:
            return sorted(k[start:] for k in self.fs.find(f"{self.name}/{prefix}"))
        except FileNotFoundError:
            return []

    def copy_tree(self, source: str, target: str) -> None:
        """A server-side copy of every object under a prefix (a warehouse copied)."""
        for key in self.keys(source):
            self.fs.copy(f"{self.name}/{source}/{key}", f"{self.name}/{target}/{key}")


def settings(warehouse, landing, site: bool = False, **more) -> Settings:
    return Settings(warehouse=warehouse, landing=landing, site=SiteOptions(enabled=site), **more)


def dask_settings(warehouse, landing, workers: int = 2, **more) -> Settings:
    return settings(
        warehouse, landing, cluster=ClusterOptions(runner="dask", workers=workers), **more
    )
