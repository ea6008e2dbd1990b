"""Errors a user can act on: printed as one line, exit code 2 (see `flows/cli.py`)."""


class UserError(Exception):
    """An error the user can fix: printed as one line, exit code 2."""
