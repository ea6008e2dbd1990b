"""Ingest delivered files into bronze: read → validate → partition → stage → log (+ replay).

- `read`: the files of the landing folder and the physical lines of each (chunks, gzip,
  encodings, lines too long), read in a background thread;
- `parse` + `decode` + `validate`: one DuckDB parse per line, the fields typed with Polars,
  checked against the record types' declarations (`transforms.record_types`), a reason for
  every rejected line;
- `partition`: the bronze month of each row (`assign_partition`);
- `stage`: bronze and quarantine rows through the run's transaction, children held until
  their parent is known;
- `log`: the ingest log and what it tells the next run;
- `replay`: quarantined lines validated again (late parents, `--replay-quarantine`);
- `pbn`: PBN files as bridge events; `check`: the same checks on bytes in memory.
"""

from flows.ingest.check import Validated, validate_bytes, validate_lines
from flows.ingest.log import INGEST_LOG_SCHEMA, FileReport
from flows.ingest.options import IngestOptions, Window
from flows.ingest.partition import assign_partition
from flows.ingest.read import INPUT_SUFFIXES, list_inputs
from flows.ingest.run import IngestResult, Progress, ingest, replay
from flows.ingest.stage import QUARANTINE_TABLE_SCHEMA, bronze_table

__all__ = [
    "INGEST_LOG_SCHEMA",
    "INPUT_SUFFIXES",
    "QUARANTINE_TABLE_SCHEMA",
    "FileReport",
    "IngestOptions",
    "IngestResult",
    "Progress",
    "Validated",
    "Window",
    "assign_partition",
    "bronze_table",
    "ingest",
    "list_inputs",
    "replay",
    "validate_bytes",
    "validate_lines",
]
