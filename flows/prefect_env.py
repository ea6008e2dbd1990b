"""Prefect defaults for a machine with no Prefect server (import before `prefect`).

With no `PREFECT_API_URL`, each process starts a temporary local Prefect server. Its state
(`PREFECT_HOME`: the server's database, profiles) goes to the user's state folder,
`$XDG_STATE_HOME/duplirank/prefect` (`~/.local/state/duplirank/prefect`), never into the
install folder; give the server time to start on a cold machine, and turn analytics off.
Values already in the environment win (e.g. `PREFECT_HOME=~/.prefect` to share Prefect's own
profile and database).
"""

import os

from flows.runlog import state_dir

os.environ.setdefault("PREFECT_HOME", str(state_dir() / "prefect"))
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
