"""Shared test set-up: project root on sys.path for `tests_support`, Prefect kept local."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytest  # noqa: E402

import flows  # noqa: E402,F401  (sets the Prefect defaults before any prefect import)


@pytest.fixture(scope="session")
def harness():
    """One Prefect test server for the whole session (flows run against it)."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=90):
        yield
