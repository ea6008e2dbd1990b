"""Ingest delivered files into bronze: read → validate → partition → stage → log (+ replay).

- `listing` + `landing`: the files of the landing folder, each opened once and checked
  (`names`: the stored text of a file's name);
- `file_stream`: the physical lines of a file in chunks: blocks of bytes (hashed), gunzipped
  (`gzip_stream`), made UTF-8 (`text_encoding`), cut into lines (`line_split`), in the
  reader threads (`reader_threads`);
- `parse` + `decode` + `validate`: one DuckDB parse per line, the fields typed with Polars,
  checked against the record types' declarations (`transforms.record_types`; `screen`: the
  fast checks of a record type), copies of earlier lines (`copies`, over `hash_index`), a
  reason for every rejected line (`reasons`), runs of the same line (`quarantine_runs`);
  `file_check` and `checked`: what a file's checks remember and the rows they give;
- `partition`: the bronze month of each row (`assign_partition`);
- `stage`: bronze and quarantine rows through the run's transaction, children held until
  their parent is known;
- `log`: the ingest log and what it tells the next run;
- `replay`: quarantined lines validated again (late parents, `--replay-quarantine`);
- `pbn`: PBN files as bridge events; `check`: the same checks on bytes in memory.
"""

import importlib

# each name from its module, imported when first used: `flows.ingest.options` (the settings)
# does not load the validation (dataframely) or the run
_WHERE = {
    "Validated": "check",
    "validate_bytes": "check",
    "validate_lines": "check",
    "INGEST_LOG_SCHEMA": "log",
    "FileReport": "log",
    "IngestOptions": "options",
    "Window": "options",
    "assign_partition": "partition",
    "INPUT_SUFFIXES": "listing",
    "list_inputs": "listing",
    "IngestResult": "summary",
    "Progress": "context",
    "ingest": "run",
    "replay": "run",
    "QUARANTINE_TABLE_SCHEMA": "stage",
    "bronze_table": "stage",
}


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


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
