"""What a publication serves besides its data files: its views database, checked by content,
and the results site built from it, both recorded in its manifest.

A views database is derived from its manifest and from where the warehouse is: its views must
be exactly the views the manifest publishes, naming this warehouse's files, and its
`_publication` row the manifest's version and run. That is checked by reading the database
(DuckDB's parser compares each view's query with the expected one, whatever its spelling), not
by its bytes alone: a view an analyst's read-write DuckDB replaced, a truncated file, a
database built for another folder are all found, and a database rebuilt for a moved warehouse
(`relink`) is as valid as the first. The sha256 and size of its bytes are in the manifest
(`database`) and are the quick check (`duplirank sql` trusts a database only when its bytes
match them). A run builds the database before it writes the manifest, then swaps the pointer.
Whatever rebuilds a database later rewrites the manifest with the new entry
(`record_database`), and the build of the results site records its fingerprint there
(`record_site`, after the publication is current): these entries are the only parts of a
manifest that ever change. `verify` reports a problem; `recover`, `relink` and every run (also
one with nothing new to publish) rebuild the database in its place.
"""

from __future__ import annotations

import json
import os
import re

import duckdb

from flows.errors import UserError
from flows.storage import manifest as mf
from flows.storage.manifest import ManifestError
from flows.storage.published import DATABASE, MANIFEST, PUBLICATIONS, PUBLISHED, Published

_RENDERED = re.compile(r'(?s)^CREATE VIEW (?:"(?:[^"]|"")*"|\S+) AS (.*?);?\s*$')


def database_problem(wh: Published, folder: str, manifest: dict) -> str | None:
    """None if the views database of publication `folder` serves `manifest` from this
    warehouse; else what is wrong with it, in a few words."""
    from flows.storage.views import database_root, view_sources

    path = f"{folder}/{DATABASE}"
    if not wh.store.has(path):
        return "missing"
    if database_intact(wh, folder, wh.store.fetch(path), manifest) is False:
        return "damaged (its bytes differ from the checksum in the manifest)"
    try:
        con = duckdb.connect(str(wh.store.fetch(path)), read_only=True)
    except duckdb.Error:
        return "damaged (not a readable DuckDB database)"
    try:
        root = database_root(con)
        if root is None:
            return "built by an older duplirank (paths relative to the warehouse)"
        if root != wh.store.url:
            return f"built for another folder ({root})"
        row = con.execute("select version, run_id from _publication").fetchall()
        if row != [(manifest["version"], str(manifest.get("run_id")))]:
            return "damaged (it names another publication)"
        views = dict(
            con.execute(
                "select view_name, sql from duckdb_views() where not internal "
                "and database_name = current_database()"
            ).fetchall()
        )
        tables = {
            r[0]
            for r in con.execute(
                "select table_name from duckdb_tables() where database_name = current_database()"
            ).fetchall()
        }
    except duckdb.Error:
        return "damaged (its tables cannot be read)"
    finally:
        con.close()
    expected = view_sources(manifest, wh.store.view_path)
    if set(views) != set(expected) or tables != {"_publication"}:
        return "damaged (its views are not the publication's)"
    parser = duckdb.connect()
    try:
        for name, sql in views.items():
            match = _RENDERED.match(sql or "")
            if match is None or _tree(parser, match.group(1)) != _tree(parser, expected[name]):
                return f"damaged (view {name} is not the publication's)"
    finally:
        parser.close()
    return None


def database_intact(wh: Published, folder: str, local, manifest: dict | None = None) -> bool | None:
    """Whether the views database of `folder`, fetched at `local`, has the bytes its manifest
    records (`manifest`: that of `folder`, read if not given; None: no checksum recorded,
    a publication of an older duplirank)."""
    from flows.storage.views import file_sha256

    if manifest is None:
        try:
            manifest = wh.manifest() if wh.publication() == folder else _read(wh, folder)
        except (ManifestError, FileNotFoundError, UserError):
            return False
    recorded = manifest.get("database")
    if recorded is None:
        return None
    try:
        same_size = os.path.getsize(local) == recorded["bytes"]
        return same_size and file_sha256(local) == recorded["sha256"]
    except OSError:
        return False


def _read(wh: Published, folder: str) -> dict:
    return mf.parse(wh.store.read_bytes(f"{folder}/{MANIFEST}"), folder)


def record_database(wh: Published, folder: str, manifest: dict, entry: dict) -> dict:
    """Rewrite the manifest of `folder` with `entry`, its views database as now built; returns
    the new manifest. The caller holds the lock."""
    return _rewrite(wh, folder, manifest, database=entry)


def record_site(wh: Published, folder: str, fingerprint: str) -> dict:
    """Rewrite the manifest of `folder` with the fingerprint of the results site just built
    from it (the sha256 of its page index); returns the new manifest. The caller holds the
    lock."""
    return _rewrite(wh, folder, wh.at(folder).manifest(), site=fingerprint)


def _rewrite(wh: Published, folder: str, manifest: dict, **served) -> dict:
    data = mf.dumps({**manifest, **served})
    wh.store.write_bytes(f"{folder}/{MANIFEST}", data)
    return wh.refresh_manifest(folder, mf.parse(data, folder))


def _tree(con: duckdb.DuckDBPyConnection, query: str):
    """A query's syntax tree without the positions of its parts (the same query written
    differently gives the same tree)."""
    tree = json.loads(con.execute("select json_serialize_sql($q)", {"q": query}).fetchone()[0])

    def strip(node):
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if not k.startswith("query_location")}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    return strip(tree)


def repair_database(wh: Published, folder: str, manifest: dict) -> str | None:
    """Rebuild the views database of `folder` if it does not serve `manifest` from here;
    returns the problem it repaired (None: nothing to do). The caller holds the lock."""
    from flows.storage.views import build_database, file_sha256

    path = f"{folder}/{DATABASE}"
    problem = database_problem(wh, folder, manifest)
    if problem is not None:
        entry = build_database(wh, manifest, path)
        wh.store.forget_fetched(path)
        record_database(wh, folder, manifest, entry)
    elif manifest.get("database") is None:  # an older publication: its checked bytes recorded
        local = wh.store.fetch(path)
        entry = {"sha256": file_sha256(local), "bytes": os.path.getsize(local)}
        record_database(wh, folder, manifest, entry)
    return problem


def repair_served(wh: Published) -> str | None:
    """Rebuild the current publication's views database if it does not serve the manifest
    from here (damaged, replaced, built for another folder); returns what was wrong. The caller
    holds the lock."""
    pointer = wh.publication()
    if pointer is None:
        return None
    return repair_database(wh, pointer, wh.manifest())


def relink(wh: Published) -> list[tuple[str, str]]:
    """Rebuild every kept publication's views database that does not serve its manifest from
    this warehouse (after a copy or a move: their views named the old folder). Returns
    (publication, what was wrong) for each one rebuilt. The caller holds the lock."""
    current = wh.store.read_pointer()
    rebuilt = []
    folders = [f"{PUBLICATIONS}/{name}" for name in wh.store.folders(PUBLICATIONS)]
    if current is not None and current not in folders:
        folders.append(current)  # a copy that followed the `current` link: a real folder
    for folder in folders:
        if folder != current and not wh.store.has(f"{folder}/{PUBLISHED}"):
            continue  # never published
        try:
            manifest = _read(wh, folder)
        except (ManifestError, FileNotFoundError):
            continue
        problem = repair_database(wh, folder, manifest)
        if problem is not None:
            rebuilt.append((folder, problem))
    if wh.store.kind == "local" and current is not None:
        from flows.storage.store import POINTER

        wh.store.ensure_link(DATABASE, f"{POINTER}/{DATABASE}")
        wh.store.ensure_link(MANIFEST, f"{POINTER}/{MANIFEST}")
    return rebuilt
