"""Settings of the Simultané rules: every **Decision** of spec/simultane.md, with its default."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SimultaneOptions:
    deal_time_limit_s: int = 300  # a deal longer than this is unfinished (300 s is finished)
    window_days: int = 45  # % actuel keeps the results dated in (t - 45 days, t]
    window_results: int = 20  # ... of those, the 20 most recent
    block_deals: int = 20  # a result of the % cumul is a block of 20 consecutive deals
    indice_best: int = 20  # Indice = sum of the 20 best results of the month / 20
    victoire_best: int = 10  # Victoire = sum of the 10 best won results of the month / 10
    timezone: str = "Europe/Paris"  # months and days are calendar ones in this zone
