"""PBN 2.1 files (Portable Bridge Notation) -> bronze-shaped `bridge.event` / `bridge.result`
frames, so a PBN file is scored exactly like JSON Lines.

Two layouts are read: travellers in a `[ScoreTable "Col\\wR;…"]` section (one line per table,
whitespace-separated values, strings in quotes, `-` for empty), and one game per table holding
the played result itself (`[Contract]`, `[Declarer]`, `[Result]` tricks taken, `[Score]`).
The board's `[Vulnerable]`/`[Dealer]` travel in the `extra` JSON column (the scorer uses the
given vulnerability). Parsing is a loop over lines: the format is a sequence of tags and
sections whose meaning depends on the preceding tag, and each skipped game needs its reason.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date

import polars as pl

from transforms.bridge.contracts import contract_level, normal_contract
from transforms.calendar import RAW_MONTH
from transforms.record_types import RECORD_TYPES

TAG = re.compile(r'^\[(\w+)\s+"(.*)"\]\s*$')
META = re.compile(r'<META\s+name\s*=\s*"?(\w+)"?\s+content\s*=\s*"([^"]*)"', re.IGNORECASE)
TOKEN = re.compile(r'"[^"]*"|\S+')
COLUMN = re.compile(r"^([^\\]+)(?:\\(\d*)([LR]?))?$")
# Bytes that CP1250 maps to Polish letters but Latin-1 to control codes or rare symbols.
CP1250_HINTS = set(range(0x80, 0xA0)) | {0xA5, 0xB9, 0xB3, 0xA3}


@dataclass
class Game:
    line_no: int
    tags: dict[str, str] = field(default_factory=dict)
    sections: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class ParsedPBN:
    frames: dict[str, pl.DataFrame]  # bronze-shaped, like `Validated.frames()`
    skipped: list[tuple[int, str]]  # (line number, reason) of games without a result
    meta: dict[str, str]
    encoding: str


def decode_pbn(data: bytes) -> tuple[str, str]:
    """(text, encoding): UTF-8 if it decodes, else CP1250 when Polish bytes show, else Latin-1."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    if any(b in CP1250_HINTS for b in data):
        try:
            return data.decode("cp1250"), "cp1250"
        except UnicodeDecodeError:
            pass
    return data.decode("latin-1"), "latin-1"


def read_games(text: str) -> tuple[list[Game], dict[str, str]]:
    """Games (tags and their section lines) and the `%` metadata of a PBN text."""
    games: list[Game] = []
    meta: dict[str, str] = {}
    game: Game | None = None
    section: str | None = None
    in_comment = False
    previous: dict[str, str] = {}
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if in_comment:
            in_comment = "}" not in line
            continue
        if line.startswith("%"):
            for name, content in META.findall(line):
                meta[name] = content
            continue
        if line.startswith("{"):
            in_comment = "}" not in line
            continue
        if not line:
            if game is not None:
                previous = game.tags
            game, section = None, None
            continue
        match = TAG.match(line)
        if match:
            if game is None:
                game = Game(n)
                games.append(game)
            name, value = match.groups()
            if value.startswith("#"):  # PBN: copy the previous game's value
                value = previous.get(name, "") + value[1:].lstrip("#")
            game.tags[name] = value
            section = name
            game.sections[section] = []
            continue
        if game is not None and section is not None:
            game.sections[section].append(line)
    return games, meta


def scoring_method(meta: dict[str, str], tags: dict[str, str]) -> str:
    """The duplirank method named by `ScoringType` metadata or the `[Scoring]` tag."""
    text = (meta.get("ScoringType") or tags.get("Scoring") or "").lower()
    if "cross" in text or "cavendish" in text:
        return "cavendish_avg" if "avg" in text or "average" in text else "cavendish"
    if "sunday" in text:
        return "sunday_times"
    if "imp" in text or "butler" in text:
        return "butler"
    return "matchpoints"


def relative_result(contract: str | None, result: str | None) -> str | None:
    """PBN's tricks taken (`9`) as over/under the contract (`=`, `+1`, `-2`)."""
    if result is None or contract is None:
        return result
    result = result.strip()
    if not result or result.startswith(("=", "+", "-")):
        return result or None
    level = contract_level(contract)
    if level is None or not result.isdigit():
        return result
    over = int(result) - 6 - level
    return "=" if over == 0 else f"{over:+d}"


def _score_ns(text: str | None) -> int | None:
    """`NS 120`, `EW 420`, `120` or `-` as the NS score."""
    if not text:
        return None
    parts = text.split()
    try:
        if len(parts) == 2 and parts[0].upper() in ("NS", "EW"):
            value = int(parts[1])
            return value if parts[0].upper() == "NS" else -value
        return int(parts[0])
    except ValueError:
        return None


def _pair(a: str | None, b: str | None) -> str:
    a, b = (a or "").strip(), (b or "").strip()
    return a if a == b or not b else (b if not a else f"{a}-{b}")


def _table_rows(game: Game, table: str = "ScoreTable") -> list[dict[str, str | None]]:
    """A table section of a game (`ScoreTable`, `TotalScoreTable`) as dicts column -> value
    (None for `-`)."""
    header = [c.strip() for c in game.tags.get(table, "").split(";") if c.strip()]
    names = [(COLUMN.match(c).group(1) if COLUMN.match(c) else c).strip() for c in header]
    rows = []
    for line in game.sections.get(table, []):
        values = [t[1:-1] if t.startswith('"') else t for t in TOKEN.findall(line)]
        row = {
            name: (None if v in ("-", "") else v) for name, v in zip(names, values, strict=False)
        }
        rows.append(row)
    return rows


def parse_pbn(
    data: bytes | str,
    source: str,
    event_id: str,
    scoring: str | None = None,
    delivery: int = 0,
) -> ParsedPBN:
    """Bronze-shaped frames of one PBN file (one event `event_id`)."""
    if isinstance(data, bytes):
        text, encoding = decode_pbn(data)
    else:
        text, encoding = data, "text"
    games, meta = read_games(text)
    results: list[dict] = []
    skipped: list[tuple[int, str]] = []
    first_tags: dict[str, str] = games[0].tags if games else {}
    for game in games:
        tags = game.tags
        board_text = tags.get("Board", "").strip()
        if not board_text.isdigit():
            skipped.append((game.line_no, f"board {board_text!r} is not a number"))
            continue
        base = {
            "board": int(board_text),
            "section": tags.get("Section") or None,
            "extra": {k: tags[k] for k in ("Vulnerable", "Dealer", "Deal") if tags.get(k)},
        }
        base["extra"] = {k.lower(): v for k, v in base["extra"].items()}
        if "ScoreTable" in tags:
            for offset, row in enumerate(_table_rows(game), start=1):
                line = _table_line(row, base, game.line_no + offset + 0)
                if isinstance(line, str):
                    skipped.append((game.line_no, line))
                else:
                    results.append(line)
            continue
        contract = normal_contract(tags.get("Contract"))
        score = _score_ns(tags.get("Score"))
        if contract is None and score is None:
            skipped.append((game.line_no, f"board {board_text}: no contract and no score"))
            continue
        adjusted = None
        if contract is not None and contract.startswith("A") and contract_level(contract) is None:
            adjusted, contract = contract, None
        declarer = (tags.get("Declarer") or "").strip().upper() or None
        extra = dict(base["extra"])
        for k in ("Table", "Round"):
            if tags.get(k):
                extra[k.lower()] = tags[k]
        results.append(
            base
            | {
                "line_no": game.line_no,
                "round": int(tags["Round"]) if tags.get("Round", "").isdigit() else None,
                "ns_pair": _pair(tags.get("North"), tags.get("South")),
                "ew_pair": _pair(tags.get("East"), tags.get("West")),
                "contract": contract,
                "declarer": declarer if contract not in (None, "Pass") else None,
                "result": None
                if contract in (None, "Pass")
                else relative_result(contract, tags.get("Result")),
                "score_ns": score,
                "adjusted": adjusted,
                "extra": extra,
            }
        )
    event_date = _date(first_tags.get("Date"))
    pairs, two_winner = _total_scores(games)
    if two_winner:  # NS 1 and EW 1 are two pairs: their ids name the direction
        for r in results:
            r["ns_pair"], r["ew_pair"] = f"{r['ns_pair']}NS", f"{r['ew_pair']}EW"
    extra = {"event": first_tags.get("Event"), "encoding": encoding}
    if pairs:
        extra |= {"winner_type": 2 if two_winner else 1, "pairs": pairs}
    event = {
        "event_id": event_id,
        "date": event_date,
        "scoring": scoring or scoring_method(meta, first_tags),
        "options": None,
        "boards_per_round": None,
        "movement": None,
        RAW_MONTH: None,  # the storage partition, given by ingest
        "extra": json.dumps(extra, ensure_ascii=False),
        "source_file": source,
        "line_no": games[0].line_no if games else 1,
        "delivery": delivery,
    }
    result_rows = [
        {
            "event_id": event_id,
            "section": r.get("section"),
            "board": r["board"],
            "round": r.get("round"),
            "ns_pair": r["ns_pair"],
            "ew_pair": r["ew_pair"],
            "score_ns": r.get("score_ns"),
            "contract": r.get("contract"),
            "declarer": r.get("declarer"),
            "result": r.get("result"),
            "adjusted": r.get("adjusted"),
            RAW_MONTH: None,  # the storage partition, given by ingest
            "extra": json.dumps(r["extra"], sort_keys=True, ensure_ascii=False)
            if r["extra"]
            else None,
            "source_file": source,
            "line_no": r["line_no"],
            "delivery": delivery,
        }
        for r in results
    ]
    frames = {
        "bridge.event": pl.DataFrame(
            [event], schema=RECORD_TYPES["bridge.event"].schema(), orient="row"
        ),
        "bridge.result": pl.DataFrame(
            result_rows, schema=RECORD_TYPES["bridge.result"].schema(), orient="row"
        ),
    }
    return ParsedPBN(frames, skipped, meta, encoding)


def _total_scores(games: list[Game]) -> tuple[list[dict], bool]:
    """The pairs of a `[TotalScoreTable]` (the program's own standings: `PairId`, `Names`,
    `Rank`, `TotalScoreMP`/`TotalScoreIMP`/`TotalScore`, `TotalPercentage`), in the shape of
    `transforms.bridge.reported`, and whether it is a two-winner movement (every pair has a
    `Direction`, NS or EW)."""
    game = next((g for g in games if "TotalScoreTable" in g.tags), None)
    if game is None:
        return [], False
    rows = [r for r in _table_rows(game, "TotalScoreTable") if r.get("PairId")]
    directions = [(r.get("Direction") or "").upper() for r in rows]
    two_winner = bool(rows) and all(d in ("NS", "EW") for d in directions)
    pairs = []
    for row, direction in zip(rows, directions, strict=True):
        total = row.get("TotalScoreMP") or row.get("TotalScoreIMP") or row.get("TotalScore")
        pairs.append(
            {
                "pair": row["PairId"] + (direction if two_winner else ""),
                "names": row.get("Names"),
                "total": _float(total),
                "pct": _float(row.get("TotalPercentage")),
                "rank": row.get("Rank"),
            }
        )
    return pairs, two_winner


def _float(text: str | None) -> float | None:
    try:
        return None if text is None else float(text.replace(",", "."))
    except ValueError:
        return None


def _table_line(row: dict, base: dict, line_no: int) -> dict | str:
    """One ScoreTable line as a result row, or the reason it is skipped."""
    ns = row.get("PairId_NS") or row.get("PairNS") or row.get("Pair_NS")
    ew = row.get("PairId_EW") or row.get("PairEW") or row.get("Pair_EW")
    if ns is None or ew is None:
        return f"board {base['board']}: traveller line without pair numbers"
    contract = normal_contract(row.get("Contract"))
    adjusted = None
    score_text = row.get("Score_NS")
    if score_text is None and row.get("Score_EW") is not None:
        score_text = row["Score_EW"] if row["Score_EW"].startswith("A") else None
        if score_text is None:
            ew_score = _score_ns(row["Score_EW"])
            score_text = None if ew_score is None else str(-ew_score)
    if score_text is not None and score_text.upper().startswith("A"):
        adjusted, score_text = score_text, None
    if contract is not None and contract.startswith("A") and contract_level(contract) is None:
        adjusted, contract = contract, None
    score = _score_ns(score_text)
    if contract is None and score is None and adjusted is None:
        return f"board {base['board']}: traveller line without a result"
    round_text = row.get("Round") or ""
    declarer = (row.get("Declarer") or "").strip().upper() or None
    return base | {
        "line_no": line_no,
        "section": row.get("Section") or base["section"],
        "round": int(round_text) if round_text.isdigit() else None,
        "ns_pair": ns,
        "ew_pair": ew,
        "contract": contract,
        "declarer": declarer if contract not in (None, "Pass") else None,
        "result": None
        if contract in (None, "Pass")
        else relative_result(contract, row.get("Result")),
        "score_ns": score,
        "adjusted": adjusted,
    }


def _date(text: str | None) -> date | None:
    if not text:
        return None
    match = re.match(r"^(\d{4})\.(\d{2})\.(\d{2})$", text.strip())
    if not match:
        return None
    try:
        return date(*map(int, match.groups()))
    except ValueError:
        return None
