"""Staged operations applied to a manifest: the result as the operations say, the manifest
they are applied to unchanged (its tables are shared, not copied)."""

from __future__ import annotations

import copy

from flows.storage import manifest as mf
from flows.storage.operations import (
    AddFile,
    MarkClean,
    MarkDirty,
    PutFile,
    RemovePartition,
    StagedFile,
)


def staged(name: str) -> StagedFile:
    return StagedFile(f"silver/t/{name}.parquet", name * 4, len(name))


def test_apply_ops_leaves_the_manifest_it_reads_unchanged():
    base = mf.empty()
    base = mf.apply_ops(
        base,
        [
            PutFile("silver", "a", "month=2026-01", staged("a1")),
            AddFile("silver", "a", "month=2026-01", staged("a2")),
            PutFile("silver", "a", "month=2026-02", staged("a3")),
            PutFile("gold", "b", "month=2026-01", staged("b1")),
            MarkDirty("simultane", ("2026-01", "2026-02")),
        ],
    )
    before = copy.deepcopy(base)
    after = mf.apply_ops(
        base,
        [
            AddFile("silver", "a", "month=2026-01", staged("a4")),
            PutFile("silver", "a", "month=2026-02", staged("a5")),
            RemovePartition("b", "month=2026-01"),
            PutFile("gold", "c", "month=2026-03", staged("c1")),
            MarkClean("simultane", ("2026-01",)),
        ],
    )
    assert base == before
    a = after["tables"]["a"]["partitions"]
    assert [f["path"] for f in a["month=2026-01"]] == [
        "silver/t/a1.parquet",
        "silver/t/a2.parquet",
        "silver/t/a4.parquet",
    ]
    assert [f["path"] for f in a["month=2026-02"]] == ["silver/t/a5.parquet"]
    assert after["tables"]["b"]["partitions"] == {}
    assert after["tables"]["c"] == {
        "layer": "gold",
        "partitions": {"month=2026-03": [staged("c1").entry()]},
    }
    assert after["dirty"] == {"simultane": ["2026-02"]}
    assert base["dirty"] == {"simultane": ["2026-01", "2026-02"]}
