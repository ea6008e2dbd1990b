"""Bridge as players read it (spec: bridge.md, Results pages): contracts with suit symbols
(hearts and diamonds red) in the page language's words (French: SA for NT, contré/surcontré,
Passe), seats N/E/S/O in French, and a board's hand diagram (four hands, dealer,
vulnerability) when the event file has the deal.

Contracts are shown from their normalised text (`4H`, `3NTX`, `Pass`: `transforms.bridge.
contracts`) on whole columns; a text that is not a contract is shown as given (escaped). The
diagram is one board's markup, made in Python (one per board page).
"""

from __future__ import annotations

import polars as pl
from markupsafe import escape

from flows.tools.site.fmt import MISSING
from flows.tools.site.fmt import escape as escape_expr
from transforms.bridge.contracts import CONTRACT_PATTERN, contract_text, is_passed_out
from transforms.bridge.deals import SEATS, SUITS, hands

SYMBOLS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
RED = ("H", "D")


def suit_markup(suit: str) -> str:
    """A suit's symbol in a table cell (compact markup: many rows): hearts and diamonds red."""
    return f"<span class=r>{SYMBOLS[suit]}</span>" if suit in RED else SYMBOLS[suit]


def hand_suit(suit: str) -> str:
    """A suit's symbol at the head of a hand's line (`.suit`: aligned), hearts and diamonds
    red."""
    cls = "suit r" if suit in RED else "suit"
    return f'<span class="{cls}">{SYMBOLS[suit]}</span>'


def contract_markup(
    contract: pl.Expr, w: dict, played: tuple[pl.Expr, pl.Expr] | None = None
) -> pl.Expr:
    """A contract column as a cell's markup: `4♥`, `3SA contré` (French) / `3NTX` (English),
    `Passe` / `Pass`; missing as an en dash. `played`: (declarer, result) columns, shown after
    the contract in a span (`.ph`) the stylesheet shows on a phone only (where the traveller's
    declarer and result columns are hidden)."""

    def show(text: pl.Expr, *by: pl.Expr) -> pl.Expr:
        normal = contract_text(text)  # `4h*` -> `4HX`, as the scorer reads it
        level = normal.str.extract(CONTRACT_PATTERN, 1)
        strain = normal.str.extract(CONTRACT_PATTERN, 2).replace({"N": "NT"})
        doubled = normal.str.extract(CONTRACT_PATTERN, 3)
        strain_shown = strain.replace_strict(
            {**{s: suit_markup(s) for s in SYMBOLS}, "NT": str(escape(w["notrump"]))},
            default=None,
            return_dtype=pl.String,
        )
        doubled_shown = doubled.replace_strict(
            {"": "", "X": str(escape(w["doubled"])), "XX": str(escape(w["redoubled"]))},
            default="",
            return_dtype=pl.String,
        )
        # the words of a double may go to a second line of a narrow cell (`.dbl`)
        doubled_shown = (
            pl.when(doubled_shown == "")
            .then(pl.lit(""))
            .otherwise(pl.concat_str(pl.lit("<span class=dbl>"), doubled_shown, pl.lit("</span>")))
        )
        shown = (
            pl.when(text.is_null())
            .then(pl.lit(MISSING))
            .when(is_passed_out(text))
            .then(pl.lit(str(escape(w["passed"]))))
            .when(level.is_not_null())
            .then(pl.concat_str(level, strain_shown, doubled_shown))
            .otherwise(escape_expr(text))
        )
        if not by:
            return shown
        declarer, result = (escape_expr(seat(e, w)) for e in by)
        after = pl.concat_str(declarer.fill_null(""), pl.lit(" "), result.fill_null(""))
        return pl.concat_str(
            shown,
            pl.when(by[0].is_null() & by[1].is_null())
            .then(pl.lit(""))
            .otherwise(
                pl.concat_str(
                    pl.lit("<span class=ph> "), after.str.strip_chars(), pl.lit("</span>")
                )
            ),
        )

    return show(contract, *(played or ()))


def seat(expr: pl.Expr, w: dict) -> pl.Expr:
    """A seat N/E/S/W in the page language's letters (French: N/E/S/O)."""
    return expr.replace_strict(w["seats"], default=expr, return_dtype=pl.String)


def _suit_line(suit: str, cards: str, w: dict) -> str:
    ranks = cards.replace("T", "10") if cards else "—"
    return f"<li>{hand_suit(suit)} {escape(ranks)}"


def diagram(
    board: int, deal: str | None, dealer: str | None, vulnerable: str | None, w: dict
) -> str:
    """A board's hand diagram: North above, West and East beside, South below, the board's
    number, dealer and vulnerability in the middle. Empty when `deal` is not a deal."""
    shown = hands(deal)
    if shown is None:
        return ""
    parts = [f'<figure class="deal" aria-label="{escape(w["deal_of"])} {board}">']
    vulnerable_seats = {"NS": "NS", "EW": "EW", "All": "NESW"}.get(vulnerable or "", "")
    for s in SEATS:
        cls = f"hand {s.lower()}" + (" vul" if s in vulnerable_seats else "")
        name = w["seat_names"][s]
        lines = "".join(
            _suit_line(suit, cards, w) for suit, cards in zip(SUITS, shown.get(s, []), strict=False)
        )
        body = f"<ul>{lines}</ul>" if s in shown else f"<p>{MISSING}</p>"
        parts.append(f'<div class="{cls}"><strong>{escape(name)}</strong>{body}</div>')
    vul_text = w["vulnerabilities"].get(vulnerable or "", vulnerable or MISSING)
    dealer_text = w["seat_names"].get(dealer or "", dealer or MISSING)
    parts.append(
        f'<dl class="centre"><dt>{escape(w["board"])}<dd>{board}'
        f"<dt>{escape(w['dealer'])}<dd>{escape(dealer_text)}"
        f"<dt>{escape(w['vulnerability'])}<dd>{escape(vul_text)}</dl>"
    )
    parts.append("</figure>")
    return "".join(parts)
