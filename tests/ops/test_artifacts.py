"""Prefect artifacts of a run (markdown summary, top of each ranking), on the test server."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import polars as pl
from prefect import flow
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId
from prefect.runtime import flow_run

from flows.artifacts import SUMMARY_KEY, publish_artifacts, quarantine_reasons
from flows.ingest import FileReport, IngestResult
from flows.nightly import Summary
from flows.settings import load_settings
from flows.storage.warehouse import Warehouse

NOW = datetime(2026, 11, 30, 3, 30, tzinfo=UTC)


def make_warehouse(root):
    """A published `simultane_monthly` (3 players) and a quarantine of two deliveries."""
    wh = Warehouse(root)
    tx = wh.transaction("r1")
    monthly = pl.DataFrame(
        {
            "month": ["2026-11"] * 3,
            "player_id": ["P1", "P2", "P3"],
            "indice": [120.5, 110.25, 99.0],
            "victoire": [10.0, 0.0, 0.0],
            "tournaments": [5, 4, 3],
            "wins": [1, 0, 0],
            "pct_actuel": [104.2, 101.0, 98.5],
            "representative": [True, True, False],
            "rank_indice": [1, 2, 3],
        }
    )
    quarantine = pl.DataFrame(
        {
            "month": ["2026-11"] * 5,
            "file": ["a.jsonl"] * 4 + ["old.jsonl"],
            "line_no": [1, 2, 3, 4, 1],
            "raw": ["x"] * 5,
            "reason": [
                "invalid JSON",
                "duplicate of line 3",
                "duplicate of line 17",
                "field started_at must be an ISO-8601 timestamp",
                "invalid JSON",
            ],
            "sha256": ["aaa"] * 4 + ["old"],
            "ingested_at": [NOW] * 5,
        }
    )
    tx.put_months("gold", "simultane_monthly", monthly, ["2026-11"])
    tx.put_months("meta", "quarantine", quarantine, ["2026-11"])
    tx.commit()
    return wh.root


def run_summary() -> Summary:
    summary = Summary("20261130T033000")
    summary.ingest = IngestResult(
        files=[
            FileReport("a.jsonl", "aaa", lines_read=10, rows_accepted=6, rows_quarantined=4),
            FileReport("old.jsonl", "old", status="already_ingested"),
        ]
    )
    summary.rebuilt = {"simultane": ["2026-11"], "bridge": []}
    return summary


def test_quarantine_reasons_of_this_run_only(tmp_path):
    root = make_warehouse(tmp_path / "wh")
    assert quarantine_reasons(root, run_summary()) == {
        "duplicate of line N": 2,
        "field started_at must be an ISO-8601 timestamp": 1,
        "invalid JSON": 1,  # the older delivery's line is not counted
    }


def test_files_not_read_have_no_hash_and_do_not_stop_the_count(tmp_path):
    root = make_warehouse(tmp_path / "wh")
    summary = run_summary()
    summary.ingest.files += [
        FileReport("notes.txt", None, status="skipped: unknown suffix"),
        FileReport("fifo.jsonl", None, status="skipped: not a regular file"),
    ]
    assert sum(quarantine_reasons(root, summary).values()) == 4


def test_no_quarantine_table_means_no_reasons(tmp_path):
    assert quarantine_reasons(tmp_path / "empty", run_summary()) == {}


def test_the_flow_run_shows_its_summary_and_the_rankings(harness, tmp_path):
    root = make_warehouse(tmp_path / "wh")
    settings = load_settings(warehouse=root)

    @flow
    def a_run():
        publish_artifacts(run_summary(), settings, "nightly", top=2)
        return flow_run.id

    run_id = a_run()
    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(
            artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[run_id]))
        )
    by_key = {a.key: a for a in artifacts}
    assert set(by_key) == {SUMMARY_KEY, "simultane-monthly-top"}

    summary = by_key[SUMMARY_KEY]
    assert summary.type == "markdown"
    assert "# duplirank nightly — run 20261130T033000" in summary.data
    assert "| duplicate of line N | 2 |" in summary.data
    assert "- **simultane**: 2026-11" in summary.data
    assert "| 2 | 1 | 0 | 10 | 6 | 4 |" in summary.data  # files, skipped, unreadable, lines…

    table = by_key["simultane-monthly-top"]
    assert table.type == "table"
    rows = json.loads(table.data) if isinstance(table.data, str) else table.data
    assert [r["player_id"] for r in rows] == ["P1", "P2"]  # the top 2
    assert rows[0]["indice"] == 120.5 and rows[0]["rank"] == 1


def test_artifacts_never_fail_a_run(harness, tmp_path, caplog):
    settings = load_settings(warehouse=tmp_path / "wh")

    @flow
    def a_run():
        summary = run_summary()
        summary.rebuilt = None  # a broken summary: the artifacts cannot be written
        return publish_artifacts(summary, settings, "nightly")

    assert a_run() == []
    assert "could not publish the run's Prefect artifacts" in caplog.text


def test_what_the_artifacts_read_is_what_the_command_shows(harness, tmp_path):
    """The reasons and rankings the artifacts read stay in the summary: the command prints
    them as it would read them again."""
    from flows.tools.report import rankings_text

    root = make_warehouse(tmp_path / "wh")
    settings = load_settings(warehouse=root)
    summary = run_summary()

    @flow
    def a_run():
        publish_artifacts(summary, settings, "nightly")

    a_run()
    assert summary.reasons == quarantine_reasons(root, run_summary())
    assert [(title, table) for title, table, _ in summary.rankings] == [
        ("Simultané — Indice of the latest month", "simultane_monthly")
    ]
    shown = rankings_text(root, rows=summary.rankings)
    assert shown == rankings_text(root)
    assert "P1" in shown and "120.5" in shown


def test_the_rankings_are_read_from_a_checked_database_only(tmp_path):
    """The views database of the publication is attached as it is only when its bytes are
    those its manifest records; else the checked session of `duplirank sql` reads the files
    (views built in memory), and an empty warehouse has nothing to read."""
    import os

    from flows.artifacts import _Reader, published_reader
    from flows.tools.query import Session
    from flows.tools.report import top_rows

    root = make_warehouse(tmp_path / "wh")
    settings = load_settings(warehouse=root)
    with published_reader(settings) as reader:
        assert isinstance(reader, _Reader)
        intact = list(top_rows(reader, 2))
    database = (root / "duplirank.duckdb").resolve()
    os.chmod(database, 0o644)
    with open(database, "ab") as handle:  # no longer the bytes the manifest records
        handle.write(b"\0" * 4096)
    with published_reader(settings) as reader:
        assert isinstance(reader, Session)
        damaged = list(top_rows(reader, 2))
    assert [(t, table, frame.to_dicts()) for t, table, frame in damaged] == [
        (t, table, frame.to_dicts()) for t, table, frame in intact
    ]
    assert published_reader(load_settings(warehouse=tmp_path / "empty")) is None
