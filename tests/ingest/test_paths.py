"""The screen that accepts most lines at once says what the detailed checks say: the same rows
accepted, the same reasons; and the declaration's rules evaluated in one pass are the rules
dataframely's own `filter` checks."""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from flows.ingest import decode, hash_index, screen, validate
from flows.ingest.check import validate_lines
from flows.ingest.line_split import LineSplitter as _LineSplitter
from flows.ingest.options import IngestOptions, Window
from flows.ingest.parse import parse_chunk
from flows.ingest.validate import Validator
from transforms.record_types import RECORD_TYPES

from .cases import AS_OF, deal, dumps, ff_deal, match, mutated

WINDOW = Window.around(IngestOptions(), AS_OF)
EXAMPLES = settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
lines = st.lists(mutated(), min_size=1, max_size=30)


def _validated(lines: list[bytes]):
    v = validate_lines(lines, "x.jsonl", window=WINDOW)
    return {k: f.sort("line_no") for k, f in v.rows.items()}, v.quarantine_rows.sort("line_no")


@EXAMPLES
@given(lines=lines)
def test_the_screen_accepts_what_the_detailed_checks_accept(monkeypatch, lines):
    fast_rows, fast_quarantine = _validated(lines)
    with monkeypatch.context() as m:  # no line passes the screen: every line checked in detail
        m.setattr(
            screen,
            "screen_columns",
            lambda rt, window: [pl.lit(False).alias("_passed"), screen.may_have_extra(rt)],
        )
        slow_rows, slow_quarantine = _validated(lines)
    assert fast_rows.keys() == slow_rows.keys()
    for name in fast_rows:
        assert_frame_equal(fast_rows[name], slow_rows[name])
    assert_frame_equal(fast_quarantine, slow_quarantine)


@EXAMPLES
@given(lines=lines)
def test_the_rules_evaluated_at_once_are_dataframelys(lines):
    data = b"".join(x.replace(b"\n", b" ") + b"\n" for x in lines)
    chunk = _LineSplitter(IngestOptions())._chunk(data)
    validator = Validator(WINDOW)
    try:
        parsed = parse_chunk(validator.con, chunk.line_no, chunk.raw)
    finally:
        validator.close()
    for rt in RECORD_TYPES.values():
        rows = parsed.filter(pl.col("type") == f'"{rt.name}"')
        if not rows.height:
            continue
        texts = rows.select("line_no", *(pl.col(f).alias(f"_t_{f}") for f in rt.fields))
        typed = decode.typed(rt, texts, WINDOW).select(rt.column_names)
        ours = typed.with_columns(screen.rule_columns(rt))
        _, failure = rt.declaration.filter(typed)
        details = failure.details()
        for rule in rt.rule_exprs():
            theirs = ours.select("line_no").join(
                details.select("line_no", pl.col(rule).cast(pl.String)), on="line_no", how="left"
            )[rule]
            expected = (theirs != "invalid").fill_null(True)  # a row absent there is valid
            assert ours[rule].to_list() == expected.to_list(), rule


def test_a_line_the_screen_passes_is_accepted_as_it_is():
    rows, quarantine = _validated([dumps(deal("ann")).encode(), dumps(deal("bob", 2)).encode()])
    assert rows["simultane.deal"]["player_id"].to_list() == ["ann", "bob"]
    assert quarantine.height == 0


def test_a_record_type_first_seen_after_the_sampled_lines_gets_all_its_fields():
    """The fields parsed are those of the types of a file's first lines; a type first seen
    later in the chunk gets its fields from a second parse of its lines."""
    deals = [dumps(deal(f"p{i}", 1 + i % 2)).encode() for i in range(validate.SAMPLE_LINES + 50)]
    late = [dumps(match("m1")).encode(), dumps(ff_deal("m1")).encode()]
    rows, quarantine = _validated(deals + late)
    assert quarantine.height == 0
    assert rows["simultane.deal"].height == len(deals)
    expected = {k: v for k, v in match("m1").items() if k != "type"}
    got = rows["ff.match"].select(*expected).to_dicts()[0]
    assert got["player_b"] == "BOT" and got["match_type"] == "attaque" and got["ranked"] is True
    assert rows["ff.deal"]["points_made"].to_list() == [100]


@settings(max_examples=60, deadline=None)
@given(chunks=st.lists(st.lists(st.integers(0, 6), max_size=40), max_size=6))
def test_the_first_line_of_each_key_is_found_across_chunks(chunks):
    """`Seen` (sorted runs, a fast sort fixing its ties) says what a dict of first lines
    says, over several chunks with many copies."""
    seen, firsts, line = hash_index.Seen(), {}, 0
    for keys in chunks:
        line_no = np.arange(line + 1, line + 1 + len(keys), dtype=np.int64)
        line += len(keys)
        h1 = np.array(keys, np.uint64)
        first, kept = seen.first_lines(h1, h1 * 31 + 7, line_no, (line_no * 10).astype(np.uint64))
        for key, n in zip(keys, line_no, strict=True):
            firsts.setdefault(key, int(n))
        expected = [firsts[k] for k in keys]
        assert first.tolist() == expected
        assert kept.tolist() == [10 * n for n in expected]


def test_the_same_first_hash_with_another_second_is_another_key():
    """No false copy when two keys' first hashes collide (a collision is not looked past to
    find a third key's copy: a 2^-64 event)."""
    seen = hash_index.Seen()
    h1 = np.array([5, 5], np.uint64)
    first, _ = seen.first_lines(h1, np.array([1, 2], np.uint64), np.array([1, 2]))
    assert first.tolist() == [1, 2]
    first, _ = seen.first_lines(h1[:1], np.array([3], np.uint64), np.array([3]))
    assert first.tolist() == [3]


def test_the_fast_stable_sort_is_the_stable_sort():
    rng = np.random.default_rng(7)
    for size, values in ((0, 1), (1, 1), (50, 3), (5000, 40), (5000, 2**62)):
        keys = rng.integers(0, values, size).astype(np.uint64)
        assert (hash_index._argsort_stable(keys) == np.argsort(keys, kind="stable")).all()
