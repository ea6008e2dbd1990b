"""Read buffers used again (`flows/ingest/block_pool.py`): never one a block still uses."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from flows.ingest import block_pool


def _owner(view: np.ndarray) -> int:
    """The buffer a view is of (its id: holding it would keep it in use)."""
    return id(view.base if view.base is not None else view)


def test_a_buffer_is_handed_out_again_only_when_nothing_refers_to_it():
    block_pool.release()
    try:
        first = block_pool.take(100, 256)
        owner = _owner(first)
        line = first[10:20]  # a view of a block, as a chunk's lines are
        del first
        assert _owner(block_pool.take(100, 256)) != owner
        lines = pa.py_buffer(line)  # the Arrow buffer over them
        del line
        assert _owner(block_pool.take(100, 256)) != owner
        array = pa.LargeBinaryArray.from_buffers(
            pa.large_binary(), 1, [None, pa.py_buffer(np.array([0, 10], np.int64)), lines]
        )
        del lines
        assert _owner(block_pool.take(100, 256)) != owner
        del array
        again = block_pool.take(200, 256)  # free at last, and large enough
        assert _owner(again) == owner and len(again) == 200
        assert _owner(block_pool.take(300, 256)) != owner  # too small for 300 bytes
    finally:
        block_pool.release()


def test_the_pool_keeps_a_bounded_number_of_buffers_and_one_spare():
    block_pool.release()
    try:
        held = [block_pool.take(10, 16) for _ in range(block_pool.KEPT + 3)]
        assert len({_owner(h) for h in held}) == block_pool.KEPT + 3  # each a buffer of its own
        kept = {_owner(h) for h in held[: block_pool.KEPT]}
        del held
        assert len(block_pool._BUFFERS) == block_pool.KEPT
        assert {_owner(block_pool.take(10, 16)) for _ in range(5)} <= kept  # used again
        assert len(block_pool._BUFFERS) == 1 + block_pool.SPARE  # the other free ones dropped
    finally:
        block_pool.release()
    assert not block_pool._BUFFERS
