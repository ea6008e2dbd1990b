"""`duplirank repair`: every table rebuilt from the landing archive, published as the next
publication of the warehouse.

It is the repair of a damaged bronze file (bronze is written once from the deliveries, so
nothing in the warehouse can write it again): under the warehouse's lock, a clean run on the
landing folder builds a scratch warehouse (in the temporary folder, `$TMPDIR`), and its
files replace every table's files in one publication (the history of publications is kept;
partitions the clean run has not are unpublished). Afterwards every table equals a clean run
on that landing. The repair refuses, and publishes nothing, when the landing lacks a delivery
the warehouse read (its sha256 is in the `ingest_log`, no landing file has it): put it back in
the landing folder first.
"""

from __future__ import annotations

import tempfile
from datetime import date
from pathlib import Path

import polars as pl

from flows.errors import UserError
from flows.ingest.log import READ
from flows.nightly import nightly_run, site
from flows.runs import Summary, open_run, publish
from flows.settings import Settings
from flows.storage.operations import AddFile, PutFile
from flows.storage.published import DamagedFile
from flows.storage.warehouse import Transaction, Warehouse

SHOWN = 3  # missing deliveries named in the refusal


def repair_run(settings: Settings, as_of: date | None = None) -> Summary:
    """Rebuild every table of the warehouse from `settings.landing` and publish it (`as_of`:
    the date of % actuel and in_window, as for a nightly)."""
    with open_run(settings, "repair", as_of) as run:
        with tempfile.TemporaryDirectory(prefix="duplirank-repair-") as tmp:
            scratch = Path(tmp) / "warehouse"
            clean = settings.model_copy(update={"warehouse": scratch})
            rebuilt = nightly_run(clean, as_of)  # the nightly flow's steps, in this process
            run.summary.ingest, run.summary.rebuilt = rebuilt.ingest, rebuilt.rebuilt
            clean_wh = Warehouse(scratch)
            _refuse_if_deliveries_missing(run.wh, clean_wh, settings)
            _replace_tables(run.tx, run.wh.manifest(), clean_wh)
        publish(run)
        site(run)
    return run.summary


def _read_shas(wh: Warehouse) -> pl.DataFrame:
    """(sha256, file) of every delivery whose content a run read."""
    files = wh.files("ingest_log")
    if not files:
        return pl.DataFrame(schema={"sha256": pl.String(), "file": pl.String()})
    return (
        wh.scan_files(files, missing_columns="insert")
        .filter(pl.col("status").is_in(READ) & pl.col("sha256").is_not_null())
        .select("sha256", "file")
        .unique("sha256", keep="first", maintain_order=True)
        .collect()
    )


def _refuse_if_deliveries_missing(wh: Warehouse, clean: Warehouse, settings: Settings) -> None:
    try:
        before = _read_shas(wh)
    except DamagedFile:  # the damaged file is the ingest log itself: it cannot tell
        return
    missing = before.filter(~pl.col("sha256").is_in(_read_shas(clean)["sha256"].implode()))
    if missing.height:
        names = ", ".join(missing["file"].head(SHOWN).to_list())
        more = f" and {missing.height - SHOWN} more" if missing.height > SHOWN else ""
        raise UserError(
            f"cannot repair {wh.store.url}: the landing {settings.landing} lacks "
            f"{missing.height} delivery(ies) the warehouse read ({names}{more}); put them "
            "back in the landing folder, then run `duplirank repair` again"
        )


def _replace_tables(tx: Transaction, current: dict, clean: Warehouse) -> None:
    """Stage the clean warehouse's files in place of every table's files."""
    built = clean.manifest()
    source = clean.store.root
    for table, entry in sorted(built["tables"].items()):
        for partition, files in sorted(entry["partitions"].items()):
            for i, listed in enumerate(files):
                name = Path(listed["path"]).name
                suffix = name[name.index(".") :] if "." in name else ""
                written = tx.write(
                    entry["layer"], table, partition, source / listed["path"], suffix=suffix
                )
                op = PutFile if i == 0 else AddFile
                tx.extend([op(entry["layer"], table, partition, written)])
    for table, entry in sorted(current["tables"].items()):
        kept = built["tables"].get(table, {}).get("partitions", {})
        for partition in sorted(set(entry["partitions"]) - set(kept)):
            tx.remove(table, partition)
    for competition, months in sorted(current.get("dirty", {}).items()):
        tx.mark_dirty(competition, months, clean=True)
    for competition, months in sorted(built.get("dirty", {}).items()):
        tx.mark_dirty(competition, months)
