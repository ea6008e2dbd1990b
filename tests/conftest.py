"""Shared test set-up: project root on sys.path for `tests_support`, Prefect kept local.

The tests' Prefect state and run logs go to a temporary folder (removed at exit), and
hypothesis keeps its examples in the user's cache folder: nothing is written into the repository.
"""

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

_STATE = tempfile.mkdtemp(prefix="duplirank-tests-")
atexit.register(shutil.rmtree, _STATE, ignore_errors=True)
os.environ["XDG_STATE_HOME"] = _STATE
os.environ["PREFECT_HOME"] = str(Path(_STATE) / "prefect")
os.environ.pop("DUPLIRANK_LOG_DIR", None)
_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "duplirank"
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", str(_CACHE / "hypothesis"))

import pytest  # noqa: E402

from flows.allocator import use_batch_allocator  # noqa: E402
from flows.prefect_env import use_prefect_defaults  # noqa: E402

use_batch_allocator()  # what a run sets before Polars and Prefect are imported (flows/cli.py)
use_prefect_defaults()


@pytest.fixture(scope="session")
def harness():
    """One Prefect test server for the whole session (flows run against it)."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=90):
        yield


@pytest.fixture(scope="session")
def sample_warehouse(harness, tmp_path_factory):
    """The sample logs published once per session by the real Prefect flow (tests read it or
    copy it, never change it)."""
    from flows.nightly import nightly
    from flows.settings import Settings
    from tests_support import SAMPLE

    root = tmp_path_factory.mktemp("wh")
    nightly(Settings(warehouse=root, landing=SAMPLE))
    return root
