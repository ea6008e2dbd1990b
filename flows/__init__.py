"""duplirank flows: CLI, Prefect flows and the steps they run."""

from flows import (
    allocator,  # noqa: F401  (allocator settings before any polars import)
    prefect_env,  # noqa: F401  (Prefect defaults before any prefect import)
)
