"""Invariants (hypothesis): NS + EW matchpoints = the top; IMP methods are antisymmetric."""

from __future__ import annotations

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.bridge.conftest import RESULT_SCHEMA, board_scores, score
from transforms.bridge.travellers import traveller_lines

SCORES = st.integers(min_value=-200, max_value=200).map(lambda v: v * 10)
FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(
    full=st.lists(SCORES, min_size=1, max_size=14),
    partial=st.lists(SCORES, min_size=1, max_size=14),
    artificial=st.booleans(),
)
def test_ns_plus_ew_matchpoints_is_the_top(full, partial, artificial):
    n = max(len(full), len(partial))
    rows = board_scores(1, full) + board_scores(2, partial + (["A60/A40"] if artificial else []))
    frame = score("matchpoints", rows).tables["bridge_board_results"].collect()
    both = (
        frame.filter(pl.col("adjusted").is_null())
        .group_by(
            "board",
            "score_ns",
            pl.when(pl.col("direction") == "NS")
            .then(pl.col("pair"))
            .otherwise(pl.col("opponent"))
            .alias("table"),
        )
        .agg(pl.col("mp").sum(), pl.col("mp_top").first())
    )
    for row in both.iter_rows(named=True):
        m = len(full) if row["board"] == 1 else len(partial)
        share = 1.2 if (m < 4 <= n) else 1.0  # the M < 4 exception: complement to 120 %
        assert abs(row["mp"] - share * row["mp_top"]) < 1e-9
    if len(full) == n:  # a full board: Σ NS = N(N − 1)
        board1 = frame.filter((pl.col("board") == 1) & (pl.col("direction") == "NS"))
        assert abs(board1["mp"].sum() - n * (n - 1)) < 1e-9


@FAST
@given(
    scores=st.lists(SCORES, min_size=1, max_size=12),
    method=st.sampled_from(["butler", "sunday_times", "cavendish", "cavendish_avg"]),
)
def test_imp_methods_are_antisymmetric(scores, method):
    frame = score(method, board_scores(1, scores)).tables["bridge_board_results"].collect()
    ns = frame.filter(pl.col("direction") == "NS").sort("opponent")["imp"].to_list()
    ew = frame.filter(pl.col("direction") == "EW").sort("pair")["imp"].to_list()
    assert ns == [-v for v in ew]
    if method in ("cavendish", "cavendish_avg"):  # every comparison is counted both ways
        assert abs(sum(ns)) < 1e-9


def _kept_for_datum(scores: list[int]) -> list[int]:
    """KOPS trimming, as a plain list: ⌈n/4⌉ dropped each side (1 for n = 5)."""
    n = len(scores)
    k = 1 if n == 5 else -(-n // 4)
    k = min(k, (n - 1) // 2)
    return sorted(scores)[k : n - k]


@FAST
@given(
    boards=st.lists(
        st.lists(
            st.sampled_from([-200, -100, 0, 110, 140, 420, 450, 620]), min_size=1, max_size=13
        ),
        min_size=1,
        max_size=3,
    )
)
def test_ranks_and_datums_match_a_plain_model(boards):
    """The ranks read from one sort (`frames`) against counting by hand, with many ties:
    matchpoints from zero (all boards full, so no Neuberg) and Butler datums."""
    n = max(len(b) for b in boards)
    boards = [(b * n)[:n] for b in boards]  # every board played at all n tables
    rows = [row for i, b in enumerate(boards, start=1) for row in board_scores(i, b)]
    mp = score("matchpoints", rows).tables["bridge_board_results"].collect()
    butler = score("butler", rows).tables["bridge_board_results"].collect()
    for i, b in enumerate(boards, start=1):
        ns = mp.filter((pl.col("board") == i) & (pl.col("direction") == "NS"))
        ns = ns.sort(pl.col("pair").cast(pl.Int64))
        expected = [2 * sum(o < s for o in b) + sum(o == s for o in b) - 1 for s in b]
        assert ns["mp"].to_list() == [float(v) for v in expected]
        datums = butler.filter(pl.col("board") == i)["datum"].unique().to_list()
        if n >= 3:
            kept = _kept_for_datum(b)
            total = sum(kept)
            datum = (abs(total) // (10 * len(kept))) * 10 * (1 if total >= 0 else -1)
            assert datums == [datum]


@FAST
@given(
    tables=st.lists(
        st.tuples(
            st.sampled_from(["E1", "E2", "E3"]),
            st.sampled_from(["", "A", "B"]),
            st.text("0123456789xyz", min_size=1, max_size=3),
            st.text("0123456789xyz", min_size=1, max_size=3),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_pair_keys_identify_event_section_and_pair(tables):
    """One integer key per (event, section, pair), whichever side the pair sat."""
    rows = [
        {"event_id": e, "section": s, "board": 1, "ns_pair": ns, "ew_pair": ew, "score_ns": 100}
        for e, s, ns, ew in tables
    ]
    results = pl.DataFrame(
        [{name: row.get(name) for name in RESULT_SCHEMA} for row in rows], schema=RESULT_SCHEMA
    ).with_columns(pl.col("event_id").str.slice(1).cast(pl.Int64).alias("ev"))
    lines = traveller_lines(results)
    seats = pl.concat(
        [
            lines.select(
                "event_id",
                "section",
                pl.col(f"{side}_pair").alias("pair"),
                pl.col(f"{side}_key").alias("key"),
            )
            for side in ("ns", "ew")
        ]
    ).unique()
    assert seats.select("event_id", "section", "pair").n_unique() == seats.height
    assert seats["key"].n_unique() == seats.height
