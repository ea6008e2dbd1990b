"""The steps of a run share one budget per process (flows/steps/budget.py): at most `slots`
steps and `batch_rows` input rows at once, a step bigger than the budget alone."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from flows.steps.budget import Budget


def _run_all(budget: Budget, weights: list[int], limit: int) -> list[tuple[int, int]]:
    """Run one short step per weight on many threads at once; returns the (steps, rows)
    running as each step started."""
    seen, lock = [], threading.Lock()

    def step(rows: int) -> None:
        with budget.take(rows, limit):
            with lock:
                seen.append((budget.running, budget.rows))
            time.sleep(0.02)

    with ThreadPoolExecutor(len(weights)) as pool:
        list(pool.map(step, weights))
    assert (budget.running, budget.rows) == (0, 0)  # everything given back
    return seen


def test_no_more_steps_than_slots_run_at_once():
    seen = _run_all(Budget(slots=2), [1] * 8, limit=100)
    assert max(steps for steps, _ in seen) == 2


def test_no_more_rows_than_the_limit_run_at_once():
    seen = _run_all(Budget(slots=8), [40] * 6, limit=100)
    assert max(rows for _, rows in seen) <= 100
    assert max(steps for steps, _ in seen) == 2  # 2 x 40 fit, 3 do not


def test_a_step_bigger_than_the_budget_runs_alone():
    seen = _run_all(Budget(slots=4), [500, 10, 10, 500, 10], limit=100)
    alone = [(steps, rows) for steps, rows in seen if rows >= 100]
    assert alone == [(1, 100), (1, 100)]
