"""Garbage collection: a dry run says what a collection then deletes, as a printable value."""

from __future__ import annotations

import dataclasses

from flows.storage.retention import Collected, RetentionPolicy, collect_garbage
from flows.storage.warehouse import Warehouse
from tests.storage.test_publication import data_files, publish, tree


def test_a_dry_run_reports_exactly_what_the_collection_then_deletes(tmp_path):
    root = tmp_path / "wh"
    for number in (1, 2, 3):
        publish(root, f"r{number}", {"2026-08": [number]}, retention_days=10_000)
    (first,) = [
        f for f in data_files(root) if f.split("/")[-1].startswith("r1-") and "month=2026-08" in f
    ]
    size = (root / first).stat().st_size
    policy = RetentionPolicy(days=0, keep_official=False)  # the current and the previous one
    before = tree(root)

    dry = collect_garbage(Warehouse(root), policy, dry_run=True)

    assert dry == Collected(
        dry_run=True,
        files=(first,),
        bytes=size,
        publications=("_publications/00000001-r1",),
        kept=("_publications/00000002-r2", "_publications/00000003-r3"),
    )
    assert str(dry) == (
        f"would delete 1 files ({size:,} bytes) and 1 publications; kept 2 publications\n"
        "  would delete _publications/00000001-r1"
    )
    assert tree(root) == before  # nothing deleted

    done = collect_garbage(Warehouse(root), policy)

    assert done == dataclasses.replace(dry, dry_run=False)
    assert str(done).splitlines()[0] == (
        f"deleted 1 files ({size:,} bytes) and 1 publications; kept 2 publications"
    )
    assert first not in data_files(root)
    assert sorted(p.name for p in (root / "_publications").iterdir()) == [
        "00000002-r2",
        "00000003-r3",
    ]
    assert collect_garbage(Warehouse(root), policy) == Collected(
        kept=("_publications/00000002-r2", "_publications/00000003-r3")
    )


def test_an_unreadable_manifest_stops_the_collection_and_says_why(tmp_path):
    root = tmp_path / "wh"
    publish(root, "r1", {"2026-08": [1]})
    publish(root, "r2", {"2026-08": [2]})
    manifest = root / "_publications/00000001-r1/manifest.json"
    manifest.chmod(0o644)
    manifest.write_text("{}")
    before = tree(root)

    # written within the retention period: it may list files no other manifest does
    result = collect_garbage(Warehouse(root), RetentionPolicy(days=7, keep_official=False))

    assert str(result) == (
        "nothing collected: the manifest of _publications/00000001-r1 cannot be read "
        "(`duplirank recover`)"
    )
    assert tree(root) == before
