"""Read buffers used again: a block of a file is read into a buffer another block has left,
not into new memory (new memory is zeroed by the kernel page by page as it is first
written: a fifth of the CPU of reading a file went there).

A buffer is free when nothing but the pool refers to it: every view of it (a block, the
lines of a chunk, an Arrow buffer over them) holds a reference to the array that owns the
memory, so a buffer some chunk still uses is never handed out. The pool keeps at most `KEPT`
buffers, of which `SPARE` free ones; `release` gives their memory back (after the files of
a run are read).
"""

from __future__ import annotations

import sys
import threading

import numpy as np

KEPT = 8  # buffers kept: the blocks a file's reading, parsing and checking hold at once
SPARE = 1  # free buffers kept beside the one handed out

_LOCK = threading.Lock()
_BUFFERS: list[np.ndarray] = []
_ALONE = [np.empty(0)]  # an array only its list refers to: the count of a free buffer


def take(size: int, capacity: int) -> np.ndarray:
    """An uninitialised uint8 array of `size` bytes: a view of a free buffer of the pool, or
    of a new one of `capacity` bytes (kept by the pool while it holds fewer than `KEPT`)."""
    with _LOCK:
        alone = sys.getrefcount(_ALONE[0])  # counted the same way as the buffers below
        # no more references than the list's: no block, chunk or view uses it
        free = [i for i in range(len(_BUFFERS)) if sys.getrefcount(_BUFFERS[i]) <= alone]
        chosen = next((i for i in free if len(_BUFFERS[i]) >= size), None)
        block = None if chosen is None else _BUFFERS[chosen][:size]
        # free buffers beyond SPARE give their memory back (they would only add to the peak)
        drop = set([i for i in free if i != chosen][SPARE:])
        if drop:
            _BUFFERS[:] = [b for i, b in enumerate(_BUFFERS) if i not in drop]
        if block is not None:
            return block
        buffer = np.empty(max(size, capacity), np.uint8)
        if len(_BUFFERS) < KEPT:
            _BUFFERS.append(buffer)
        return buffer[:size]


def release() -> None:
    """Forget the pool's buffers (their memory goes back once no block uses them)."""
    with _LOCK:
        _BUFFERS.clear()
