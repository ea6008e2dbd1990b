"""Which units of a bronze partition (Simultané tournaments, Face-à-Face matches, bridge
events) a nightly rescores.

A unit's results depend only on its own bronze rows and the rules (each is scored alone when
another fails, `isolate.py`), and every row of a unit shares its partition. So when a nightly
only adds files to a partition's bronze, the units those files hold are the only ones whose
results can change: the partition's other published rows (results and data issues) are what
a full rescore would publish again. The partition is rescored whole instead when:
- the run is a backfill (`from_scratch`, or no file added: it rescores every unit);
- the run replaced or removed bronze files of the partition (not a delivery);
- an earlier run left the partition dirty (`duplirank ingest`: its new rows are published);
- its published results were scored under other rules or by other code, or under no
  recorded rules (`scoring_rules`: a digest of the options and of the scoring code each
  partition was last scored with: after an upgrade, a month is not left half scored by the
  old code);
- a published data issue of the partition names no unit.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from pathlib import Path

import polars as pl

from flows.steps.context import COMPETITIONS, StepContext, bronze_table
from transforms.calendar import RAW_MONTH
from transforms.issues import DATA_ISSUES_SCHEMA
from transforms.record_types import RECORD_TYPES

RULES = "scoring_rules"
RULES_SCHEMA = {RAW_MONTH: pl.String, "competition": pl.String, "rules": pl.String}


@dataclasses.dataclass(frozen=True)
class Delta:
    """The units a nightly rescores in one partition, and the published data issues of the
    partition's other units (kept as they are)."""

    units: frozenset[str]
    kept_issues: pl.DataFrame
    column: str
    files: dict[str, list[str]]  # per record type, the bronze files holding a unit's rows

    def changed(self, column: str | None = None) -> pl.Expr:
        """Rows of a rescored unit."""
        return pl.col(column or self.column).cast(pl.String).is_in(list(self.units))

    def bronze(self, ctx: StepContext, record_type: str) -> pl.LazyFrame:
        """The bronze rows of the rescored units (every delivery of them, as stored)."""
        files = self.files[record_type]
        if not files:
            return pl.LazyFrame(schema=RECORD_TYPES[record_type].schema())
        rows = ctx.wh.scan_files(
            files, missing_columns="insert", extra_columns="ignore", hive_partitioning=False
        )
        return rows.filter(self.changed())


def rules_digest(options: object) -> str:
    """A digest of the rules a partition is scored with: the options (a dataclass, or any
    JSON-able value) and the code that scores (`code_digest`)."""
    if dataclasses.is_dataclass(options):
        options = dataclasses.asdict(options)
    text = json.dumps({"options": options, "code": code_digest()}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


SCORING_CODE = ("transforms/**/*.py", "sql/**/*.sql", "flows/steps/*.py")


@functools.cache
def code_digest() -> str:
    """A digest of the sources of the code that scores (the rules' transforms, the SQL
    models, the steps), as this process runs them."""
    root = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256()
    for path in sorted(p for pattern in SCORING_CODE for p in root.glob(pattern)):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def put_rules(tx, competition: str, part: str, digest: str) -> None:
    """Record the rules partition `part` of `competition` is now scored with."""
    row = pl.DataFrame(
        {RAW_MONTH: [part], "competition": [competition], "rules": [digest]}, schema=RULES_SCHEMA
    )
    tx.put("silver", RULES, _rules_key(competition, part), row)
    tx.put_schema("silver", RULES, row)


def _rules_key(competition: str, part: str) -> str:
    return f"{RAW_MONTH}={part}/{competition}"


def delta(ctx: StepContext, competition: str, part: str, column: str, digest: str) -> Delta | None:
    """The units (values of `column`, as strings) of the bronze files this run added to
    partition `part` and the data issues kept, or None: rescore every unit (module
    docstring)."""
    if ctx.from_scratch:
        return None
    wh, pending, key = ctx.wh, list(ctx.pending), f"{RAW_MONTH}={part}"
    if part in wh.manifest()["dirty"].get(competition, []):
        return None
    rules_key = _rules_key(competition, part)
    if not wh.entries(RULES, [rules_key]):
        return None
    recorded = wh.scan(RULES, [rules_key]).select("rules").collect()["rules"].to_list()
    if recorded != [digest]:
        return None
    added: dict[str, list[str]] = {}
    for record_type in COMPETITIONS[competition]:
        table = bronze_table(record_type)
        before = {e["path"] for e in wh.entries(table, [key])}
        now = wh.entries(table, [key], pending=pending)
        if not before <= {e["path"] for e in now}:
            return None
        added[record_type] = [wh.checked(e) for e in now if e["path"] not in before]
    if not any(added.values()):
        return None
    # the units of every bronze file of the partition, read once: the added files' are the
    # units rescored; the files holding any of them are the ones their rescoring reads
    files: dict[str, list[str]] = {}
    held: dict[str, pl.DataFrame] = {}
    for record_type in COMPETITIONS[competition]:
        files[record_type] = wh.files(bronze_table(record_type), [key], pending)
        held[record_type] = (
            wh.scan_files(files[record_type], include_file_paths="_file", hive_partitioning=False)
            .select("_file", pl.col(column).cast(pl.String))
            .unique()
            .collect()
            if files[record_type]
            else pl.DataFrame(schema={"_file": pl.String, column: pl.String})
        )
    units = pl.concat(
        [rows.filter(pl.col("_file").is_in(added[rt]))[column] for rt, rows in held.items()]
    ).to_list()
    issues_key = f"{key}/{competition}"
    issues = wh.scan("data_issues", [issues_key], DATA_ISSUES_SCHEMA, pending=pending).collect()
    unit = pl.col("keys").str.json_path_match(f"$.{column}")
    if issues.select(unit.is_null().any()).item():
        return None
    if None in units:
        return None
    found = frozenset(units)
    kept = issues.filter(~unit.is_in(list(found))).select(*DATA_ISSUES_SCHEMA)
    change = Delta(found, kept, column, {})
    for record_type, rows in held.items():  # the files holding their rows
        holding = set(rows.filter(change.changed())["_file"])
        change.files[record_type] = [f for f in files[record_type] if f in holding]
    return change


def kept_rows(
    ctx: StepContext, table: str, part: str, change: Delta, column: str
) -> pl.LazyFrame | None:
    """The published rows of partition `part` of `table` whose unit is not rescored (None:
    the partition has no published rows)."""
    key, pending = f"{RAW_MONTH}={part}", list(ctx.pending)
    if not ctx.wh.entries(table, [key], pending=pending):
        return None
    return ctx.wh.scan(table, [key], pending=pending).filter(~change.changed(column))
