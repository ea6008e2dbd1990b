"""duplirank flows: CLI, Prefect flows and the steps they run.

Importing this package (or any command's module) changes nothing outside it: the process
settings of a run (`flows.allocator`, `flows.prefect_env`) are made by the functions that
start a run, before they import Polars or Prefect.
"""
