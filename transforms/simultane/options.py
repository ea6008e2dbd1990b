"""Settings of the Simultané rules: every **Decision** of spec/simultane.md, with its default."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from transforms.option_checks import PLATFORM_TIMEZONE, check_options


@dataclass(frozen=True)
class SimultaneOptions:
    deal_time_limit_s: int = 300  # a deal longer than this is unfinished (300 s is finished)
    window_days: int = 45  # % actuel keeps the results dated in (t - 45 days, t]
    window_results: int = 20  # ... of those, the 20 most recent
    block_deals: int = 20  # a result of the % cumul is a block of 20 consecutive deals
    indice_best: int = 20  # Indice = sum of the 20 best results of the month / 20
    victoire_best: int = 10  # Victoire = sum of the 10 best won results of the month / 10
    timezone: str = PLATFORM_TIMEZONE  # months and days are calendar ones in this zone

    # bounds of the numbers (inclusive; None = open), checked on every construction
    RANGES: ClassVar[dict[str, tuple[float | None, float | None]]] = {
        "deal_time_limit_s": (1, None),
        "window_days": (1, None),
        "window_results": (1, None),
        "block_deals": (1, None),
        "indice_best": (1, None),
        "victoire_best": (1, None),
    }

    def __post_init__(self) -> None:
        check_options(self)
