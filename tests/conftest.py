"""Shared test set-up: project root on sys.path for `tests_support`, Prefect kept local."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import flows.prefect_env  # noqa: E402,F401  (Prefect state in the project, before any import)
