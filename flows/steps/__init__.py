"""The steps of a run, one module per game, each a plain function of a `StepContext`.

read → validate (flows/ingest) → score each partition (month_step) → history tables from
the first changed month (history_step) → one publication (flows/storage)
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from pathlib import Path

from flows.steps import bridge, face_a_face, simultane
from flows.steps.budget import Budgeted, whole
from flows.steps.context import COMPETITIONS, StepContext, partition_rows
from flows.storage.operations import Operation


@dataclasses.dataclass(frozen=True)
class Sharded:
    """A history cut into shards of players: `plan` (in the run's process), `shard` per
    shard (anywhere: a Dask worker), `finish` once with every shard's operations."""

    plan: Callable[[StepContext, str, int], object]  # (context, first month, workers) -> plan
    shard: Callable[[StepContext, object, int], list[Operation]]  # (context, plan, shard) -> ops
    finish: Callable[[StepContext, object, list[Operation]], list[Operation]]


@dataclasses.dataclass(frozen=True)
class Steps:
    month: Callable[[StepContext, str], list[Operation]]  # (context, partition) -> operations
    history: Callable[[StepContext, str], list[Operation]] | None  # (context, first month) -> ops
    sharded: Sharded | None = None  # the same history, cut into shards of players


def _steps(competition: str, month, history=None, sharded: Sharded | None = None) -> Steps:
    """A competition's steps, each run within the process's memory budget (budget.py): a
    partition weighs its bronze rows, a history (or a shard of one) the whole budget."""
    return Steps(
        Budgeted(month, functools.partial(_partition_rows, competition)),
        Budgeted(history, whole) if history else None,
        sharded
        and Sharded(sharded.plan, Budgeted(sharded.shard, whole), Budgeted(sharded.finish, whole)),
    )


def _partition_rows(competition: str, ctx: StepContext, part: str) -> int:
    return partition_rows(ctx, competition, part)


STEPS: dict[str, Steps] = {
    "simultane": _steps(
        "simultane",
        simultane.month_step,
        simultane.history_step,
        Sharded(simultane.history_plan, simultane.history_shard, simultane.history_finish),
    ),
    # Elo runs over every match in order of end: one sequential task
    "face_a_face": _steps("face_a_face", face_a_face.month_step, face_a_face.history_step),
    "bridge": _steps("bridge", bridge.month_step),
}


def ingest_step(ctx: StepContext, paths: list[Path], progress=None):
    """Validate and stage landing files; returns (IngestResult, operations) — the bronze it
    stages is published by the run's one commit, with the partitions it touched marked dirty
    (a run that only ingests leaves them for the next nightly to rebuild). Stages nothing
    when nothing is new."""
    from flows.ingest import ingest

    tx = ctx.transaction()
    result = ingest(ctx.wh, tx, paths, ctx.settings.ingest, ctx.as_of, progress)
    return result, _mark_touched(tx, result)


def replay_step(ctx: StepContext, reason: str | None = None):
    """`duplirank ingest --replay-quarantine`: quarantined lines (whose reason contains
    `reason`) validated again; those that now pass go to bronze. Returns (result, ops)."""
    from flows.ingest.run import replay

    tx = ctx.transaction()
    result = replay(ctx.wh, tx, reason, ctx.settings.ingest, ctx.as_of)
    return result, _mark_touched(tx, result)


def _mark_touched(tx, result) -> list[Operation]:
    if tx.ops:
        for competition, record_types in COMPETITIONS.items():
            tx.mark_dirty(competition, result.touched(*record_types))
    return tx.ops


__all__ = ["COMPETITIONS", "STEPS", "Sharded", "StepContext", "Steps", "ingest_step", "replay_step"]
