"""Options of the Face-à-Face rules: every **Decision** of face_a_face.md with its default."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from transforms.option_checks import PLATFORM_TIMEZONE, OptionError, check_options

MATCH_TYPES = ("classique", "attaque", "attaque_surcontrat")


@dataclass(frozen=True)
class FaceAFaceOptions:
    # The shape of a match (face_a_face.md, "Matches"): 16 deals, of which a `classique` has 4
    # attack deals (and 12 defence deals); the two attack types are all attack.
    deals_per_match: int = 16
    classique_attack_deals: int = 4
    # Time rules (boundaries are inclusive: exactly at the limit is still in time).
    cancel_after_min: int = 10
    attack_limit_s: int = 240
    defense_limit_s: int = 180
    forfeit_disconnect_min: int = 6
    # Match points: √|Δ| rounded half up to `mp_decimals` (Decision: 0, like IMPs).
    mp_decimals: int = 0
    unfinished_mp: int = 5
    # Elo.
    elo_start: float = 1600.0
    bot_id: str = "BOT"
    bot_elo: float = 1600.0
    k_new: float = 40.0  # until the player has `k_matches_threshold` rated matches
    k_regular: float = 20.0
    k_master: float = 10.0  # once the rating has ever reached `k_master_rating`
    k_matches_threshold: int = 30
    k_master_rating: float = 2400.0
    elo_cap: float = 400.0
    # Monthly tournament points.
    best_per_category: int = 6
    divisor: int = 12
    points_decimals: int = 2  # points are shown (and ties compared) at this precision
    timezone: str = PLATFORM_TIMEZONE
    pool_attack_types: bool = True  # attaque + attaque_surcontrat form one category "attaque"

    # bounds of the numbers (inclusive; None = open), checked on every construction
    RANGES: ClassVar[dict[str, tuple[float | None, float | None]]] = {
        "cancel_after_min": (1, None),
        "attack_limit_s": (1, None),
        "defense_limit_s": (1, None),
        "forfeit_disconnect_min": (1, None),
        "mp_decimals": (0, 6),
        "unfinished_mp": (0, None),
        "elo_start": (1, None),
        "bot_elo": (1, None),
        "k_new": (0, None),
        "k_regular": (0, None),
        "k_master": (0, None),
        "k_matches_threshold": (0, None),
        "k_master_rating": (1, None),
        "elo_cap": (1, None),
        "best_per_category": (1, None),
        "divisor": (1, None),
        "points_decimals": (0, 6),
    }

    def __post_init__(self) -> None:
        check_options(self)
        if not self.bot_id.strip():
            raise OptionError("bot_id", "must not be empty")

    def attack_deals(self) -> dict[str, int]:
        """Attack deals of each match type (the others are defence deals)."""
        return {
            match_type: self.classique_attack_deals
            if match_type == "classique"
            else self.deals_per_match
            for match_type in MATCH_TYPES
        }
