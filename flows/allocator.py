"""The memory allocator of a batch run (import before `polars`).

Polars sets its allocator (jemalloc) to give freed memory back to the OS after 0.5 s (dirty
pages) and 1 s (muzzy) — see `polars/__init__.py`, pola-rs/polars#18088 — which keeps a
notebook's memory low. A nightly or backfill run frees and allocates columns of millions of
rows many times a second: memory given back is faulted in again page by page on the next
allocation. jemalloc's own defaults (dirty pages kept 10 s, then returned) measured 15–20 %
faster on the bridge benchmark (`bench/README.md`), with the same peak memory in the
backfill memory benchmark. A `_RJEM_MALLOC_CONF` already in the environment wins.
"""

import os

os.environ.setdefault("_RJEM_MALLOC_CONF", "dirty_decay_ms:10000,muzzy_decay_ms:0")

# numpy's OpenBLAS starts a thread per core that spins waiting for work; duplirank does no
# linear algebra, and the spinning took ~1 % of an ingest's CPU from the threads that work.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
