"""USEBIO 1.2 files (the XML of EBUScore, Compscore, ScoreBridge...) -> bronze-shaped
`bridge.event` / `bridge.result` frames, so a USEBIO file is scored exactly like a PBN file.

What is read (spec: bridge.md, USEBIO input): `<EVENT EVENT_TYPE=...>` with its identifier,
description, program, `DATE` (dd/mm/yyyy), `WINNER_TYPE` and `SCORING_METHOD`; each
`<PAIR>` of `<PARTICIPANTS>` (number, direction, players' names and the program's own total,
percentage and place); each `<BOARD>` and its `<TRAVELLER_LINE>`s (pairs, contract, declarer,
tricks, NS score or an artificial `A6040`, and the program's own points); the `<HANDSET>`'s
deals. A value is read from an attribute or from a child element of that name. An element not
known here is read past and reported (`ParsedUSEBIO.unknown`), never a crash.

Safety: a document with a DOCTYPE or an entity declaration is refused before it is parsed (no
entity expansion, so no "billion laughs"; ElementTree never fetches external entities).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass
from datetime import date

import polars as pl

from transforms.bridge.contracts import normal_contract
from transforms.bridge.pbn import relative_result
from transforms.calendar import RAW_MONTH
from transforms.record_types import RECORD_TYPES

# EVENT_TYPE -> the duplirank method (cross-IMPs averaged when SCORING_METHOD says so)
EVENT_TYPES = {
    "MP_PAIRS": "matchpoints", "PAIRS": "matchpoints", "MATCHPOINT_PAIRS": "matchpoints",
    "BUTLER_PAIRS": "butler", "IMP_PAIRS": "butler", "BUTLER": "butler",
    "CROSS_IMP": "cavendish", "CROSS_IMPS": "cavendish", "CROSS_IMP_PAIRS": "cavendish",
    "CROSS_IMPS_PAIRS": "cavendish",
}  # fmt: skip
KNOWN = {
    "USEBIO", "CLUB", "CLUB_NAME", "CLUB_ID_NUMBER", "EVENT", "EVENT_IDENTIFIER",
    "EVENT_DESCRIPTION", "PROGRAM_NAME", "PROGRAM_VERSION", "DATE", "WINNER_TYPE",
    "SCORING_METHOD", "BOARD_SCORING_METHOD", "SECTION", "SECTION_ID", "SECTION_NAME",
    "PARTICIPANTS", "PAIR", "PAIR_NUMBER", "DIRECTION", "PLAYER", "PLAYER_NAME",
    "NATIONAL_ID_NUMBER", "TOTAL_SCORE", "PERCENTAGE", "PLACE", "MASTER_POINTS", "BOARD",
    "BOARD_NUMBER", "TRAVELLER_LINE", "NS_PAIR_NUMBER", "EW_PAIR_NUMBER", "CONTRACT",
    "PLAYED_BY", "LEAD", "TRICKS", "SCORE", "HANDSET", "HAND", "SPADES", "HEARTS", "DIAMONDS",
    "CLUBS", "DEALER", "VULNERABILITY", "VULNERABLE", "BOARDS_PLAYED", "TABLE_NUMBER",
    "ROUND_NUMBER",
}  # fmt: skip
# the program's own points of a line: NS_MATCH_POINTS, EW_CROSS_IMP_POINTS, NS_IMPS...
REPORTED = re.compile(
    r"^(NS|EW)_(MATCH_POINTS|BUTLER_POINTS|CROSS_IMP_POINTS|IMP_POINTS|IMPS|"
    r"POINTS|MATCHPOINTS)$"
)
FORBIDDEN = re.compile(rb"<!\s*(DOCTYPE|ENTITY)", re.IGNORECASE)
HANDS = {"NORTH": "N", "EAST": "E", "SOUTH": "S", "WEST": "W", "N": "N", "E": "E", "S": "S",
         "W": "W"}  # fmt: skip
ARTIFICIAL_WORDS = {"AVE": "A50", "AVE=": "A50", "AVE+": "A60", "AVE-": "A40"}


@dataclass
class ParsedUSEBIO:
    frames: dict[str, pl.DataFrame]  # bronze-shaped, like `Validated.frames()`
    skipped: list[str]  # traveller lines or events that could not be read, and why
    unknown: dict[str, int]  # elements not known here (read past) and how many
    meta: dict[str, str]  # the event's own fields (EVENT_TYPE, PROGRAM_NAME...)


def is_usebio(data: bytes) -> bool:
    """A USEBIO document: XML whose root element is `USEBIO` (looked for in the head)."""
    head = data[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith(b"<") and b"<USEBIO" in head.upper()


def read_xml(data: bytes) -> ET.Element:
    """The root element of an XML document, refused (ValueError) when it declares a DOCTYPE
    or entities, or is not well-formed."""
    if FORBIDDEN.search(data):
        raise ValueError("USEBIO file refused: it declares a DOCTYPE or entities")
    try:
        return ET.fromstring(data)
    except ET.ParseError as err:
        raise ValueError(f"not well-formed XML: {err}") from None


def _value(element: ET.Element, name: str) -> str | None:
    """An attribute `name`, else the text of the child element `name` (stripped; None if
    empty)."""
    text = element.get(name)
    if text is None:
        child = element.find(name)
        text = child.text if child is not None else None
    text = (text or "").strip()
    return text or None


def parse_usebio(data: bytes, source: str, event_id: str, delivery: int = 0) -> ParsedUSEBIO:
    """Bronze-shaped frames of one USEBIO file (its first EVENT, as event `event_id`).
    ValueError for a file that is not a USEBIO pairs event (a user error, one line)."""
    root = read_xml(data)
    if root.tag.upper() != "USEBIO":
        raise ValueError(f"not a USEBIO file: the root element is <{root.tag}>")
    unknown = Counter(
        e.tag
        for e in root.iter()
        if e.tag.upper() not in KNOWN and not REPORTED.match(e.tag.upper())
    )
    events = root.findall(".//EVENT")
    if not events:
        raise ValueError("USEBIO file without an EVENT")
    event = events[0]
    skipped = [f"EVENT {i + 1} not read: one event a file" for i in range(1, len(events))]
    meta = {
        name: _value(event, name) or ""
        for name in (
            "EVENT_TYPE",
            "EVENT_IDENTIFIER",
            "EVENT_DESCRIPTION",
            "PROGRAM_NAME",
            "DATE",
            "WINNER_TYPE",
            "SCORING_METHOD",
        )
    }
    method = _method(meta["EVENT_TYPE"], meta["SCORING_METHOD"])
    two_winner = meta["WINNER_TYPE"] == "2"
    pairs = _pairs(event)
    # in a two-winner movement NS 1 and EW 1 are two pairs: their ids name the direction
    numbered = Counter((p["section"], p["number"]) for p in pairs)
    split = two_winner or any(n > 1 for n in numbered.values())

    def pair_id(section: str | None, number: str, direction: str) -> str:
        return f"{number}{direction}" if split else number

    deals = _deals(root)
    results, lines_skipped = _lines(event, pair_id, deals, method)
    skipped += lines_skipped
    facts = [
        {
            "pair": pair_id(p["section"], p["number"], p["direction"] or ""),
            "section": p["section"],
            "names": p["names"],
            "total": p["total"],
            "pct": p["pct"],
            "rank": p["rank"],
        }
        for p in pairs
        if not split or p["direction"]
    ]
    extra = {
        "event": meta["EVENT_DESCRIPTION"] or None,
        "program": meta["PROGRAM_NAME"] or None,
        "usebio_event_type": meta["EVENT_TYPE"] or None,
        "winner_type": int(meta["WINNER_TYPE"]) if meta["WINNER_TYPE"] in ("1", "2") else None,
        "pairs": facts,
    }
    event_row = {
        "event_id": event_id,
        "date": _date(meta["DATE"]),
        "scoring": method,
        "options": None,
        "boards_per_round": None,
        "movement": {"1": "one_winner", "2": "two_winner"}.get(meta["WINNER_TYPE"]),
        RAW_MONTH: None,  # the storage partition, given by ingest
        "extra": json.dumps({k: v for k, v in extra.items() if v}, ensure_ascii=False),
        "source_file": source,
        "line_no": 1,
        "delivery": delivery,
    }
    result_rows = [
        r
        | {
            "event_id": event_id,
            RAW_MONTH: None,
            "source_file": source,
            "line_no": n,
            "delivery": delivery,
        }
        for n, r in enumerate(results, start=1)
    ]
    frames = {
        "bridge.event": pl.DataFrame(
            [event_row], schema=RECORD_TYPES["bridge.event"].schema(), orient="row"
        ),
        "bridge.result": pl.DataFrame(
            result_rows, schema=RECORD_TYPES["bridge.result"].schema(), orient="row"
        ),
    }
    return ParsedUSEBIO(frames, skipped, dict(unknown), meta)


def _method(event_type: str, scoring_method: str) -> str:
    kind = event_type.strip().upper().replace("-", "_").replace(" ", "_")
    if kind not in EVENT_TYPES:
        known = ", ".join(sorted(EVENT_TYPES))
        raise ValueError(
            f"USEBIO EVENT_TYPE {event_type!r} is not a pairs event scored here (one of {known})"
        )
    method = EVENT_TYPES[kind]
    if method == "cavendish" and re.search(r"AV(ERA)?G|MEAN", scoring_method.upper()):
        return "cavendish_avg"
    return method


def _sections(element: ET.Element, section: str | None = None):
    """(element, its section) for every element under `element` (a SECTION names the section
    of what it holds)."""
    for child in element:
        here = section
        if child.tag.upper() == "SECTION":
            here = _value(child, "SECTION_ID") or _value(child, "SECTION_NAME") or section
        yield child, here
        yield from _sections(child, here)


def _pairs(event: ET.Element) -> list[dict]:
    pairs = []
    for element, section in _sections(event):
        if element.tag.upper() != "PAIR":
            continue
        number = _value(element, "PAIR_NUMBER")
        if number is None:
            continue
        names = [_value(p, "PLAYER_NAME") for p in element.findall("PLAYER")]
        direction = (_value(element, "DIRECTION") or "").upper()
        pairs.append(
            {
                "section": section,
                "number": number,
                "direction": direction if direction in ("NS", "EW") else None,
                "names": " & ".join(n for n in names if n) or None,
                "total": _number(_value(element, "TOTAL_SCORE")),
                "pct": _number(_value(element, "PERCENTAGE")),
                "rank": _value(element, "PLACE"),
            }
        )
    return pairs


def _deals(root: ET.Element) -> dict[int, dict[str, str]]:
    """Board number -> {"deal": PBN deal text, "dealer", "vulnerable"} of every HANDSET."""
    deals: dict[int, dict[str, str]] = {}
    for handset in root.iter("HANDSET"):
        for board in handset.iter("BOARD"):
            number = _value(board, "BOARD_NUMBER")
            if number is None or not number.isdigit():
                continue
            hands = {}
            for hand in board.findall("HAND"):
                seat = HANDS.get((_value(hand, "DIRECTION") or "").upper())
                if seat:
                    hands[seat] = ".".join(
                        (_value(hand, suit) or "").upper().replace("10", "T")
                        for suit in ("SPADES", "HEARTS", "DIAMONDS", "CLUBS")
                    )
            info: dict[str, str] = {}
            if len(hands) == 4:
                info["deal"] = "N:" + " ".join(hands[s] for s in "NESW")
            dealer = HANDS.get((_value(board, "DEALER") or "").upper())
            if dealer:
                info["dealer"] = dealer
            vulnerable = _value(board, "VULNERABILITY") or _value(board, "VULNERABLE")
            if vulnerable:
                info["vulnerable"] = vulnerable
            deals[int(number)] = info
    return deals


def _lines(event: ET.Element, pair_id, deals: dict, method: str) -> tuple[list[dict], list[str]]:
    rows, skipped = [], []
    imp = method != "matchpoints"
    for board, section in _sections(event):
        if board.tag.upper() != "BOARD":
            continue
        number = _value(board, "BOARD_NUMBER")
        if number is None or not number.isdigit():
            skipped.append(f"BOARD {number!r}: the board number is not a number")
            continue
        for line in board.findall("TRAVELLER_LINE"):
            row = _line(line, int(number), section, pair_id, deals.get(int(number), {}), imp)
            if isinstance(row, str):
                skipped.append(row)
            else:
                rows.append(row)
    return rows, skipped


def _line(line: ET.Element, board: int, section, pair_id, deal: dict, imp: bool) -> dict | str:
    ns, ew = _value(line, "NS_PAIR_NUMBER"), _value(line, "EW_PAIR_NUMBER")
    if ns is None or ew is None:
        return f"board {board}: traveller line without pair numbers"
    contract = normal_contract(_value(line, "CONTRACT"))
    score_text = (_value(line, "SCORE") or "").upper().replace(" ", "")
    adjusted, score = None, None
    score_text = ARTIFICIAL_WORDS.get(score_text, score_text)
    if score_text.startswith("A"):
        adjusted = score_text
    elif score_text:
        try:
            score = int(score_text)
        except ValueError:
            return f"board {board}: score {score_text!r} is not a number"
    if contract is not None and contract.startswith("A") and not adjusted:
        adjusted, contract = contract, None
    if contract is None and score is None and adjusted is None:
        return f"board {board}: traveller line without a result"
    declarer = HANDS.get((_value(line, "PLAYED_BY") or "").upper())
    played = contract not in (None, "Pass") and adjusted is None
    reported = {}
    for element in line:
        match = REPORTED.match(element.tag.upper())
        value = _number((element.text or "").strip())
        if match and value is not None:
            reported[f"reported_{match.group(1).lower()}"] = value
    if imp and "reported_ns" in reported and "reported_ew" not in reported:
        reported["reported_ew"] = -reported["reported_ns"]
    extra = dict(deal) | reported
    return {
        "section": section,
        "board": board,
        "round": None,
        "ns_pair": pair_id(section, ns, "NS"),
        "ew_pair": pair_id(section, ew, "EW"),
        "score_ns": score,
        "contract": None if adjusted else contract,
        "declarer": declarer if played else None,
        "result": relative_result(contract, _value(line, "TRICKS")) if played else None,
        "adjusted": adjusted,
        "extra": json.dumps(extra, sort_keys=True, ensure_ascii=False) if extra else None,
    }


def _number(text: str | None) -> float | None:
    try:
        return None if text is None else float(text.replace(",", "."))
    except ValueError:
        return None


def _date(text: str | None) -> date | None:
    match = re.match(r"^(\d{1,2})/(\d{1,2})/(\d{4})$", (text or "").strip())
    if not match:
        return None
    day, month, year = map(int, match.groups())
    try:
        return date(year, month, day)
    except ValueError:
        return None
