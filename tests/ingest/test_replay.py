"""Late parents and `--replay-quarantine`: quarantined lines that now pass move to bronze."""

from __future__ import annotations

from datetime import date

import polars as pl

from flows import cli
from flows.runs import replay_run as run_replay
from flows.settings import Settings

from .cases import (
    accepted,
    assert_total,
    deal,
    dumps,
    event,
    ff_deal,
    good_file,
    match,
    reasons,
    result,
    run,
    table,
    write,
)


def test_a_child_before_its_parent_is_ingested_when_the_parent_arrives(tmp_path):
    landing = tmp_path / "landing"
    landing.mkdir()
    deals = write(landing / "ff-deals.jsonl", [dumps(ff_deal(deal_no=n)) for n in (1, 2)])
    bridge = write(landing / "bridge-results.jsonl", [dumps(result())])
    first, wh = run(tmp_path, landing)
    assert reasons(wh) == [
        (1, "unknown event E1"),
        (1, "unknown match m1"),
        (2, "unknown match m1"),
    ]
    assert first.touched("ff.deal") == set()
    # the next night brings the match and the event, never the children's files again
    write(landing / "ff-match.jsonl", [dumps(match())])
    write(landing / "bridge-event.jsonl", [dumps(event())])
    second, wh = run(tmp_path, landing)
    assert reasons(wh) == []
    assert accepted(wh, "ff_deal", deals) == [1, 2]
    assert accepted(wh, "bridge_result", bridge) == [1]
    assert set(table(wh, "ff_deal")["raw_month"]) == {"2026-11"}
    assert second.touched("ff.deal", "bridge.result") == {"2026-11"}
    log = table(wh, "ingest_log").filter(pl.col("status") == "replayed").sort("file")
    assert log.select("file", "lines_read", "rows_accepted", "rows_quarantined").rows() == [
        (str(bridge), 1, 1, 0),
        (str(deals), 2, 2, 0),
    ]
    assert second.replayed == 3 and "replayed from quarantine into bronze: 3 lines" in (
        second.text()
    )
    # the children keep their file, line and delivery (not the replay's)
    delivered = table(wh, "ingest_log").filter(
        (pl.col("file") == str(deals)) & (pl.col("status") == "ingested")
    )["delivery"]
    assert table(wh, "ff_deal")["delivery"].to_list() == delivered.to_list() * 2


def test_a_child_and_its_parent_later_in_the_same_run(tmp_path):
    landing = tmp_path / "landing"
    landing.mkdir()
    write(landing / "a-deals.jsonl", [dumps(ff_deal())])
    write(landing / "b-match.jsonl", [dumps(match())])
    _, wh = run(tmp_path, landing)
    assert reasons(wh) == [] and table(wh, "ff_deal").height == 1


def test_replay_quarantine_moves_what_now_passes(tmp_path):
    # delivered when the run date made the tournament look like the future
    path = write(
        tmp_path / "day.jsonl",
        [dumps(deal("ann")), dumps(deal("bob", made=-1)), "{broken", dumps(deal("cat", 2))],
    )
    other = good_file(tmp_path)
    _, wh = run(tmp_path, path, other, as_of=date(2026, 10, 1))
    future = "tournament_start 2026-11-03T19:00:00+01:00 outside the plausible window "
    future += "2000-01-01..2026-10-03"
    assert reasons(wh, path) == [(1, future), (2, future), (3, "invalid JSON"), (4, future)]
    assert reasons(wh, other) == [(1, future), (2, future)]
    settings = Settings(warehouse=tmp_path / "wh")
    summary = run_replay(settings, "plausible WINDOW")  # today: November is no longer future
    assert accepted(wh, "simultane_deal", path) == [1, 4]
    assert accepted(wh, "simultane_deal", other) == [1, 2]
    # a line that still fails stays, with its reason as of now
    assert reasons(wh, path) == [(2, "negative points made"), (3, "invalid JSON")]
    assert summary.ingest.replayed == 4
    assert summary.ingest.touched("simultane.deal") == {"2026-11"}
    assert wh.manifest()["dirty"]["simultane"] == ["2026-11"]
    log = table(wh, "ingest_log").filter(pl.col("status") == "replayed").sort("file")
    assert log.select("file", "lines_read", "rows_accepted", "rows_quarantined").rows() == [
        (str(path), 3, 2, 1),
        (str(other), 2, 2, 0),
    ]
    # everything again, on the command line: what still fails stays
    assert cli.main(["ingest", "--replay-quarantine", "--warehouse", str(tmp_path / "wh")]) == 0
    assert reasons(wh, path) == [(2, "negative points made"), (3, "invalid JSON")]
    log = table(wh, "ingest_log").filter(pl.col("status") == "replayed").sort("ingested_at")
    assert log.select("lines_read", "rows_accepted", "rows_quarantined").rows()[-1] == (2, 0, 2)


def test_a_file_quarantined_whole_is_replayed_from_its_kept_bytes(tmp_path):
    line = dumps(deal("ann", comment="x" * 3000))
    path = write(tmp_path / "wide.jsonl", [line, line.replace('"ann"', '"bob"')])
    result, wh = run(tmp_path, path, ingest={"max_line_bytes": 2000})
    assert [f.status for f in result.files] == ["unreadable"]
    assert len(wh.files("quarantine_files")) == 1
    path.unlink()  # the landing file is gone: the kept bytes are what is replayed
    summary = run_replay(Settings(warehouse=tmp_path / "wh"))  # default limit: 1 MiB
    assert summary.ingest.replayed == 2
    assert accepted(wh, "simultane_deal", path) == [1, 2]
    assert reasons(wh) == [] and wh.files("quarantine_files") == []


def test_replay_options_on_the_command_line(tmp_path, capsys):
    wh = ["--warehouse", str(tmp_path / "wh")]
    assert cli.main(["ingest", "--reason", "x", "a.jsonl", *wh]) == 2
    assert "--reason goes with --replay-quarantine" in capsys.readouterr().err
    assert cli.main(["ingest", "--replay-quarantine", "a.jsonl", *wh]) == 2
    assert cli.main(["ingest", *wh]) == 2
    capsys.readouterr()
    assert cli.main(["ingest", "--replay-quarantine", *wh]) == 2  # no warehouse: nothing made
    assert "does not exist" in capsys.readouterr().err and not (tmp_path / "wh").exists()
    (tmp_path / "wh").mkdir()
    assert cli.main(["ingest", "--replay-quarantine", *wh]) == 0  # an empty warehouse: no-op
    assert "lines read: 0" in capsys.readouterr().out


def test_replay_keeps_every_line_accounted_for(tmp_path):
    path = write(tmp_path / "ff.jsonl", [dumps(ff_deal(deal_no=n)) for n in range(1, 6)])
    run(tmp_path, path)
    parent = write(tmp_path / "match.jsonl", [dumps(match())])
    _, wh = run(tmp_path, parent)
    assert_total(wh, parent)
    original = table(wh, "ingest_log").filter(pl.col("file") == str(path)).sort("ingested_at")
    assert original["status"].to_list() == ["ingested", "replayed"]
    assert original["rows_quarantined"].to_list() == [5, 0]
    assert original["rows_accepted"].to_list() == [0, 5]
