"""What a run is doing, on standard error, from its first second (stdout keeps the results).

The flows report through a small API:

    with progress.stage("ingest", total=len(files), unit="files") as bar:
        for path in files:
            ...
            bar.advance(1, lines=n)          # main count, plus named side counts
    progress.note("nothing new in data/landing")
    progress.summary({"quarantined lines by reason": {"invalid JSON": 3}})

Three modes, chosen once per process by `configure` (the CLI does it):
- `rich`: a terminal gets live bars with counts, rate and ETA (rich, shipped with Prefect);
- `plain`: not a terminal (cron, a pipe, a log collector): one line when a stage starts, at most
  one line every `interval` seconds while it runs, one line when it ends;
- `quiet` (`--quiet`): nothing but errors.

Stages are keyed by name: opening a stage that is already open joins it (same bar, same
counts), so an outer flow can open `ingest` and the code inside can open it again to set its
total and advance it. Every call is thread-safe (tasks run in threads). The time of each stage
and the first stage that failed are kept for the run's summary and its one-line error.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # rich is imported by the rich mode only (~20 ms a command otherwise)
    from rich.console import Console
    from rich.progress import Progress, TaskID

MODES = ("rich", "plain", "quiet")
PLAIN_INTERVAL_S = 5.0


def _number(n: float) -> str:
    return f"{n:,.0f}" if float(n).is_integer() else f"{n:,.1f}"


def _amount(n: float, unit: str) -> str:
    """`3 months`, `1 month`, `5`."""
    unit = unit[:-1] if n == 1 and unit.endswith("s") else unit
    return f"{_number(n)} {unit}".rstrip()


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _count_column():
    """`20/135` (`20/?` while the total is unknown); nothing for a stage with no unit."""
    from rich.progress import MofNCompleteColumn
    from rich.text import Text

    class _Count(MofNCompleteColumn):
        def render(self, task) -> Text:
            if not task.fields.get("unit"):
                return Text("")
            return super().render(task)

    return _Count()


def _rich_console() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False)


class _Stderr:
    """The console of the plain and quiet modes: standard error as it is when printed to."""

    @property
    def file(self):
        return sys.stderr


def _may_be_terminal() -> bool:
    """False when rich's console would not call standard error a terminal either (not a
    tty, nothing forcing it): then the plain mode is chosen without importing rich."""
    if os.environ.get("TTY_COMPATIBLE") in ("0", "1"):
        return os.environ["TTY_COMPATIBLE"] == "1"
    if os.environ.get("FORCE_COLOR") is not None:
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


@dataclass
class Stage:
    """One step of a run; use through `progress.stage(...)` as a context manager."""

    reporter: Reporter
    name: str
    total: float | None = None
    unit: str = ""
    done: float = 0
    counts: dict[str, float] = field(default_factory=dict)
    detail: str = ""
    started: float = 0.0
    seconds: float | None = None
    failed: str = ""  # "failed" or "interrupted" when the stage ended with an exception
    depth: int = 0
    task_id: TaskID | None = None
    last_line: float = 0.0

    def advance(self, n: float = 1, **counts: float) -> None:
        """`n` more of the main unit done, and more of each named side count (e.g. lines)."""
        self.reporter._changed(self, advance=n, counts=counts)

    def update(
        self, total: float | None = None, detail: str | None = None, **counts: float
    ) -> None:
        """Set the total (when it becomes known), a detail (e.g. the month), side counts."""
        self.reporter._changed(self, total=total, detail=detail, set_counts=counts)

    @property
    def label(self) -> str:
        return f"{self.name} {self.detail}".strip()

    def text(self) -> str:
        """`ingest: 20/135 files, 12,345 lines` (what the plain mode prints)."""
        main = _number(self.done)
        if self.total is not None:
            main += f"/{_number(self.total)}"
        parts = [f"{main} {self.unit}".strip()] if (self.unit or self.total) else []
        parts += [f"{_number(v)} {k}" for k, v in self.counts.items()]
        return f"{self.label}: {', '.join(parts)}" if parts else self.label


class Reporter:
    """The progress of one process (see the module's docstring)."""

    def __init__(
        self,
        mode: str = "auto",
        console: Console | None = None,
        interval: float = PLAIN_INTERVAL_S,
        clock=time.monotonic,
    ):
        if console is None:
            if mode == "auto" and not _may_be_terminal():
                mode = "plain"
            console = _rich_console() if mode in ("auto", "rich") else _Stderr()
        self.console = console
        if mode == "auto":
            mode = "rich" if self.console.is_terminal else "plain"
        if mode not in MODES:
            raise ValueError(f"progress mode {mode!r} not one of {', '.join(MODES)}")
        self.mode = mode
        self.interval = interval
        self.clock = clock
        self.stages: dict[str, Stage] = {}  # open stages by name
        self.finished: list[Stage] = []
        self.failed_stage: str | None = None
        self._lock = threading.RLock()
        self._bars: Progress | None = None

    # ----------------------------------------------------------------- the flows' API
    @contextmanager
    def stage(self, name: str, total: float | None = None, unit: str = "") -> Iterator[Stage]:
        with self._lock:
            current = self.stages.get(name)
            if current is None:
                current = Stage(self, name, total, unit, started=self.clock())
                current.last_line = current.started
                self.stages[name] = current
                self._open(current)
            else:
                if total is not None:
                    current.total = total
                if unit and not current.unit:
                    current.unit = unit
                self._refresh(current)
            current.depth += 1
        try:
            yield current
        except BaseException as exc:
            with self._lock:
                current.failed = "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed"
                if self.failed_stage is None:
                    self.failed_stage = current.label
            raise
        finally:
            with self._lock:
                current.depth -= 1
                if current.depth == 0:
                    self._close(current)

    def note(self, text: str) -> None:
        """An informational line (shown in the rich and plain modes, not with --quiet)."""
        if self.mode == "quiet":
            return
        with self._lock:
            self._print(text)

    def error(self, text: str) -> None:
        """A line shown in every mode (the one-line errors)."""
        with self._lock:
            self._stop_bars()
            print(text, file=self.console.file, flush=True)

    def timings(self) -> list[tuple[str, float, str]]:
        """(stage, seconds, what it did) of each finished stage, in the order they ended."""
        return [(s.name, s.seconds or 0.0, s.text().partition(": ")[2]) for s in self.finished]

    def summary(self, sections: dict[str, dict[str, float]] | None = None) -> None:
        """The run's final table: time of each stage, then each section's counts."""
        if self.mode == "quiet":
            return
        with self._lock:
            self._stop_bars()
            if self.mode == "rich":
                from rich.table import Table

                table = Table(title="run summary", title_justify="left", show_edge=False)
                table.add_column("stage")
                table.add_column("time", justify="right")
                table.add_column("done")
                for name, seconds, done in self.timings():
                    table.add_row(name, _duration(seconds), done)
                self.console.print(table)
                for title, counts in (sections or {}).items():
                    if counts:
                        part = Table(show_edge=False)
                        part.add_column(title)
                        part.add_column("count", justify="right")
                        for key, n in counts.items():
                            part.add_row(key, _number(n))
                        self.console.print(part)
                return
            width = max([len(n) for n, _, _ in self.timings()] + [5])
            lines = ["run summary:"]
            for name, seconds, done in self.timings():
                lines.append(f"  {name:<{width}}  {_duration(seconds):>8}  {done}".rstrip())
            for title, counts in (sections or {}).items():
                if counts:
                    lines.append(f"{title}:")
                    lines += [f"  {_number(n):>8}  {k}" for k, n in counts.items()]
            self._print("\n".join(lines))

    def close(self) -> None:
        with self._lock:
            self._stop_bars()

    # ----------------------------------------------------------------- internals
    def _print(self, text: str) -> None:
        if self._bars is not None:
            self._bars.console.print(text, markup=False, highlight=False)
        elif self.mode == "rich":
            self.console.print(text, markup=False, highlight=False)
        else:
            print(text, file=self.console.file, flush=True)

    def _open(self, stage: Stage) -> None:
        if self.mode == "plain":
            total = f" ({_amount(stage.total, stage.unit)})" if stage.total else ""
            self._print(f"starting {stage.name}{total}…")
        elif self.mode == "rich":
            if self._bars is None:
                from rich.progress import (
                    BarColumn,
                    Progress,
                    SpinnerColumn,
                    TextColumn,
                    TimeElapsedColumn,
                    TimeRemainingColumn,
                )

                self._bars = Progress(
                    SpinnerColumn(finished_text="[green]✓"),
                    TextColumn("{task.description}"),
                    BarColumn(bar_width=30),
                    _count_column(),
                    TextColumn("{task.fields[unit]}"),
                    TextColumn("{task.fields[counts]}"),
                    TimeElapsedColumn(),
                    TimeRemainingColumn(),
                    console=self.console,
                    transient=False,
                )
                self._bars.start()
            stage.task_id = self._bars.add_task(
                stage.label, total=stage.total, unit=stage.unit, counts=""
            )

    def _refresh(self, stage: Stage) -> None:
        if self.mode == "rich" and self._bars is not None and stage.task_id is not None:
            counts = ", ".join(f"{_number(v)} {k}" for k, v in stage.counts.items())
            self._bars.update(
                stage.task_id,
                total=stage.total,
                completed=stage.done,
                description=stage.label,
                unit=stage.unit,
                counts=counts,
            )
        elif self.mode == "plain":
            now = self.clock()
            if now - stage.last_line >= self.interval:
                stage.last_line = now
                self._print(self._plain_line(stage, now))

    def _plain_line(self, stage: Stage, now: float) -> str:
        line = stage.text()
        if stage.total and stage.done:
            elapsed = now - stage.started
            left = elapsed * (stage.total - stage.done) / stage.done
            line += f" ({100 * stage.done / stage.total:.0f} %, ETA {_duration(left)})"
        return line

    def _changed(
        self,
        stage: Stage,
        advance: float = 0,
        counts: dict[str, Any] | None = None,
        total: float | None = None,
        detail: str | None = None,
        set_counts: dict[str, Any] | None = None,
    ) -> None:
        with self._lock:
            stage.done += advance
            for key, n in (counts or {}).items():
                stage.counts[key] = stage.counts.get(key, 0) + n
            stage.counts.update(set_counts or {})
            if total is not None:
                stage.total = total
            if detail is not None:
                stage.detail = detail
            self._refresh(stage)

    def _close(self, stage: Stage) -> None:
        stage.seconds = self.clock() - stage.started
        del self.stages[stage.name]
        self.finished.append(stage)
        if self.mode == "plain":
            verdict = f"{stage.failed} after" if stage.failed else "done in"
            body = stage.text().partition(": ")[2]
            body = f"{body}, " if body else ""
            self._print(f"{stage.label}: {body}{verdict} {_duration(stage.seconds)}")
        elif self.mode == "rich" and self._bars is not None and stage.task_id is not None:
            self._refresh(stage)
            if stage.failed:
                self._bars.update(stage.task_id, description=f"[red]{stage.label} ({stage.failed})")
            elif stage.total is None:  # an open-ended stage is complete when it ends
                self._bars.update(
                    stage.task_id, total=max(stage.done, 1), completed=max(stage.done, 1)
                )
            self._bars.stop_task(stage.task_id)
            if not self.stages:
                self._stop_bars()

    def _stop_bars(self) -> None:
        if self._bars is not None:
            self._bars.stop()
            self._bars = None


# --------------------------------------------------------------------- one per process
_reporter = Reporter("plain")
_reporter_lock = threading.Lock()


def configure(
    mode: str = "auto", console: Console | None = None, interval: float = PLAIN_INTERVAL_S
) -> Reporter:
    """Start a new report for this process (`mode`: auto, rich, plain, quiet)."""
    global _reporter
    with _reporter_lock:
        _reporter.close()
        _reporter = Reporter(mode, console, interval)
        return _reporter


def reporter() -> Reporter:
    return _reporter


def stage(name: str, total: float | None = None, unit: str = ""):
    """A stage of the run (context manager yielding a `Stage`; joins an open one of that name)."""
    return _reporter.stage(name, total, unit)


def note(text: str) -> None:
    _reporter.note(text)


def error(text: str) -> None:
    _reporter.error(text)


def summary(sections: dict[str, dict[str, float]] | None = None) -> None:
    _reporter.summary(sections)


def failed_stage() -> str | None:
    return _reporter.failed_stage


def count_ingest(bar: Stage, result) -> None:
    """Bring an ingest stage's counts to an `IngestResult`'s totals (files, lines), whatever
    was advanced inside it already."""
    files = result.files
    bar.update(total=len(files), lines=sum(f.lines_read for f in files))
    if bar.done < len(files):
        bar.advance(len(files) - bar.done)
