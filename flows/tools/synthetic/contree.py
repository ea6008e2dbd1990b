"""Contrée as the synthetic logs play it: the score of a deal and one table's play.

The Simultané and Face-à-Face generators share it: the same cards on every table (`Hand`), a
table's bidding and play around their value (`play_table`), and the score of the contract
(`contree_score`): made, the taker's side scores its card points + the contract (× 2 contré,
× 4 surcontré), failed, the defenders 160 + the contract; belote +20 to its side.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

CARD_POINTS = 162  # 152 in the cards + 10 "dix de der"
BELOTE = 20
CAPOT = 250
FAILED_BASE = 160  # a failed contract gives the defenders 160 + the contract
MIN_TO_MAKE = 82  # the taker must also take more than half of the card points
SUITS = "♠♥♦♣"
COINCHE_TEXT = {1: "", 2: " X", 4: " XX"}  # contré doubles, surcontré quadruples


# --- contrée scoring -------------------------------------------------------------------------


@dataclass(frozen=True)
class Contract:
    """A contract of one table: `value` 80..160 or 250 (capot), None when all four passed."""

    value: int | None
    taker: str = "NS"  # side that took: "NS" or "EW"
    coinche: int = 1  # 1, 2 (contré) or 4 (surcontré)


def contract_made(contract: Contract, taker_card_points: int, belote: str | None) -> bool:
    """Capot: all the tricks (162). Else the contract and more than half, belote included."""
    if contract.value == CAPOT:
        return taker_card_points == CARD_POINTS
    total = taker_card_points + (BELOTE if belote == "taker" else 0)
    return total >= max(contract.value, MIN_TO_MAKE)


def contree_score(
    contract: Contract, taker_card_points: int, belote: str | None = None
) -> tuple[int, int]:
    """(taker side's points, defenders' points) of one deal.

    `belote` is None, "taker" or "defense" (who announced it). Made: the taker's side scores
    its card points + the contract (× 2 contré, × 4 surcontré), the defenders their card
    points; belote +20 to its side. Failed: the taker's side 0, the defenders 160 + the
    contract (× coinche) + the belote. All passed: 0 / 0.
    """
    if contract.value is None:
        return 0, 0
    if not 0 <= taker_card_points <= CARD_POINTS:
        raise ValueError(f"card points {taker_card_points} out of range 0..{CARD_POINTS}")
    stake = contract.value * contract.coinche
    if contract_made(contract, taker_card_points, belote):
        taker = taker_card_points + stake + (BELOTE if belote == "taker" else 0)
        defense = CARD_POINTS - taker_card_points + (BELOTE if belote == "defense" else 0)
        return taker, defense
    return 0, FAILED_BASE + stake + (BELOTE if belote else 0)


@dataclass(frozen=True)
class Hand:
    """The cards of one deal, the same on every table, seen from North-South."""

    ns_card_points: float  # what N-S take with ordinary play, 0..162
    belote: str | None  # "NS" / "EW" holds belote in its natural trump, or None
    trump: str


def random_hand(rng: random.Random) -> Hand:
    ns = min(max(rng.gauss(81, 38), 0.0), float(CARD_POINTS))
    natural_taker = "NS" if ns >= 81 else "EW"
    r = rng.random()
    belote = natural_taker if r < 0.25 else ("EW" if natural_taker == "NS" else "NS")
    return Hand(ns, belote if r < 0.35 else None, rng.choice(SUITS))


def _card_points(x: float) -> int:
    """Realistic card points of a side: 0 (no trick), 162 (all) or 10..152."""
    if x <= 4:
        return 0
    if x >= CARD_POINTS - 4:
        return CARD_POINTS
    return min(max(round(x), 10), CARD_POINTS - 10)


def play_table(
    rng: random.Random, hand: Hand, skill: float = 0.0, noise: float = 12.0
) -> tuple[int, int, str]:
    """One table's result for South: (points_made, points_conceded, contract text).

    `skill` shifts the card points N-S take; `noise` is how far the bidding and the play
    wander from the cards' value.
    """
    expected = hand.ns_card_points + skill
    if abs(expected - 81) < 15 and rng.random() < 0.2:
        return 0, 0, "passe"
    seen = expected + rng.gauss(0, noise)
    taker = "NS" if seen >= 81 else "EW"
    taker_seen = seen if taker == "NS" else CARD_POINTS - seen
    if taker_seen >= 150 and rng.random() < 0.35:
        value = CAPOT
    else:
        value = min(max(int(taker_seen // 10) * 10, 80), 160)
    r = rng.random()
    coinche = 4 if r < 0.02 else 2 if r < 0.10 else 1
    contract = Contract(value, taker, coinche)
    ns_cards = _card_points(expected + rng.gauss(0, noise))
    taker_cards = ns_cards if taker == "NS" else CARD_POINTS - ns_cards
    natural = "NS" if hand.ns_card_points >= 81 else "EW"
    belote = None
    if hand.belote is not None and taker == natural:
        belote = "taker" if hand.belote == taker else "defense"
    taker_points, defense_points = contree_score(contract, taker_cards, belote)
    trump = hand.trump if taker == natural else rng.choice(SUITS.replace(hand.trump, ""))
    seat = rng.choice(("N", "S") if taker == "NS" else ("E", "W"))
    shown = "capot" if value == CAPOT else str(value)
    text = f"{shown}{trump} {seat}{COINCHE_TEXT[coinche]}"
    if taker == "NS":
        return taker_points, defense_points, text
    return defense_points, taker_points, text


def contree_deal_score(rng: random.Random) -> tuple[int, int, str]:
    """A random deal played at one table: (points_made, points_conceded, contract text)."""
    return play_table(rng, random_hand(rng))
