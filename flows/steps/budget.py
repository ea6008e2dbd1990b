"""How many steps of a run hold their data in one process at once.

A run submits every partition of every competition before it awaits any (flows/runs.py), and
a thread pool (Prefect's default task runner) starts them all: each holds its partition's rows
in memory, so the run's peak grew with the months it rescores (a first load of a year, a
backfill). The steps run here under one budget per process instead:

- at most `slots` steps at once, one per CPU this process may use (Polars already spreads one
  step over every core: more steps at once add memory, not speed);
- at most `batch_rows` rows (settings) of the steps' inputs at once: a step whose input is
  bigger than that runs alone (and cuts its work into batches of `batch_rows` itself).

A step waits for its turn before it reads anything. The budget is per process: on a Dask
cluster each worker process has its own, alongside Dask's own limit of threads per worker.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Callable, Iterator


def cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class Budget:
    """A counting budget of steps and rows shared by the threads of one process."""

    def __init__(self, slots: int) -> None:
        self.slots = slots
        self.running = 0
        self.rows = 0
        self._turn = threading.Condition()

    @contextlib.contextmanager
    def take(self, rows: int, limit: int) -> Iterator[None]:
        """Hold one slot and `rows` rows (at most `limit`: a bigger step runs alone) of the
        budget while the block runs; wait until they are free."""
        rows = min(max(rows, 0), limit)
        with self._turn:
            self._turn.wait_for(
                lambda: (
                    self.running == 0 or (self.running < self.slots and self.rows + rows <= limit)
                )
            )
            self.running += 1
            self.rows += rows
        try:
            yield
        finally:
            with self._turn:
                self.running -= 1
                self.rows -= rows
                self._turn.notify_all()


BUDGET = Budget(cpus())


class Budgeted:
    """`step(ctx, *args)` run within the process's budget, weighing `rows(ctx, *args)` rows
    (the rows it reads: a whole history weighs `ctx.settings.batch_rows`, the most). A class,
    not a closure: a Dask task that refers to the steps pickles them by reference, and the
    budget (its lock) stays in each process."""

    def __init__(self, step: Callable, rows: Callable[..., int]) -> None:
        self.step, self.rows = step, rows
        functools.update_wrapper(self, step)

    def __call__(self, ctx, *args):
        with BUDGET.take(self.rows(ctx, *args), ctx.settings.batch_rows):
            return self.step(ctx, *args)


def whole(ctx, *args) -> int:
    """The weight of a step over a whole history: the whole budget (it runs alone)."""
    return ctx.settings.batch_rows
