"""Persistence: the SQLite store of runs, responses and scores, and its exports."""

from lmmprobe.store.errors import (
    StoreAccessError,
    StoreDamagedError,
    StoreError,
    StoreVersionError,
    as_store_error,
)
from lmmprobe.store.export import ExportFormat, export_run, export_run_to_file
from lmmprobe.store.sqlite import DEFAULT_DB, Store, command_for

__all__ = [
    "DEFAULT_DB",
    "ExportFormat",
    "Store",
    "StoreAccessError",
    "StoreDamagedError",
    "StoreError",
    "StoreVersionError",
    "as_store_error",
    "command_for",
    "export_run",
    "export_run_to_file",
]
