"""A nightly with nothing new, told before the pipeline and Prefect are loaded.

`duplirank nightly` asks `quiet_night` first. It answers only when the run would certainly
publish nothing and repair nothing; otherwise (None) the nightly runs as usual and decides
itself. Nothing is new when, under the warehouse's lock:

- the warehouse and the landing are local folders, a publication is current, and no partition
  is marked dirty (a rescoring left to do);
- every entry of the landing is a regular file (no link, no other kind of entry, no name the
  ingest log writes escaped) whose identity (size, mtime, ctime, inode) is the one the ingest
  log last recorded for its path (`flows.ingest.log.read_state`): the ingest would read none and
  log none (`flows.ingest.run._ingest_one`);
- what is served needs no repair: no staging folder is left, the views database serves the
  manifest (`flows.storage.served.database_problem`), the results site is the publication's
  (`site_problem`).

It reads the manifest, the ingest log (DuckDB) and the served files; it loads neither Polars
nor Prefect. The command then prints what the nightly prints for such a run (the ingest line,
`no partition to rescore`, `nothing new to publish`, the rankings).

A nothing-new night and Prefect: with a Prefect server configured (`PREFECT_API_URL`), the
night is recorded as a flow run of the `nightly` flow, created Completed with the run's
parameters and its summary artifact (`duplirank-run-summary`), through the server's REST API
(`record_flow_run`): monitoring sees one run per night. Without one (`make run`: a temporary
server, gone with the command), no flow run is recorded. A deployment's run (`serve`, a
worker) is created by Prefect itself and runs the flow as usual.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

READ = ("ingested", "unreadable", "empty", "already_ingested")  # flows/ingest/log.py


@dataclass
class _Unchanged:
    """A landing file the ingest would neither read nor log (what its summary counts)."""

    file: str
    status: str
    logged: bool = False
    lines_read: int = 0
    rows_accepted: int = 0
    rows_quarantined: int = 0
    sha256: str | None = None


@dataclass
class _Ingest:
    files: list[_Unchanged]
    quarantined: list = field(default_factory=list)
    replayed: int = 0

    def text(self) -> str:
        from flows.ingest.summary import ingest_text

        return ingest_text(self)


@dataclass
class QuietNight:
    """What a nightly with nothing new reports (the fields `flows.runs.Summary` prints)."""

    run_id: str
    ingest: _Ingest
    rebuilt: dict = field(default_factory=dict)
    published: bool = False
    site: str | None = None
    announced_changes: None = None

    def text(self) -> str:
        return "\n".join([self.ingest.text(), "no partition to rescore", "nothing new to publish"])


def quiet_night(settings) -> QuietNight | None:
    """The report of a nightly that has nothing to do, or None: run the nightly."""
    landing, warehouse = settings.landing, settings.warehouse
    if not isinstance(landing, Path) or not isinstance(warehouse, Path):
        return None
    if not landing.is_dir() or not warehouse.is_dir():
        return None
    from flows.storage.store import STAGING
    from flows.storage.warehouse import Warehouse, new_run_id

    wh = Warehouse(warehouse, settings.storage)
    if wh.store.kind != "local":
        return None
    with wh.store.lock(settings.lock_wait_s):
        pointer = wh.publication()
        if pointer is None or (wh.root / STAGING).exists():
            return None
        manifest = wh.manifest()
        if manifest.get("dirty"):
            return None
        listed = _landing(landing, wh.root)
        if listed is None:
            return None
        logged = _logged(wh)
        if logged is None:
            return None
        files = []
        for text, identity in listed:
            known = logged.get(text)
            if known is None or known[0] != identity:
                return None
            status = known[1]
            files.append(_Unchanged(text, "already_ingested" if status in READ else status))
        from flows.storage.served import database_problem

        if database_problem(wh, pointer, manifest) is not None:
            return None
        from flows.tools.site.served import site_problem

        if site_problem(wh, settings) is not None:
            return None
    return QuietNight(new_run_id(), _Ingest(files))


def _landing(folder: Path, exclude: Path) -> list[tuple[str, tuple]] | None:
    """(stored name, identity) of every file of the landing as `list_inputs` walks it, or
    None when an entry is anything but a plain regular file (the ingest decides for it)."""
    excluded = exclude.resolve()
    found: list[tuple[str, tuple]] = []
    failed: list[OSError] = []
    for here, dirs, files in os.walk(folder, onerror=failed.append, followlinks=False):
        dirs[:] = [d for d in dirs if (Path(here) / d).resolve() != excluded]
        for name in dirs:
            if (Path(here) / name).is_symlink():
                return None
        for name in files:
            path = Path(here) / name
            text = str(path)
            if "\\" in text or any("\udc80" <= c <= "\udcff" for c in text):
                return None  # a name the log stores escaped (`file_text`)
            try:
                seen = os.lstat(path)
            except OSError:
                return None
            if not stat.S_ISREG(seen.st_mode):
                return None
            found.append((text, (seen.st_size, seen.st_mtime_ns, seen.st_ctime_ns, seen.st_ino)))
    return None if failed else found


def _logged(wh) -> dict[str, tuple[tuple, str]] | None:
    """Path -> (identity, status) last logged, as `flows.ingest.log.read_state` reads it; None
    if the log cannot be read here (the ingest reads it)."""
    import duckdb

    files = wh.files("ingest_log")
    if not files:
        return {}
    con = duckdb.connect()
    try:
        rows = con.execute(
            """
            select file, size, mtime_ns, ctime_ns, inode, status
            from read_parquet($files, union_by_name = true)
            where size is not null and not starts_with(status, 'error') and status <> 'replayed'
            qualify row_number() over (partition by file order by ingested_at desc) = 1
            """,
            {"files": files},
        ).fetchall()
    except duckdb.Error:
        return None  # e.g. a log older than the ctime and inode columns
    finally:
        con.close()
    return {f: ((s, m, c, i), st) for f, s, m, c, i, st in rows}


# --------------------------------------------------------------------------- the site served
# --------------------------------------------------------------------------- Prefect
def prefect_server() -> str | None | bool:
    """The API URL of the Prefect server configured for this process (`PREFECT_API_URL`, in the
    environment or the active profile of `profiles.toml`), None when there is none (a run
    would start a temporary one), or False when Prefect's other sources of settings (a `.env`
    or `prefect.toml` here, `[tool.prefect]` in `pyproject.toml`) may say otherwise: Prefect,
    loaded, decides."""
    url = os.environ.get("PREFECT_API_URL")
    if url:
        return url
    here = Path.cwd()
    if (here / ".env").exists() or (here / "prefect.toml").exists():
        return False
    try:
        if "[tool.prefect" in (here / "pyproject.toml").read_text(errors="replace"):
            return False
    except OSError:
        pass
    import tomllib

    from flows.runlog import state_dir

    home = Path(os.environ.get("PREFECT_HOME") or state_dir() / "prefect").expanduser()
    profiles = Path(os.environ.get("PREFECT_PROFILES_PATH") or home / "profiles.toml")
    try:
        data = tomllib.loads(profiles.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return False
    name = os.environ.get("PREFECT_PROFILE") or data.get("active") or "ephemeral"
    profile = data.get("profiles", {}).get(name, {})
    if any(k != "PREFECT_API_URL" and k.startswith("PREFECT_API_") for k in profile):
        return False  # a key, an auth string, TLS settings: Prefect's client applies them
    return profile.get("PREFECT_API_URL") or None


def record_flow_run(api: str, night: QuietNight, parameters: dict, markdown: str) -> str:
    """Record the night as a Completed flow run of the `nightly` flow, with its summary
    artifact; returns the flow run's id. Raises OSError (httpx's errors are) on failure."""
    import httpx

    headers = {}
    if os.environ.get("PREFECT_API_KEY"):
        headers["Authorization"] = f"Bearer {os.environ['PREFECT_API_KEY']}"
    elif os.environ.get("PREFECT_API_AUTH_STRING"):
        import base64

        token = base64.b64encode(os.environ["PREFECT_API_AUTH_STRING"].encode()).decode()
        headers["Authorization"] = f"Basic {token}"
    with httpx.Client(base_url=api.rstrip("/") + "/", headers=headers, timeout=30) as client:

        def post(path: str, body: dict) -> dict:
            try:
                response = client.post(path, json=body)
                response.raise_for_status()
            except httpx.HTTPError as err:
                raise OSError(f"Prefect API {api}: {err}") from None
            return response.json()

        flow = post("flows/", {"name": "nightly"})
        run = post(
            "flow_runs/",
            {
                "flow_id": flow["id"],
                "parameters": parameters,
                "state": {
                    "type": "COMPLETED",
                    "name": "Completed",
                    "message": "nothing new to publish",
                },
            },
        )
        post(
            "artifacts/",
            {
                "key": "duplirank-run-summary",
                "type": "markdown",
                "data": markdown,
                "description": "what this nightly run did",
                "flow_run_id": run["id"],
            },
        )
    return run["id"]


# --------------------------------------------------------------------------- the command
def quiet_nightly(settings, as_of, start_run) -> QuietNight | None:
    """`duplirank nightly` when nothing is new (module docstring): `start_run()` (the run's
    log) is called, the night recorded in the configured Prefect server, and its report
    returned; None when the nightly must run (something may be new, `as_of` moves % actuel,
    or Prefect's settings cannot be read without loading it)."""
    from flows import progress
    from flows.errors import UserError

    if as_of is not None:
        return None
    api = prefect_server()
    if api is False:
        return None
    try:
        with progress.stage("nothing-new check"):
            night = quiet_night(settings)
    except (UserError, OSError):
        return None  # the nightly reports it
    if night is None:
        return None
    start_run()
    if api:
        from flows.artifacts import summary_markdown

        parameters = {
            "landing": _location(settings.landing),
            "warehouse": _location(settings.warehouse),
            "project": None,
            "as_of": None,
        }  # as Prefect records those of a nightly the command runs
        record_flow_run(api, night, parameters, summary_markdown(night, {}, "nightly"))
    return night


def _location(value) -> str:
    """A run's folder as a flow parameter (as `flows.nightly` gives it)."""
    return str(value) if "://" in str(value) else str(Path(value).absolute())
