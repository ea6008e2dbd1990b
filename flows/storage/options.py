"""Settings of the object store (section `storage`): where an `s3://` warehouse or landing is
served, and how long an unlisted object is presumed to belong to a run in flight.

Every field left unset falls back to the standard variables of the AWS tools, read by botocore
(`AWS_ENDPOINT_URL` / `AWS_ENDPOINT_URL_S3`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
`AWS_SESSION_TOKEN`, `AWS_REGION` / `AWS_DEFAULT_REGION`, `AWS_PROFILE` and `~/.aws/…`), so
a machine set up for the `aws` command needs nothing more. A local folder uses none of them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from transforms.option_checks import OptionError


@dataclass(frozen=True)
class StorageOptions:
    endpoint_url: str | None = None  # any S3-compatible store (MinIO, Ceph, R2…); AWS if unset
    region: str | None = None
    access_key_id: str | None = None
    secret_access_key: str | None = field(default=None, repr=False)
    session_token: str | None = field(default=None, repr=False)
    # garbage collection on object storage never deletes an unlisted object younger than
    # this: another machine's run may have written it and not yet published (no lock there)
    gc_grace_hours: float = 24.0
    # where `duplirank sql` keeps the views databases it fetched (default ~/.cache/duplirank)
    cache_dir: Path | None = None

    def __post_init__(self) -> None:
        if not (self.gc_grace_hours >= 0) or math.isinf(self.gc_grace_hours):
            raise OptionError("gc_grace_hours", f"must be a number >= 0, not {self.gc_grace_hours}")
        if self.endpoint_url is not None and "://" not in self.endpoint_url:
            raise OptionError(
                "endpoint_url", f"{self.endpoint_url!r} is not a URL (http(s)://host:port)"
            )


@dataclass(frozen=True)
class RetentionOptions:
    """Section `retention`: which publications outlive `retention_days`."""

    # the publication current at each month's end, and a backfill's that changed an announced
    # month, are kept for ever (`duplirank publications`, `sql --as-of`)
    keep_official: bool = True
