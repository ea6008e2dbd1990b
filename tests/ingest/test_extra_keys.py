"""A line's unknown fields (`extra`) are the same whatever the JSON's spacing and escapes:
servers write compact JSON or `json.dumps`'s default (`", "`, `": "`, `\\uXXXX`)."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa

from flows.ingest import validate_lines
from flows.ingest.parse import key_counts
from tests.ingest.cases import deal

RECORDS = [
    deal("ann", contract="80♠ N"),
    deal("bob", contract="100♥ E", seat="N"),  # one unknown field
    deal("cid", note={"by": "app", "v": [1, {"k": 'a": b'}]}),  # nested keys, a `":` in text
    deal("dan", contract=None, tip="x"),  # a known field null, and an unknown one
    deal("eve", contract='say "hi": ok'),
]


def extras(lines: list[str]) -> dict[str, str | None]:
    rows = validate_lines(lines, "f.jsonl").rows["simultane.deal"]
    return dict(zip(rows["player_id"], rows["extra"], strict=True))


def test_extra_fields_do_not_depend_on_spaces_or_escapes():
    compact = [json.dumps(r, separators=(",", ":"), ensure_ascii=False) for r in RECORDS]
    spaced = [json.dumps(r) for r in RECORDS]  # Python's default: spaces and \\u escapes
    wide = [json.dumps(r, separators=(" ,  ", " : ")) for r in RECORDS]
    found = extras(compact)
    assert {k: json.loads(v) if v else v for k, v in found.items()} == {
        "ann": None,
        "bob": {"seat": "N"},
        "cid": {"note": {"by": "app", "v": [1, {"k": 'a": b'}]}},
        "dan": {"tip": "x"},
        "eve": None,
    }
    assert extras(spaced) == found and extras(wide) == found


def test_key_counts_counts_keys_nested_ones_included():
    lines = [b'{"a": 1, "b" :{"c":"x:y"}}', b"{}", b'{"t":"10:00", "u" \t : [ {"v": 2} ]}']
    raw = pa.array([line + b"\n" for line in lines], pa.large_binary())
    assert key_counts(raw, np.arange(3)).tolist() == [3, 0, 3]  # in place
    assert key_counts(raw, np.array([2, 0])).tolist() == [3, 3]  # any order
    many = pa.array([lines[0] + b"\n"] * 20 + [lines[2] + b"\n"], pa.large_binary())
    assert key_counts(many, np.array([20])).tolist() == [3]  # a few lines, copied out


def _keys_by_hand(line: bytes) -> int:
    """`key_counts`'s definition, byte by byte: a `:` whose last byte before it, past up to
    KEY_SPACES spaces or tabs, is a `"`."""
    count = 0
    for at, byte in enumerate(line):
        if byte == ord(":") and at > 0:
            before = at - 1
            for _ in range(4):
                if line[before] in b" \t" and before > 0:
                    before -= 1
            count += line[before] == ord('"')
    return count


def test_key_counts_matches_its_definition_on_random_bytes():
    import random

    rng = random.Random(7)
    alphabet = [b'"', b":", b" ", b"\t", b"a", b"{", b","]
    for _ in range(300):
        lines = [
            b"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 20))) + b"\n"
            for _ in range(rng.randint(1, 25))
        ]
        raw = pa.array(lines, pa.large_binary())
        picked = rng.sample(range(len(lines)), rng.randint(0, len(lines)))
        expected = [_keys_by_hand(lines[i]) for i in picked]
        assert key_counts(raw, np.array(picked, dtype=np.int64)).tolist() == expected
