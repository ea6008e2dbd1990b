"""Prefect defaults for a machine with no Prefect server (import before `prefect`).

With no `PREFECT_API_URL`, each process starts a temporary local Prefect server; keep its state
in the project (`.prefect/`), give it time to start on a cold machine, and turn analytics off.
Values already in the environment win.
"""

import os
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent

os.environ.setdefault("PREFECT_HOME", str(PROJECT / ".prefect"))
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
