"""Commands load what they use: importing duplirank changes nothing, and `duplirank sql`,
`--help` and `ingest` do not load Prefect nor SQLAlchemy (nor, for sql and help, Polars and
dataframely).

Each case runs in a fresh interpreter (this test process has loaded everything already), with
a fresh state folder and no Prefect or allocator variables in its environment.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from flows.storage.warehouse import Warehouse

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("prefect", "polars", "dataframely", "sqlalchemy", "jinja2")

# run in the child: `code`, then what it changed and what it loaded, as JSON on the last line
PROBE = """
import json, os, sys
before = dict(os.environ)
try:
    exec(compile(sys.argv[1], "<case>", "exec"))
except SystemExit:
    pass
after = dict(os.environ)
changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
loaded = sorted({name.split(".")[0] for name in sys.modules})
print("\\n" + json.dumps({"changed": changed, "loaded": loaded}))
"""


def probe(code: str, tmp_path: Path, cwd: Path = ROOT) -> dict:
    state = tmp_path / "state"
    state.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PREFECT_", "DUPLIRANK_", "_RJEM")) and k != "OPENBLAS_NUM_THREADS"
    }
    env |= {"XDG_STATE_HOME": str(state), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, code],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["state"] = sorted(p.name for p in state.iterdir())
    result["stdout"] = done.stdout
    return result


@pytest.mark.parametrize(
    "modules",
    [
        "flows",
        "flows.cli",
        "flows.settings, flows.tools.query, flows.runlog, flows.allocator, flows.prefect_env",
    ],
)
def test_importing_duplirank_creates_nothing_and_sets_no_variable(tmp_path, modules):
    seen = probe(f"import {modules}", tmp_path)
    assert seen["changed"] == [] and seen["state"] == []


def test_a_run_sets_the_allocator_and_prefect_home_when_it_starts(tmp_path):
    seen = probe(
        "from flows.allocator import use_batch_allocator\n"
        "from flows.prefect_env import use_prefect_defaults\n"
        "use_batch_allocator(); use_prefect_defaults()",
        tmp_path,
    )
    assert {"_RJEM_MALLOC_CONF", "OPENBLAS_NUM_THREADS", "PREFECT_HOME"} <= set(seen["changed"])
    assert seen["state"] == ["duplirank"]  # the Prefect home, created
    assert "polars" not in seen["loaded"] and "prefect" not in seen["loaded"]


def test_help_loads_no_heavy_library(tmp_path):
    seen = probe("from flows import cli; cli.main(['--help'])", tmp_path)
    assert "usage: duplirank" in seen["stdout"]
    assert not set(HEAVY) & set(seen["loaded"]), seen["loaded"]
    assert seen["changed"] == [] and seen["state"] == []


def test_sql_loads_duckdb_and_no_heavy_library(tmp_path):
    wh = Warehouse(tmp_path / "wh")
    tx = wh.transaction("r1")
    tx.put_months("gold", "t", pl.DataFrame({"month": ["2026-11"], "x": [41]}), ["2026-11"])
    tx.commit()
    spill = tmp_path / "spill"
    seen = probe(
        f"import os; os.environ['DUPLIRANK_SQL__TEMP_DIRECTORY'] = {str(spill)!r}\n"
        "from flows import cli\n"
        f"assert cli.main(['sql', '--warehouse', {str(wh.root)!r}, 'select x + 1 as y from t']) "
        "== 0",
        tmp_path,
    )
    assert "│ 42 │" in seen["stdout"]
    assert "duckdb" in seen["loaded"]
    assert not set(HEAVY) & set(seen["loaded"]), seen["loaded"]
    # the settings are read without pydantic-settings (asyncio, ssl, cloud sources)
    assert not {"pydantic_settings", "asyncio", "ssl", "pyarrow"} & set(seen["loaded"])


def test_ingest_runs_without_prefect(tmp_path):
    landing = tmp_path / "landing"
    landing.mkdir()
    (landing / "a.jsonl").write_text('{"type": "nothing"}\n')
    seen = probe(
        "from flows import cli\n"
        f"cli.main(['ingest', {str(landing)!r}, '--warehouse', {str(tmp_path / 'wh')!r}, '-q'])",
        tmp_path,
    )
    assert "lines read: 1" in seen["stdout"]
    assert "prefect" not in seen["loaded"] and "sqlalchemy" not in seen["loaded"]
    assert "rich" not in seen["loaded"]  # not a terminal: plain progress lines, no rich
    assert "dataframely" in seen["loaded"]
    assert "_RJEM_MALLOC_CONF" in seen["changed"]  # set before Polars was loaded
