"""The commands that write the warehouse run in a child process that this one watches.

Some deaths cannot be caught by the process that dies. An allocation that fails in Polars' or
DuckDB's native code aborts the process (SIGABRT). The kernel's out-of-memory killer sends
SIGKILL, and a fault in a library is a SIGSEGV or a SIGBUS. No `except` or `finally` runs for
any of them. So `duplirank nightly`, `ingest`, `backfill`, `repair`, `recover`, `relink` and
`gc` fork as soon as their arguments are parsed, before Polars, DuckDB or Prefect are
imported. The child runs the command as before. This process only waits for it:

- The child's standard input, output and error are this process's, unchanged. Its exit code is
  this process's exit code.
- The child dies with this process (`PR_SET_PDEATHSIG`): killing the command, even with
  SIGKILL, leaves no process running.
- Ctrl-C reaches both (same process group). The child handles it; this process leaves it to
  the child. A SIGINT, SIGTERM or SIGHUP sent by another process is passed on to the child.
  When a whole group is signalled the child receives the signal twice, so the child ignores
  a repeat that arrives within `REPEAT_S` of the first.
- If the child dies of SIGABRT, SIGKILL, SIGSEGV or SIGBUS, or the C library ends it with
  exit code 127 (it could not allocate a new thread's memory), this process removes what the
  dead run staged. It uses the warehouse's own clean-up of a failed run
  (`Warehouse.give_back_dead_run`), which is given the run ids the child reported when its
  runs took the lock. It then prints one line saying what happened and which publication is
  current, and exits with code 2. If the child dies of any other signal, the same clean-up
  runs and this process dies of that signal too.

`python -m flows.cli` and the `duplirank` script are supervised. A Python caller of
`flows.cli.main([...])` (a test) is not. Prefect deployments run flows in a worker, not
through the CLI, so they are not supervised either.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable

PR_SET_PDEATHSIG = 1
SI_KERNEL = 0x80  # si_code of a signal the kernel sent itself (the terminal's Ctrl-C, hangup)
REPEAT_S = 0.5  # a second SIGINT/SIGTERM this soon after the first is the same one, twice
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
WAITED = {*FORWARDED, signal.SIGCHLD}

DEATHS = {
    signal.SIGABRT: "was aborted (SIGABRT): a library stopped the process, most often because "
    "memory ran out",
    signal.SIGKILL: "was killed (SIGKILL): the kernel's out-of-memory killer, or `kill -9`",
    signal.SIGSEGV: "crashed (SIGSEGV): a fault in a library",
    signal.SIGBUS: "crashed (SIGBUS): a memory-mapped file could not be read or written (a "
    "full disk, a file cut short)",
}

# the exit code of the dynamic loader's fatal errors (`_dl_fatal_printf`), never the CLI's own:
# "cannot allocate memory for thread-local data: ABORT" when a thread is started without memory
LOADER_EXIT = 127
LOADER = "was stopped by the C library (exit code 127): most often a new thread's memory ran out"

_records: int | None = None  # in the child: where it reports the runs it starts


def supervise(command: str, clean_up: Callable[[list[tuple[str, str]]], str]) -> int | None:
    """Fork. In the child: returns None, and the caller runs the command. In this process:
    waits for the child, and returns the exit code to exit with.

    `clean_up(runs)` removes what the dead child's runs staged and returns the state of the
    warehouse in a few words. `runs` is a list of (warehouse URL, run id). It runs only after
    the child died of a signal or of the loader's exit code 127."""
    global _records
    parent = os.getpid()
    read, write = os.pipe()
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, WAITED)
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read)
        _die_with(parent)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        _records = write
        _ignore_repeats(signal.SIGINT)
        _ignore_repeats(signal.SIGTERM)
        return None
    os.close(write)
    status = _wait(pid)  # the signals stay blocked: this process only exits from now on
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) != LOADER_EXIT:
        os.close(read)
        return os.WEXITSTATUS(status)
    died = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    records = _read_records(read)
    runs = [tuple(fields) for kind, *fields in records if kind == "run" and len(fields) == 2]
    logs = [fields[0] for kind, *fields in records if kind == "log" and fields]
    try:
        state = clean_up(runs)
    except Exception as err:  # noqa: BLE001 - say what is left; the next run removes it
        state = f"what it staged is left ({type(err).__name__}: {err}); the next run removes it"
    if died is not None and died not in DEATHS:
        signal.signal(died, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {died})
        os.kill(os.getpid(), died)  # the same death for whoever waits for this process
        return 128 + died
    if sys.stderr is not None:
        start = "\r\x1b[K\x1b[?25h" if sys.stderr.isatty() else ""  # under a progress bar
        log = f" (log: {logs[-1]})" if logs else ""
        what = LOADER if died is None else DEATHS[died]
        print(f"{start}duplirank {command}: the run {what}; {state}{log}", file=sys.stderr)
    return 2


def record_run(url: str, run_id: str) -> None:
    """In a supervised child: tell the parent a run started staging in warehouse `url`."""
    _record("run", url, run_id)


def record_log(path) -> None:
    """In a supervised child: tell the parent where the run's log is."""
    _record("log", str(path))


def _record(*fields: str) -> None:
    if _records is not None:
        try:
            os.write(_records, ("\t".join(fields) + "\n").encode(errors="surrogateescape"))
        except OSError:  # the parent is gone: this process is being killed with it
            pass


def _die_with(parent: int) -> None:
    """The child gets SIGKILL when this process dies, however it dies."""
    import ctypes

    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before prctl took effect
        os.kill(os.getpid(), signal.SIGKILL)


def _wait(pid: int) -> int:
    """Wait for the child, passing on the signals another process sends to this one. Returns
    its wait status."""
    while True:
        info = signal.sigwaitinfo(WAITED)
        if info.si_signo in FORWARDED and info.si_code != SI_KERNEL:
            try:
                os.kill(pid, info.si_signo)
            except ProcessLookupError:
                pass
        done, status = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return status


def _ignore_repeats(signum: int) -> None:
    """In the child: a signal received again within `REPEAT_S` is handled once (a group
    signalled by another process: the child receives it directly and passed on)."""
    handler = signal.getsignal(signum)
    if not callable(handler):
        return
    last = [float("-inf")]

    def once(number, frame):
        now = time.monotonic()
        if now - last[0] < REPEAT_S:
            return None
        last[0] = now
        return handler(number, frame)

    signal.signal(signum, once)


def _read_records(fd: int) -> list[list[str]]:
    """What the child reported, a list of fields each. Reads what is in the pipe without
    waiting: a process the child started may still hold its write end."""
    os.set_blocking(fd, False)
    data = b""
    try:
        while chunk := os.read(fd, 65536):
            data += chunk
    except BlockingIOError:
        pass
    finally:
        os.close(fd)
    return [line.split("\t") for line in data.decode(errors="surrogateescape").splitlines()]
