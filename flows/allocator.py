"""The memory allocator of a batch run, set before `polars` is imported.

Polars sets its allocator (jemalloc) to give freed memory back to the OS after 0.5 s (dirty
pages) and 1 s (muzzy) — see `polars/__init__.py`, pola-rs/polars#18088 — which keeps a
notebook's memory low. A nightly or backfill run frees and allocates columns of millions of
rows many times a second: memory given back is faulted in again page by page on the next
allocation. jemalloc's own defaults (dirty pages kept 10 s, then returned) measured 15–20 %
faster on the bridge benchmark (`bench/README.md`), with the same peak memory in the
backfill memory benchmark. A `_RJEM_MALLOC_CONF` already in the environment wins.

jemalloc reads its configuration once, when Polars' library loads: set after `polars` is
imported, it changes nothing for the process (child processes still inherit it). The commands
that run set it first (`flows/cli.py`), and so does the module a deployment's run imports
(`flows/nightly.py`).
"""

import os
from collections.abc import Mapping

BATCH_ALLOCATOR = {
    "_RJEM_MALLOC_CONF": "dirty_decay_ms:10000,muzzy_decay_ms:0",
    # numpy's OpenBLAS starts a thread per core that spins waiting for work; duplirank does no
    # linear algebra, and the spinning took ~1 % of an ingest's CPU from the threads that work.
    "OPENBLAS_NUM_THREADS": "1",
}


def batch_allocator(environ: Mapping[str, str]) -> dict[str, str]:
    """The batch allocator's variables that `environ` does not set already."""
    return {name: value for name, value in BATCH_ALLOCATOR.items() if name not in environ}


def use_batch_allocator() -> None:
    """Set the batch allocator's variables in this process's environment (given ones win)."""
    os.environ.update(batch_allocator(os.environ))
