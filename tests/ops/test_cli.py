"""The command line: one line and exit code 2 for every user error, nothing created by a
failing command, stdout for results only, one line for a failed run, complete `--help`."""

from __future__ import annotations

import json
import os
from dataclasses import fields
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from flows import cli
from flows.steps import STEPS
from flows.storage.warehouse import Warehouse
from tests_support import SAMPLE
from transforms.bridge.options import METHODS, BridgeOptions


@pytest.fixture
def warehouse(tmp_path):
    wh = Warehouse(tmp_path / "wh")
    tx = wh.transaction("r1")
    tx.put_months(
        "gold", "t", pl.DataFrame({"month": ["2026-11"], "x": [1], "s": ["a,b"]}), ["2026-11"]
    )
    tx.commit()
    return wh.root


@pytest.fixture
def simultane_warehouse(tmp_path):
    """A warehouse with the two tables `chart` reads: P1 has a block, P2 12 deals, BOT."""
    wh = Warehouse(tmp_path / "swh")
    tx = wh.transaction("r1")
    ended = datetime(2026, 11, 3, 20, tzinfo=UTC)
    blocks = pl.DataFrame(
        {
            "player_id": ["P1"],
            "block_no": [1],
            "ended_at": [ended],
            "month": ["2026-11"],
            "pct_cumul": [104.0],
            "pct_actuel": [104.0],
            "in_window": [True],
        }
    )
    deals = pl.DataFrame(
        {
            "month": ["2026-11"] * 52,
            "player_id": ["P1"] * 20 + ["P2"] * 12 + ["BOT"] * 20,
            "is_bot": [False] * 32 + [True] * 20,
            "scored": [True] * 52,
        }
    )
    tx.put_months("gold", "simultane_blocks", blocks, ["2026-11"])
    tx.put_months("silver", "simultane_deal_results", deals, ["2026-11"])
    tx.commit()
    return wh.root


def run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def tree(*roots: Path) -> set[str]:
    """Every path under the roots (to show that a failing command created nothing)."""
    found = set()
    for root in roots:
        if root.exists():
            found |= {str(p) for p in root.rglob("*")}
    return found


def state_dir() -> Path:
    return Path(os.environ["XDG_STATE_HOME"]) / "duplirank"


# --------------------------------------------------------------------------- sql (kept)
def test_sql_csv_has_a_header_and_quotes_values(capsys, warehouse):
    code, out, _ = run(
        capsys, "sql", "select x, s from t", "--format", "csv", "--warehouse", warehouse
    )
    assert code == 0 and out == 'x,s\n1,"a,b"\n'


def test_sql_json(capsys, warehouse):
    code, out, _ = run(
        capsys, "sql", "select x from t", "--format", "json", "--warehouse", warehouse
    )
    assert code == 0 and json.loads(out) == [{"x": 1}]


def test_warehouse_from_the_environment(capsys, warehouse, monkeypatch):
    monkeypatch.setenv("DUPLIRANK_WAREHOUSE", str(warehouse))
    code, out, _ = run(capsys, "sql", "select x from t", "--format", "csv")
    assert code == 0 and out == "x\n1\n"


def test_sql_on_a_missing_warehouse(capsys, tmp_path):
    code, _, err = run(capsys, "sql", "select 1", "--warehouse", tmp_path / "empty")
    assert code == 2 and "no published tables" in err
    assert not (tmp_path / "empty").exists()


# --------------------------------------------------------------------------- user errors
def assert_one_line_error(code: int, err: str, message: str) -> None:
    assert code == 2, err
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert message in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["sql", "select * from nope"], "nope"),
        (["sql", "delete from t"], "read-only"),
        (["ingest", "/no/such/file.jsonl"], "no such file or folder: /no/such/file.jsonl"),
        (["backfill", "--from", "2026-11", "--to", "2026-10"], "before --from"),
        (["nightly", "--landing", "/no/such/dir"], "landing folder /no/such/dir does not exist"),
    ],
)
def test_user_errors_are_one_line_with_exit_code_2(harness, capsys, warehouse, argv, message):
    before = tree(warehouse.parent, state_dir())
    code, _, err = run(capsys, *argv, "--warehouse", warehouse)
    assert_one_line_error(code, err, message)
    assert tree(warehouse.parent, state_dir()) == before


def test_parser_errors_are_one_line_too(capsys, warehouse):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["backfill", "--from", "2026-13", "--to", "2026-12", "--warehouse", warehouse])
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert err.count("\n") == 1 and "'2026-13' is not a month YYYY-MM" in err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--players", "0"], "argument --players: must be at least 1, not 0"),
        (["--players", "-5", "--days", "-1"], "must be at least 1, not -5"),
        (["--days", "0"], "argument --days: must be at least 1, not 0"),
        (["--players", "many"], "'many' is not an integer"),
        (["--start", "2026-02-30"], "'2026-02-30' is not a date"),
        (["--warehouse", "/tmp"], "unrecognized arguments: --warehouse /tmp"),
    ],
)
def test_generate_refuses_bad_counts(capsys, tmp_path, argv, message):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["generate", "--out", str(tmp_path / "logs"), *argv])
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert err.count("\n") == 1 and message in err, err
    assert list(tmp_path.iterdir()) == []


def test_generate_into_proc_is_a_user_error(capsys):
    code, _, err = run(capsys, "generate", "--out", "/proc/nope", "--days", 1, "--players", 2)
    assert_one_line_error(code, err, "cannot write to /proc/nope")
    assert not Path("/proc/nope").exists()


def test_generate_creates_no_parent_folder(capsys, tmp_path):
    code, _, err = run(capsys, "generate", "--out", tmp_path / "nope" / "logs", "--days", 1)
    assert_one_line_error(code, err, f"{tmp_path / 'nope'} does not exist")
    assert list(tmp_path.iterdir()) == []


def test_generate_into_a_file_is_a_user_error(capsys, tmp_path):
    (tmp_path / "f").write_text("x")
    code, _, err = run(capsys, "generate", "--out", tmp_path / "f", "--days", 1)
    assert_one_line_error(code, err, "is a file, not a folder")
    assert [p.name for p in tmp_path.iterdir()] == ["f"]


def test_generate_writes_its_files(capsys, tmp_path):
    code, out, err = run(
        capsys, "generate", "--out", tmp_path / "logs", "--players", 3, "--days", 1
    )
    assert code == 0 and err == ""
    assert out.startswith("wrote 3 files") and len(list((tmp_path / "logs").iterdir())) == 3


@pytest.mark.parametrize(
    "variable, value, message",
    [
        (
            "DUPLIRANK_SIMULTANE__DEAL_TIME_LIMIT_S",
            "abc",
            "setting simultane.deal_time_limit_s (DUPLIRANK_SIMULTANE__DEAL_TIME_LIMIT_S=abc): "
            "must be a valid integer",
        ),
        (
            "DUPLIRANK_TIMEZONE",
            "Mars/Olympus",
            "setting timezone (DUPLIRANK_TIMEZONE=Mars/Olympus): 'Mars/Olympus' is not a known "
            "time zone",
        ),
        (
            "DUPLIRANK_SIMULTANE__DEAL_TIME_LIMT_S",
            "240",
            "DUPLIRANK_SIMULTANE__DEAL_TIME_LIMT_S is not a duplirank setting: did you mean "
            "DUPLIRANK_SIMULTANE__DEAL_TIME_LIMIT_S?",
        ),
        (
            "DUPLIRANK_SIMULTANE__INDICE_BEST",
            "0",
            "setting simultane.indice_best (DUPLIRANK_SIMULTANE__INDICE_BEST=0): must be >= 1",
        ),
        (
            "DUPLIRANK_NIGHTLY_CRON",
            "30 25 * * *",
            "setting nightly_cron (DUPLIRANK_NIGHTLY_CRON=30 25 * * *): '30 25 * * *' is not a "
            "valid cron line",
        ),
    ],
)
@pytest.mark.parametrize("command", ["nightly", "backfill", "sql"])
def test_a_bad_setting_is_one_line_before_anything_happens(
    capsys, monkeypatch, tmp_path, variable, value, message, command
):
    monkeypatch.setenv(variable, value)
    argv = {
        "nightly": ["nightly", "--landing", SAMPLE],
        "backfill": ["backfill", "--from", "2026-10", "--to", "2026-11"],
        "sql": ["sql", "select 1"],
    }[command]
    before = tree(state_dir())
    code, _, err = run(capsys, *argv, "--warehouse", tmp_path / "wh")
    assert_one_line_error(code, err, message)
    assert list(tmp_path.iterdir()) == [] and tree(state_dir()) == before


def test_nightly_landing_is_a_file(capsys, tmp_path):
    landing = tmp_path / "logs.jsonl"
    landing.write_text("{}\n")
    code, _, err = run(capsys, "nightly", "--landing", landing, "--warehouse", tmp_path / "wh")
    assert_one_line_error(code, err, f"landing folder {landing} is a file, not a folder")
    assert [p.name for p in tmp_path.iterdir()] == ["logs.jsonl"]


def test_backfill_of_a_missing_warehouse_creates_nothing(capsys, tmp_path):
    wh = tmp_path / "nope"
    code, _, err = run(
        capsys, "backfill", "--from", "2026-10", "--to", "2026-11", "--warehouse", wh
    )
    assert_one_line_error(code, err, f"warehouse {wh} does not exist")
    assert list(tmp_path.iterdir()) == []


def test_nightly_creates_no_parent_of_the_warehouse(capsys, tmp_path):
    wh = tmp_path / "typo" / "wh"
    code, _, err = run(capsys, "nightly", "--landing", SAMPLE, "--warehouse", wh)
    assert_one_line_error(code, err, f"{tmp_path / 'typo'} does not exist")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "player, out, message",
    [
        ("P1", "/proc/x.png", "cannot write /proc/x.png"),
        ("P1", "{tmp}/nope/dir/x.png", "folder {tmp}/nope/dir does not exist"),
        ("P1", "{tmp}/x.jpg", "the name must end in .png, .svg, .pdf"),
        ("P2", "{tmp}/x.png", "P2 has 12 scored deals, no full block of 20 yet"),
        ("BOT", "{tmp}/x.png", "BOT is the bot: the bot has no curve"),
        ("P9", "{tmp}/x.png", "no results for player P9"),
    ],
)
def test_chart_errors(capsys, simultane_warehouse, tmp_path, player, out, message):
    out = out.format(tmp=tmp_path / "charts")
    (tmp_path / "charts").mkdir()
    argv = ["chart", "simultane", "--player", player, "--out", out]
    code, _, err = run(capsys, *argv, "--warehouse", simultane_warehouse)
    assert_one_line_error(code, err, message.format(tmp=tmp_path / "charts"))
    assert list((tmp_path / "charts").iterdir()) == []
    assert not Path("/proc/x.png").exists()


def test_chart_writes_svg(capsys, simultane_warehouse, tmp_path):
    out = tmp_path / "p1.svg"
    argv = ["chart", "simultane", "--player", "P1", "--out", out]
    code, stdout, _ = run(capsys, *argv, "--warehouse", simultane_warehouse)
    assert code == 0 and stdout == f"wrote {out}\n"
    assert b"<svg" in out.read_bytes()[:1000]


def test_serve_with_an_unreachable_prefect_server(capsys, tmp_path):
    from prefect.settings import PREFECT_API_URL, temporary_settings

    (tmp_path / "landing").mkdir()
    with temporary_settings(updates={PREFECT_API_URL: "http://127.0.0.1:9/api"}):
        code, _, err = run(
            capsys, "serve", "--landing", tmp_path / "landing", "--warehouse", tmp_path / "wh"
        )
    assert_one_line_error(code, err, "no Prefect server answers at PREFECT_API_URL=")
    assert [p.name for p in tmp_path.iterdir()] == ["landing"]


def test_score_takes_no_warehouse(capsys, tmp_path):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["score", "x.pbn", "--warehouse", str(tmp_path)])
    assert exit_.value.code == 2
    assert "unrecognized arguments: --warehouse" in capsys.readouterr().err


# --------------------------------------------------------------------------- runs
def test_nightly_results_on_stdout_progress_and_summary_on_stderr(harness, capsys, tmp_path):
    code, out, err = run(
        capsys, "nightly", "--landing", SAMPLE, "--warehouse", tmp_path / "wh", "--no-show"
    )
    assert code == 0
    assert out.startswith("files: 9 (0 already ingested, 0 unreadable, 0 not read)")
    assert "rescored partitions" in out and "starting" not in out and "run summary" not in out
    assert "starting ingest…" in err and "ingest: 9/9 files, 5,702 lines, done in" in err
    assert "score simultane: 2/2 partitions, done in" in err
    assert "run summary:" in err and "quarantined lines by reason:" in err
    assert "invalid JSON" in err
    last = err.splitlines()[-1]  # "done in 4.2 s (log: <state>/logs/nightly-….log)"
    assert "done in" in last and "(log: " in last
    log = Path(last.split("(log: ")[1].rstrip(")"))
    assert log.parent == state_dir() / "logs" and log.name.startswith("nightly-")
    text = log.read_text()
    assert "Flow run" in text and "Finished in state Completed" in text
    assert "Task run 'simultane-2026-11'" in text  # task runs named by competition and month


def test_ingest_of_a_landing_with_a_file_it_does_not_read_and_a_bad_line(capsys, tmp_path):
    """A file not read has no hash: the summary of this run's quarantined lines still counts."""
    landing = tmp_path / "landing"
    landing.mkdir()
    (landing / "README.txt").write_text("deliveries of the night\n")
    (landing / "day.jsonl").write_text('{"type": "simultane.deal"\n')
    code, out, err = run(capsys, "ingest", landing, "--warehouse", tmp_path / "wh", "--quiet")
    assert (code, err) == (0, "")
    assert "1 not read" in out and "1 × invalid JSON" in out
    assert "not read: " in out and "README.txt: skipped: unknown suffix" in out


def test_quiet_prints_nothing_on_stderr(harness, capsys, tmp_path):
    code, out, err = run(
        capsys, "nightly", "--landing", SAMPLE, "--warehouse", tmp_path / "wh", "--quiet"
    )
    assert code == 0 and err == ""
    assert out.startswith("files: 9") and "Simultané" in out  # the rankings still print


def test_a_failed_run_is_one_line_naming_the_stage_and_the_log(
    harness, capsys, tmp_path, monkeypatch
):
    step = STEPS["simultane"]

    def broken(ctx, part):
        raise ValueError("boom in scoring\nsecond line of the message")

    from dataclasses import replace

    monkeypatch.setitem(STEPS, "simultane", replace(step, month=broken))
    before = set((state_dir() / "logs").glob("*.log"))
    code, _, err = run(
        capsys, "nightly", "--landing", SAMPLE, "--warehouse", tmp_path / "wh", "--quiet"
    )
    (log,) = set((state_dir() / "logs").glob("*.log")) - before
    assert code == 1
    assert err == (
        "duplirank nightly: failed in score simultane 2026-10: ValueError: boom in scoring"
        f" (full log: {log})\n"
    )
    text = log.read_text()
    assert "Traceback" in text and "second line of the message" in text
    assert "Task run 'simultane-2026-10'" in text and "boom in scoring" in text


# --------------------------------------------------------------------------- help
COMMANDS = ["ingest", "nightly", "backfill", "sql", "generate", "chart", "score", "serve"]


def help_of(capsys, *argv) -> str:
    with pytest.raises(SystemExit) as exit_:
        cli.main([*argv, "--help"])
    assert exit_.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(capsys, command):
    text = help_of(capsys, command)
    takes_warehouse = command not in ("generate", "score")
    assert ("--warehouse DIR" in text) == takes_warehouse
    assert "$DUPLIRANK_WAREHOUSE" in text or not takes_warehouse


def test_help_shows_the_defaults(capsys):
    text = " ".join(help_of(capsys, "generate").split())
    for shown in (
        "--players N number of players (default: 40)",
        "--days N number of days (default: 3)",
        "(default: 1)",
        "--start YYYY-MM-DD first day (default: 2026-11-01)",
    ):
        assert shown in text
    nightly = " ".join(help_of(capsys, "nightly").split())
    assert "--no-show don't print the rankings" in nightly and "--quiet" in nightly
    assert "(default: $DUPLIRANK_LANDING, else data/landing)" in nightly
    assert "output format (default: table)" in " ".join(help_of(capsys, "score").split())
    sql = " ".join(help_of(capsys, "sql").split())
    assert "jsonl (JSON Lines); all but table stream (default: table)" in sql


def test_score_help_lists_the_methods_and_every_option(capsys):
    text = help_of(capsys, "score")
    assert f"methods (--method): {', '.join(METHODS)}" in text
    defaults = BridgeOptions()
    for f in fields(BridgeOptions):
        if f.name != "method":
            assert f"  {f.name:<24} {getattr(defaults, f.name)!s:<12} " in text
            assert cli.BRIDGE_OPTION_HELP[f.name]
