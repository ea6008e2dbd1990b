"""Every option and **Decision** of bridge.md, with the spec's defaults, and their precedence.

Precedence (lowest to highest), the one rule (`resolve_options`): these defaults < the event's
own `options` object (raw JSON of `bridge.event`) < the caller's overrides, a mapping of option
names to values (`duplirank score --method M --option k=v`): every option named there wins,
even one set to its default. The method is the overrides', else the options', else the event's
`scoring`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, ClassVar

from transforms.option_checks import check_options

METHODS = ("three_tables", "matchpoints", "butler", "cavendish", "cavendish_avg", "sunday_times")
MP_METHODS = ("three_tables", "matchpoints")
ROUND_CAP_METHODS = ("butler", "sunday_times")  # a positive round total is capped (unless bog)
VP_METHODS = ("butler", "sunday_times", "cavendish_avg")  # round totals may be converted to VP
DATUM_ROUNDINGS = ("toward_zero", "nearest", "half_even")
PCT_ROUNDINGS = ("per_board", "exact")


@dataclass(frozen=True)
class BridgeOptions:
    # The scoring method; None = the event's own `scoring`.
    method: str | None = None
    # matchpoints: proportional (Neuberg) adjustment when M < N; False = traditional x + (N - M).
    neuberg: bool = True
    # Penalties and compensations in % of the board's top (matchpoint methods).
    penalty_p: int = -5
    penalty_z: int = -10
    penalty_m: int = -15
    penalty_w: int = 10
    # Decision (Law 86A): IMPs given to an artificial score per 10 % above/below 50 %
    # (60 % = +3 IMP, 50 % = 0, 40 % = -3 IMP).
    adjusted_imps_per_10pct: float = 3.0
    # Decision (three_tables): a board with fewer than three real scores and no artificial one is
    # scored as if the missing tables had an average; False leaves such a board unscored.
    missing_as_average: bool = True
    # Butler / Sunday Times: no cap on a positive round total (KOPS `-BOG`).
    bog: bool = False
    # Butler / Sunday Times: drop exactly n scores each side (KOPS `-OUT=n`); None = `trim`.
    out: int | None = None
    # Convert each round's IMP total to VP (WBF 2013 scale): VP_METHODS only.
    vp: bool = False
    # Datum rounding to a multiple of 10: toward_zero (KOPS) | nearest (halves away) | half_even.
    datum_rounding: str = "toward_zero"
    # Scores dropped each side before the datum: kops (ceil(n/4), n=5 -> 1) | out=n | a fraction
    # such as 0.05 | median.
    trim: str = "kops"
    # Round cap = cap_base + boards in the round (ROUND_CAP_METHODS, unless `bog`).
    cap_base: int = 10
    # Cavendish methods: each comparison is capped at this many IMPs (the scale "ends at 17").
    cavendish_cap: int = 17
    # Matchpoint totals: per_board (KOPS: each board's Neuberg value rounded to 0.01, then
    # summed) | exact (Compscore: the exact values summed, the total rounded once).
    pct_rounding: str = "per_board"

    # bounds of the numbers (inclusive; None = open), checked on every construction
    RANGES: ClassVar[dict[str, tuple[float | None, float | None]]] = {
        "penalty_p": (-100, 100),
        "penalty_z": (-100, 100),
        "penalty_m": (-100, 100),
        "penalty_w": (-100, 100),
        "adjusted_imps_per_10pct": (0, None),
        "out": (0, None),
        "cap_base": (0, None),
        "cavendish_cap": (1, None),
    }

    @property
    def converts_to_vp(self) -> bool:
        """Round totals are converted to VP: `vp` asked, in a method that allows it."""
        return self.vp and self.method in VP_METHODS

    def __post_init__(self) -> None:
        check_options(self)
        if self.method is not None and self.method not in METHODS:
            raise ValueError(f"unknown method {self.method!r} (one of {', '.join(METHODS)})")
        if self.datum_rounding not in DATUM_ROUNDINGS:
            raise ValueError(
                f"datum_rounding {self.datum_rounding!r} not one of {', '.join(DATUM_ROUNDINGS)}"
            )
        if self.pct_rounding not in PCT_ROUNDINGS:
            raise ValueError(
                f"pct_rounding {self.pct_rounding!r} not one of {', '.join(PCT_ROUNDINGS)}"
            )
        trim_kind(self.trim)  # validates

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], base: BridgeOptions | None = None):
        """Options from a mapping of names to values (JSON values or CLI text)."""
        base = base or cls()
        types = {f.name: f.type for f in fields(cls)}
        changes: dict[str, Any] = {}
        for key, value in values.items():
            name = key.strip().lower().replace("-", "_")
            if name not in types:
                raise ValueError(f"unknown bridge option {key!r}")
            changes[name] = _coerce(name, types[name], value)
        return replace(base, **changes)

    @classmethod
    def from_event(cls, options_json: str | None) -> BridgeOptions:
        if not options_json:
            return cls()
        try:
            values = json.loads(options_json)
        except json.JSONDecodeError as exc:
            raise ValueError(f"event options are not JSON: {exc}") from None
        if not isinstance(values, dict):
            raise ValueError("event options must be a JSON object")
        return cls.from_mapping(values)


def resolve_options(event: Mapping[str, Any], overrides: Mapping[str, Any] | None = None):
    """The options an event is scored with: defaults < its `options` JSON < `overrides` (every
    key given wins); `method` filled with the event's `scoring` unless given. ValueError (a
    user error) for an unknown option or a bad value."""
    own = BridgeOptions.from_event(event.get("options"))
    resolved = BridgeOptions.from_mapping(overrides or {}, base=own)
    return replace(resolved, method=resolved.method or event["scoring"])


def _coerce(name: str, type_text: str, value: Any) -> Any:
    text = str(type_text)
    if isinstance(value, str):
        raw = value.strip()
        if "bool" in text:
            if raw.lower() in ("1", "true", "yes", "on"):
                return True
            if raw.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(f"option {name} must be true or false, not {value!r}")
        if "int" in text:
            if raw.lower() in ("", "none", "null") and "None" in text:
                return None
            try:
                return int(raw)
            except ValueError:
                raise ValueError(f"option {name} must be an integer, not {value!r}") from None
        if "float" in text:
            try:
                return float(raw)
            except ValueError:
                raise ValueError(f"option {name} must be a number, not {value!r}") from None
        if raw.lower() in ("none", "null") and "None" in text:
            return None
        return raw
    if "bool" in text and not isinstance(value, bool):
        raise ValueError(f"option {name} must be true or false, not {value!r}")
    if (
        "int" in text
        and value is not None
        and (isinstance(value, bool) or not isinstance(value, int))
    ):
        raise ValueError(f"option {name} must be an integer, not {value!r}")
    if "float" in text and not isinstance(value, int | float):
        raise ValueError(f"option {name} must be a number, not {value!r}")
    if "str" in text and value is not None and not isinstance(value, str):
        raise ValueError(f"option {name} must be text, not {value!r}")
    return value


def trim_kind(trim: str) -> tuple[str, float]:
    """('kops', 0) | ('out', n) | ('fraction', f) | ('median', 0), or ValueError."""
    text = trim.strip().lower()
    if text in ("kops", "median"):
        return text, 0.0
    if text.startswith("out="):
        try:
            n = int(text[4:])
        except ValueError:
            raise ValueError(f"trim {trim!r}: out=n needs an integer n") from None
        if n < 0:
            raise ValueError(f"trim {trim!r}: n must be >= 0")
        return "out", float(n)
    try:
        fraction = float(text)
    except ValueError:
        raise ValueError(f"trim {trim!r} not one of kops, out=n, a fraction, median") from None
    if not 0 <= fraction < 0.5:
        raise ValueError(f"trim fraction {trim!r} must be in [0, 0.5)")
    return "fraction", fraction
