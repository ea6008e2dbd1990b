"""Prefect defaults for a machine with no Prefect server (import before `prefect`).

With no `PREFECT_API_URL`, each process starts a temporary local Prefect server. Its state
(`PREFECT_HOME`: the server's database, profiles) goes to the user's state folder,
`$XDG_STATE_HOME/duplirank/prefect` (`~/.local/state/duplirank/prefect`), never into the
install folder; give the server time to start on a cold machine, and turn analytics off
(server and client).
Values already in the environment win (e.g. `PREFECT_HOME=~/.prefect` to share Prefect's own
profile and database).
"""

import os

from flows.runlog import state_dir

if "PREFECT_HOME" not in os.environ:
    os.environ["PREFECT_HOME"] = str(state_dir() / "prefect")
    try:  # Prefect creates its home on import, but not the folders above it
        (state_dir() / "prefect").mkdir(parents=True, exist_ok=True)
    except OSError:  # a read-only home: Prefect warns and runs without it
        pass
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")  # the client's telemetry (and its notice) too
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
