"""Compatibility names for the storage layer (`flows/storage/`)."""

from flows.errors import UserError
from flows.storage.warehouse import DATABASE, MANIFEST, Transaction, Warehouse

__all__ = ["DATABASE", "MANIFEST", "Transaction", "UserError", "Warehouse"]
