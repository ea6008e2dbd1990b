"""Analysts' SQL over the published tables (`duplirank sql`): read-only by construction, bounded.

Whatever an analyst runs cannot create, modify or delete a file, in or out of the warehouse.
Three layers, each enough on its own for what it covers:

1. `check_statement` (`statement.py`) reads the statement with DuckDB's own parser, never by
   matching its text: exactly one statement, of type SELECT or EXPLAIN [ANALYZE] of a SELECT;
   then its syntax tree (`json_serialize_sql`) must hold only query nodes that read. In DuckDB 2
   a SELECT may hold `WITH x AS (COPY … TO …)` or an INSERT/UPDATE/DELETE, which its statement
   type does not show. Table functions are allowed by name (`READ_TABLE_FUNCTIONS`): `query()`
   runs SQL text this check cannot see, others change the engine's state (logging,
   checkpoints, external resources).
2. `connect_read_only` (`connection.py`) opens an in-memory DuckDB with the views database
   attached READ_ONLY; file access is limited to exactly the Parquet files the manifest
   publishes (`allowed_paths`, each as the views name it — relative to the warehouse, found
   through `file_search_path` — and absolute), every other external access is off, no
   extension is installed or autoloaded, no Python variable is scanned; then the configuration
   is locked. DuckDB spills to a private folder outside the warehouse.
3. The `duplirank sql` process (`flows/tools/sandbox.py`) drops with Landlock, before DuckDB
   starts, every right to create, write, truncate, rename or delete a file outside that spill
   folder: the kernel refuses what the two layers above might miss (Linux ≥ 5.13; elsewhere 1
   and 2).

Bounded (`SqlLimits`, settings `sql.*`): a wall-clock timeout and Ctrl-C both `interrupt()` the
query, which runs in a worker thread; DuckDB's memory limit and spill size; a row cap. Rows
stream from DuckDB in Arrow batches and are printed batch by batch, never held whole
(`run.py` runs, `output.py` prints).
"""

from flows.tools.query.connection import connect_read_only, published_files, spill_folder
from flows.tools.query.output import FORMATS, Printed, format_frame, table_text
from flows.tools.query.run import QueryStopped, Session, print_sql, run_sql
from flows.tools.query.statement import READ_TABLE_FUNCTIONS, check_statement

__all__ = [
    "FORMATS",
    "READ_TABLE_FUNCTIONS",
    "Printed",
    "QueryStopped",
    "Session",
    "check_statement",
    "connect_read_only",
    "format_frame",
    "print_sql",
    "published_files",
    "run_sql",
    "spill_folder",
    "table_text",
]
