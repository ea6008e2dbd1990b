"""Shared test set-up: project root on sys.path for `tests_support`, Prefect kept local."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import flows  # noqa: E402,F401  (sets the Prefect defaults before any prefect import)
