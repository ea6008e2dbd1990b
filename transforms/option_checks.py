"""Types and ranges of the rules' options: one check for every options dataclass.

An options class lists the bounds of its numbers in a `RANGES` class variable
(`{field: (low, high)}`, inclusive, `None` = open) and calls `check_options(self)` from its
`__post_init__`. The check runs whether the options are built in code or by pydantic from
settings (environment variables, `pyproject.toml`), so a value out of range is refused the same
way everywhere, with an `OptionError` that names the field. `PLATFORM_TIMEZONE` is the default
of every time zone option (the setting `timezone`).
"""

from __future__ import annotations

import math
from dataclasses import fields
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

PLATFORM_TIMEZONE = "Europe/Paris"  # months and days are calendar ones in this zone


class OptionError(ValueError):
    """A bad option value; `field` names it (for a message naming the setting)."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field} {message}")
        self.field = field
        self.reason = message


def check_zone(name: Any, field: str = "timezone") -> None:
    """`name` is an IANA time zone known here (e.g. `Europe/Paris`)."""
    if not isinstance(name, str) or not name.strip():
        raise OptionError(field, f"must be a time zone name such as Europe/Paris, not {name!r}")
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise OptionError(field, f"{name!r} is not a known time zone (e.g. Europe/Paris)") from None


def _check_type(name: str, type_text: str, value: Any) -> None:
    optional = "None" in type_text
    if value is None:
        if not optional:
            raise OptionError(name, "must be set")
        return
    if "bool" in type_text:
        if not isinstance(value, bool):
            raise OptionError(name, f"must be true or false, not {value!r}")
    elif "int" in type_text:
        if isinstance(value, bool) or not isinstance(value, int):
            raise OptionError(name, f"must be an integer, not {value!r}")
    elif "float" in type_text:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise OptionError(name, f"must be a number, not {value!r}")
        if not math.isfinite(value):
            raise OptionError(name, f"must be a finite number, not {value!r}")
    elif "str" in type_text and not isinstance(value, str):
        raise OptionError(name, f"must be text, not {value!r}")


def _check_range(name: str, value: Any, low: float | None, high: float | None) -> None:
    if value is None:
        return
    if low is not None and high is not None and not low <= value <= high:
        raise OptionError(name, f"must be between {low} and {high}, not {value!r}")
    if low is not None and value < low:
        raise OptionError(name, f"must be >= {low}, not {value!r}")
    if high is not None and value > high:
        raise OptionError(name, f"must be <= {high}, not {value!r}")


def check_options(options: Any) -> None:
    """Check every field of an options dataclass: its type, its range, a time zone."""
    ranges: dict[str, tuple[float | None, float | None]] = getattr(options, "RANGES", {})
    for f in fields(options):
        value = getattr(options, f.name)
        _check_type(f.name, str(f.type), value)
        if f.name in ranges:
            _check_range(f.name, value, *ranges[f.name])
        if f.name == "timezone":
            check_zone(value)
