"""Progress on stderr: plain lines (not a terminal), rich bars (a terminal), quiet, threads."""

from __future__ import annotations

import io
import re
import threading

import pytest
from rich.console import Console

from flows import progress
from flows.progress import Reporter


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def plain(interval: float = 5.0):
    buffer, clock = io.StringIO(), Clock()
    reporter = Reporter("plain", Console(file=buffer), interval=interval, clock=clock)
    return reporter, buffer, clock


def test_plain_lines_at_start_at_most_every_interval_and_at_the_end():
    reporter, buffer, clock = plain(interval=5)
    with reporter.stage("ingest", total=135, unit="files") as bar:
        for _ in range(135):
            clock.now += 0.1  # 13.5 s in all: lines after 5 s and 10 s, not for every file
            bar.advance(1, lines=1000)
    assert buffer.getvalue().splitlines() == [
        "starting ingest (135 files)…",
        "ingest: 50/135 files, 50,000 lines (37 %, ETA 8.5 s)",
        "ingest: 100/135 files, 100,000 lines (74 %, ETA 3.5 s)",
        "ingest: 135/135 files, 135,000 lines, done in 13.5 s",
    ]


def test_plain_stage_without_total_and_a_failed_stage():
    reporter, buffer, clock = plain()
    with reporter.stage("Prefect server"):
        clock.now += 6.2
    with pytest.raises(RuntimeError):
        with reporter.stage("score simultane", total=1, unit="months") as bar:
            bar.update(detail="2026-11")
            clock.now += 2
            raise RuntimeError("boom")
    assert buffer.getvalue().splitlines() == [
        "starting Prefect server…",
        "Prefect server: done in 6.2 s",
        "starting score simultane (1 month)…",
        "score simultane 2026-11: 0/1 months, failed after 2.0 s",
    ]
    assert reporter.failed_stage == "score simultane 2026-11"


def test_an_open_stage_is_joined_by_name():
    reporter, buffer, clock = plain()
    with reporter.stage("ingest", unit="files") as outer:
        with reporter.stage("ingest", total=3) as inner:  # code deeper in sets the total
            assert inner is outer
            inner.advance(3, lines=30)
        assert "done" not in buffer.getvalue()  # the inner exit does not end the stage
        clock.now += 1
    assert buffer.getvalue().splitlines()[-1] == "ingest: 3/3 files, 30 lines, done in 1.0 s"
    assert reporter.timings() == [("ingest", 1.0, "3/3 files, 30 lines")]


def test_plain_summary_lists_stage_times_and_counts():
    reporter, buffer, clock = plain()
    with reporter.stage("ingest", total=2, unit="files") as bar:
        clock.now += 1.5
        bar.advance(2)
    with reporter.stage("publish"):
        clock.now += 0.25
    reporter.summary({"quarantined lines by reason": {"invalid JSON": 5, "duplicate": 1}})
    assert buffer.getvalue().splitlines()[-6:] == [
        "run summary:",
        "  ingest      1.5 s  2/2 files",
        "  publish     0.2 s",
        "quarantined lines by reason:",
        "         5  invalid JSON",
        "         1  duplicate",
    ]


def test_rich_mode_draws_bars_with_counts_and_a_summary_table():
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=120, color_system=None)
    reporter = Reporter("auto", console)  # a terminal: rich
    assert reporter.mode == "rich"
    with reporter.stage("ingest", total=4, unit="files") as bar:
        for _ in range(4):
            bar.advance(1, lines=250)
    reporter.note("a note between stages")
    reporter.summary({"quarantined lines by reason": {"invalid JSON": 3}})
    text = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", buffer.getvalue())  # no cursor codes
    assert "━" in text  # a bar
    assert "4/4 files 1,000 lines" in text
    assert "a note between stages" in text
    assert "run summary" in text and "ingest" in text
    assert "invalid JSON" in text and "quarantined lines by reason" in text
    assert "starting ingest" not in text  # the plain lines are not printed on a terminal


def test_not_a_terminal_is_plain():
    assert Reporter("auto", Console(file=io.StringIO())).mode == "plain"


@pytest.mark.parametrize(
    ("environ", "mode"),
    [({}, "plain"), ({"TTY_COMPATIBLE": "1"}, "rich"), ({"FORCE_COLOR": "1"}, "rich"),
     ({"FORCE_COLOR": ""}, "plain"), ({"TTY_COMPATIBLE": "0", "FORCE_COLOR": "1"}, "plain")],
)  # fmt: skip
def test_auto_mode_on_standard_error_as_rich_sees_it(monkeypatch, environ, mode):
    """With no console given, `auto` chooses as rich's console of standard error does (a pipe
    here), rich imported only when that may be a terminal."""
    for name in ("TTY_COMPATIBLE", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr("sys.stderr", io.StringIO())
    reporter = Reporter("auto")
    assert reporter.mode == mode
    assert reporter.mode == ("rich" if Console(stderr=True).is_terminal else "plain")


def test_quiet_prints_only_errors():
    buffer = io.StringIO()
    reporter = Reporter("quiet", Console(file=buffer))
    with reporter.stage("ingest", total=2, unit="files") as bar:
        bar.advance(2)
    reporter.note("hello")
    reporter.summary({"x": {"y": 1}})
    assert buffer.getvalue() == ""
    reporter.error("duplirank nightly: error: something")
    assert buffer.getvalue() == "duplirank nightly: error: something\n"


def test_counts_are_exact_when_threads_advance_one_stage():
    reporter = Reporter("plain", Console(file=io.StringIO()), interval=0)
    with reporter.stage("score", total=8000, unit="rows") as bar:

        def work():
            for _ in range(1000):
                bar.advance(1, batches=1)

        threads = [threading.Thread(target=work) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert bar.done == 8000 and bar.counts == {"batches": 8000}


def test_threads_opening_stages_at_once_in_rich_mode():
    buffer = io.StringIO()
    reporter = Reporter("rich", Console(file=buffer, force_terminal=True, width=100))

    def month(name):
        with reporter.stage(name, total=50, unit="batches") as bar:
            for _ in range(50):
                bar.advance()

    threads = [threading.Thread(target=month, args=(f"score 2026-{m:02d}",)) for m in range(1, 9)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(name for name, _, _ in reporter.timings()) == [
        f"score 2026-{m:02d}" for m in range(1, 9)
    ]
    assert all(done == "50/50 batches" for _, _, done in reporter.timings())
    reporter.close()


def test_the_module_api_uses_the_configured_reporter():
    buffer = io.StringIO()
    progress.configure("plain", Console(file=buffer))
    try:
        with progress.stage("publish"):
            progress.note("swapping the manifest")
        assert buffer.getvalue().splitlines()[:2] == ["starting publish…", "swapping the manifest"]
        assert progress.failed_stage() is None
    finally:
        progress.configure("plain")
