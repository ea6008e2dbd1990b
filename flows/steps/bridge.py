"""Bridge step: board results and standings of the events of one bronze partition (an event
and its traveller lines and penalties share the partition of its date)."""

from __future__ import annotations

from flows.steps.context import StepContext
from flows.steps.units import unit_partition_step
from flows.storage.operations import Operation
from transforms.calendar import date_month_expr

EVENT = "event_id"


def month_step(ctx: StepContext, part: str) -> list[Operation]:
    from transforms.bridge.event import score_events

    return unit_partition_step(
        ctx,
        "bridge",
        part,
        EVENT,
        score=lambda inputs: score_events(inputs).collect(),
        tables=(("silver", "bridge_board_results"), ("gold", "bridge_standings")),
        unit_types=("bridge.event",),
        month_of_unit=("bridge.event", date_month_expr("date")),
        rules={},  # an event's scores read its own rows and no option
    )
