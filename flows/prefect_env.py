"""Prefect defaults for a run: `use_prefect_defaults()` before `prefect` is imported.

With no `PREFECT_API_URL`, a run starts a temporary local Prefect server
(`flows/prefect_server.py`). Its state (`PREFECT_HOME`: the server's database, profiles) goes
to the user's state folder, `$XDG_STATE_HOME/duplirank/prefect`
(`~/.local/state/duplirank/prefect`), never into the install folder; give the server time to
start on a cold machine, and turn analytics off (server and client).
Values already in the environment win (e.g. `PREFECT_HOME=~/.prefect` to share Prefect's own
profile and database). Prefect reads them when it is imported: set after, they change nothing
for this process.
"""

import os

from flows.runlog import state_dir

PREFECT_DEFAULTS = {
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "90",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DO_NOT_TRACK": "1",  # the client's telemetry (and its notice) too
    "PREFECT_LOGGING_LEVEL": "WARNING",
}


def use_prefect_defaults() -> None:
    """Set Prefect's home (created) and defaults in this process's environment."""
    if "PREFECT_HOME" not in os.environ:
        home = state_dir() / "prefect"
        os.environ["PREFECT_HOME"] = str(home)
        try:  # Prefect creates its home on import, but not the folders above it
            home.mkdir(parents=True, exist_ok=True)
        except OSError:  # a read-only home: Prefect warns and runs without it
            pass
    for name, value in PREFECT_DEFAULTS.items():
        os.environ.setdefault(name, value)
