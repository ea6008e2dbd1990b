"""`duplirank score FILE`: score one bridge event file (USEBIO, PBN or JSON Lines) and print it.

The body of the CLI command: `score_file` returns the text to print. The method defaults to
the file's own (`bridge.event.scoring`, or the PBN's `ScoringType`/`[Scoring]`); `--option
key=value` override the event's options (every option named, even set to its default: the one
precedence rule, `transforms.bridge.options.resolve_options`). User errors (unknown method, bad
option, unreadable file) raise ValueError with a one-line message.

In `table` format the summary of quarantined lines and data issues follows the tables; in `csv`
and `json` formats the output is only the data and the summary goes to standard error.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import polars as pl

from flows.ingest import validate_bytes
from transforms.bridge.deals import board_deals
from transforms.bridge.event import score_events
from transforms.bridge.options import METHODS, BridgeOptions, resolve_options
from transforms.bridge.pbn import parse_pbn
from transforms.bridge.usebio import is_usebio, parse_usebio
from transforms.record_types import RECORD_TYPES

FORMATS = ("table", "csv", "json", "html")
BRIDGE_TYPES = ("bridge.event", "bridge.result", "bridge.penalty")
STANDING_COLUMNS = ["section", "rank", "pair", "names", "total", "max", "pct", "imps", "vp",
                    "penalties", "boards", "reported_total", "reported_pct",
                    "reported_rank"]  # fmt: skip
BOARD_COLUMNS = [
    "section", "board", "pair", "direction", "round", "opponent", "contract", "declarer",
    "result", "score", "score_ns", "mp", "mp_top", "pct", "imp", "datum", "adjusted",
    "computed_score", "reported_points",
]  # fmt: skip


def score_file(
    path: Path,
    method: str | None,
    options: list[str],
    boards: bool,
    fmt: str,
    out: Path | None = None,
    lang: str = "fr",
) -> str:
    """The text `duplirank score` prints for one file (`html`: writes the event's pages into
    `out` with `flows.tools.site.event_site` and returns what it wrote)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r} (one of {', '.join(FORMATS)})")
    if fmt == "html" and out is None:
        raise ValueError("--format html needs --out DIR (the folder of the pages)")
    if method is not None and method not in METHODS:
        raise ValueError(f"unknown method {method!r} (one of {', '.join(METHODS)})")
    # the command line's options override the event's own ones, defaults included (the one
    # precedence rule: `transforms.bridge.options.resolve_options`)
    overrides: dict[str, str | None] = _parse_options(options)
    if method is not None:
        overrides["method"] = method
    BridgeOptions.from_mapping(overrides)  # reject bad options before reading anything
    frames, notes = read_bridge_file(Path(path))
    events = frames["bridge.event"]
    if events.is_empty():
        raise ValueError(f"{path}: no bridge.event record to score")
    tables, issues = score_events(frames, overrides).collect()
    notes += _issue_notes(issues)
    if fmt == "html":
        from flows.tools.site import event_site

        deals = board_deals(frames["bridge.result"].lazy()).collect()
        site = event_site(
            tables["bridge_standings"], tables["bridge_board_results"], events, out, lang, deals
        )
        text = site.text() + "\n"
        if notes:
            sys.stderr.write("\n".join(notes) + "\n")
        return text
    if boards:
        shown = tables["bridge_board_results"].sort(
            "section", "board", "direction", "pair", descending=[False, False, True, False]
        )
        columns = BOARD_COLUMNS
    else:
        ns_first = pl.col("field") == "EW"  # NS's table, then EW's
        shown = tables["bridge_standings"].sort(
            "section", ns_first, "rank", "pair", nulls_last=True
        )
        columns = STANDING_COLUMNS
    outputs: list[str] = []
    for event in events.unique("event_id", keep="last").sort("event_id").iter_rows(named=True):
        title = f"{event['event_id']} {event.get('date') or ''} — {_method(event, overrides)}"
        rows = shown.filter(pl.col("event_id") == event["event_id"])
        kept = _drop_empty(rows.select(columns)).columns  # the same columns in every field
        for field, frame in _parts(rows):
            frame = frame.select(kept).with_columns(pl.lit(event["event_id"]).alias("event_id"))
            if field is not None:
                frame = frame.with_columns(pl.lit(field).alias("field"))
            frame = frame.select(
                "event_id",
                *(["field"] if field is not None else []),
                pl.exclude("event_id", "field"),
            )
            name = title.strip() + (f" — field {field}" if field is not None else "")
            outputs.append(_render(frame, fmt, name))
    text = _join(outputs, fmt)
    if notes:
        if fmt == "table":
            text += "\n" + "\n".join(notes) + "\n"
        else:
            sys.stderr.write("\n".join(notes) + "\n")
    return text


def _parts(frame: pl.DataFrame) -> list[tuple[str | None, pl.DataFrame]]:
    """The rows of one event as one table per field (NS, EW of a two-winner movement; None:
    the one field of a one-winner movement)."""
    if "field" not in frame.columns or frame["field"].is_null().all():
        return [(None, frame)]
    parts = frame.partition_by("field", as_dict=True, maintain_order=True)
    return [(field, part) for (field,), part in parts.items()]


def _method(event: dict, overrides: dict) -> str:
    try:
        return resolve_options(event, overrides).method or ""
    except ValueError:  # reported with the data issues (`bad_event_options`)
        return "not scored"


def read_bridge_file(path: Path) -> tuple[dict[str, pl.DataFrame], list[str]]:
    """Bronze-shaped bridge frames of a USEBIO, PBN or JSON Lines file, and notes on what was
    set aside."""
    try:
        data = path.read_bytes()
    except OSError as err:
        raise ValueError(f"cannot read {path}: {err.strerror or err}") from None
    if path.suffix.lower() == ".gz":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as err:
            raise ValueError(f"cannot read {path}: {err}") from None
    frames = {name: pl.DataFrame(schema=RECORD_TYPES[name].schema()) for name in BRIDGE_TYPES}
    notes: list[str] = []
    if path.suffix.lower() == ".xml" or is_usebio(data):
        parsed_xml = parse_usebio(data, path.name, path.name.split(".")[0])
        if parsed_xml.frames["bridge.result"].is_empty():
            raise ValueError(f"{path}: no traveller line could be read")
        frames |= parsed_xml.frames
        notes += [f"skipped: {reason}" for reason in parsed_xml.skipped]
        notes += [
            f"unknown USEBIO element <{tag}> ignored ({n}×)"
            for tag, n in sorted(parsed_xml.unknown.items())
        ]
        return frames, notes
    if _looks_like_pbn(path, data):
        parsed = parse_pbn(data, path.name, path.name.split(".")[0])
        if parsed.frames["bridge.result"].is_empty():
            what = "empty" if not data.strip() else "no game with a result could be read"
            skipped = f" ({len(parsed.skipped)} games skipped)" if parsed.skipped else ""
            raise ValueError(f"{path}: not a PBN file to score: {what}{skipped}")
        frames |= parsed.frames
        notes += [f"skipped game at line {n}: {reason}" for n, reason in parsed.skipped]
        return frames, notes
    name = path.stem if path.suffix.lower() == ".gz" else path.name  # already gunzipped
    validated = validate_bytes(data, name, known_types=BRIDGE_TYPES)
    if validated.lines_read and not validated.accepted:
        reasons = {q["reason"] for q in validated.quarantine}
        raise ValueError(f"{path}: no bridge record could be read ({'; '.join(sorted(reasons))})")
    frames |= validated.frames()
    quarantine = validated.quarantine
    if quarantine:
        notes.append(
            f"quarantined {len(quarantine)} of {validated.lines_read} lines: "
            + "; ".join(f"line {q['line_no']}: {q['reason']}" for q in quarantine[:10])
            + (" …" if len(quarantine) > 10 else "")
        )
    return frames, notes


def _looks_like_pbn(path: Path, data: bytes) -> bool:
    if path.suffix.lower() == ".pbn":
        return True
    head = data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    return head in (b"%", b"[")


def _parse_options(options: list[str]) -> dict[str, str]:
    parsed: dict[str, str] = {}
    for item in options:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"bad option {item!r}: expected key=value")
        parsed[key.strip()] = value.strip()
    return parsed


def _issue_notes(issues: pl.DataFrame) -> list[str]:
    if issues.is_empty():
        return []
    counts = issues.group_by("kind").len().sort("kind")
    first = issues.sort("kind").unique("kind", keep="first", maintain_order=True)
    examples = dict(zip(first["kind"], first["detail"], strict=True))
    return [
        f"data issue {kind}: {n} (e.g. {examples[kind]})"
        for kind, n in zip(counts["kind"], counts["len"], strict=True)
    ]


def _drop_empty(frame: pl.DataFrame) -> pl.DataFrame:
    """Columns that are null throughout (pct in an IMP event, section when there is none)."""
    keep = [c for c in frame.columns if frame[c].null_count() < len(frame) or frame.is_empty()]
    return frame.select(keep)


def _render(frame: pl.DataFrame, fmt: str, title: str) -> str:
    if fmt == "csv":
        return frame.write_csv()
    if fmt == "json":
        return frame.write_json()
    shown = frame.with_columns(pl.col(pl.Float64).round(2))
    with pl.Config(
        tbl_rows=-1,
        tbl_cols=-1,
        tbl_hide_dataframe_shape=True,
        tbl_hide_column_data_types=True,
        tbl_width_chars=200,
        fmt_str_lengths=40,
        tbl_formatting="ASCII_MARKDOWN",
    ):
        return f"{title}\n{shown}\n"


def _join(outputs: list[str], fmt: str) -> str:
    if fmt == "json":
        rows = [row for text in outputs for row in json.loads(text)]
        return json.dumps(rows, ensure_ascii=False) + "\n"
    if fmt == "csv" and len(outputs) > 1:  # one header
        return outputs[0] + "".join(o.split("\n", 1)[1] for o in outputs[1:])
    return "\n".join(outputs)
