"""The command line with a fault at one point of its run, for the crash tests.

    python tests/storage/faulty_cli.py kill POINT -- ARGS…
        runs `duplirank ARGS…` and kills itself (SIGKILL) at POINT of `Transaction.commit`
        (`before_manifest`, `before_views`, `before_swap`, `after_swap`: its hooks);
    python tests/storage/faulty_cli.py abort POINT -- ARGS…
        the same, aborting (SIGABRT, as an allocation failing in native code does);
    python tests/storage/faulty_cli.py pause N FILE -- ARGS…
        runs `duplirank ARGS…` and holds it at its N-th staged write (a data file of a step,
        or a point of the commit), after writing FILE: the test that waits for FILE kills a
        run that has not ended.

The faults go through the seams of `flows/storage/warehouse.py` (`Transaction.write`,
`Transaction._hook`), patched here: production code holds no test hook.
"""

from __future__ import annotations

import functools
import itertools
import os
import signal
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from flows import cli  # noqa: E402
from flows.storage.warehouse import Transaction  # noqa: E402


def kill_at(point: str) -> None:
    hook = Transaction._hook

    def killing(self, name: str) -> None:
        if name == point:
            os.kill(os.getpid(), signal.SIGKILL)
        hook(self, name)

    Transaction._hook = killing


def abort_at(point: str) -> None:
    hook = Transaction._hook

    def aborting(self, name: str) -> None:
        if name == point:
            os.abort()  # as an allocation that fails in native code does
        hook(self, name)

    Transaction._hook = aborting


def pause_at(n: int, flag: Path) -> None:
    """Hold the thread making the n-th write or commit point (the others go on until they
    need it): the run cannot end before it is killed."""
    count, lock = itertools.count(1), threading.Lock()

    def held(original):
        @functools.wraps(original)
        def wrapper(self, *args, **kwargs):
            with lock:
                k = next(count)
            if k == n:
                flag.write_text(str(os.getpid()))
                while True:
                    time.sleep(60)
            return original(self, *args, **kwargs)

        return wrapper

    Transaction.write = held(Transaction.write)
    Transaction._hook = held(Transaction._hook)


def main(argv: list[str]) -> int:
    split = argv.index("--")
    fault, args = argv[:split], argv[split + 1 :]
    if fault[0] == "kill":
        kill_at(fault[1])
    elif fault[0] == "abort":
        abort_at(fault[1])
    elif fault[0] == "pause":
        pause_at(int(fault[1]), Path(fault[2]))
    else:
        raise SystemExit(f"unknown fault {fault[0]!r}")
    sys.argv = ["duplirank", *args]
    return cli.main()  # as the `duplirank` command runs it (flows/supervise.py watches it)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
