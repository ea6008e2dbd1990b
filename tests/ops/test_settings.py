"""Settings checked when they are built: types, ranges, time zone, cron, unknown variables."""

from __future__ import annotations

import dataclasses
import math
from datetime import datetime
from pathlib import Path

import pytest
from pydantic import BaseModel

from flows import settings as settings_module
from flows.errors import UserError
from flows.settings import Settings, env_names, load_settings
from transforms.bridge.options import BridgeOptions
from transforms.face_a_face.options import FaceAFaceOptions
from transforms.option_checks import OptionError
from transforms.simultane.options import SimultaneOptions


def error_of(monkeypatch, **variables) -> str:
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(UserError) as caught:
        load_settings()
    return str(caught.value)


def test_defaults_load():
    s = load_settings()
    assert s.warehouse == Path("data/warehouse") and s.simultane.indice_best == 20


@pytest.mark.parametrize(
    "variable, value, message",
    [
        ("DUPLIRANK_SIMULTANE__INDICE_BEST", "0", "simultane.indice_best"),
        ("DUPLIRANK_SIMULTANE__VICTOIRE_BEST", "-1", "must be >= 1, not -1"),
        ("DUPLIRANK_SIMULTANE__DEAL_TIME_LIMIT_S", "0", "must be >= 1, not 0"),
        ("DUPLIRANK_SIMULTANE__WINDOW_DAYS", "1.5", "must be a valid integer"),
        ("DUPLIRANK_FACE_A_FACE__CANCEL_AFTER_MIN", "0", "face_a_face.cancel_after_min"),
        (
            "DUPLIRANK_FACE_A_FACE__K_NEW",
            "nan",
            "face_a_face.k_new (DUPLIRANK_FACE_A_FACE__K_NEW=nan): must be a finite number",
        ),
        ("DUPLIRANK_FACE_A_FACE__MP_DECIMALS", "9", "must be between 0 and 6, not 9"),
        (
            "DUPLIRANK_FACE_A_FACE__BOT_ID",
            " ",
            "face_a_face.bot_id (DUPLIRANK_FACE_A_FACE__BOT_ID= ): must not be empty",
        ),
        ("DUPLIRANK_FACE_A_FACE__TIMEZONE", "Nowhere/City", "is not a known time zone"),
        ("DUPLIRANK_LOCK_WAIT_S", "-1", "lock_wait_s (DUPLIRANK_LOCK_WAIT_S=-1)"),
        ("DUPLIRANK_LOCK_WAIT_S", "inf", "must be a finite number"),
        ("DUPLIRANK_BATCH_ROWS", "0", "must be greater than 0"),
        ("DUPLIRANK_TIMEZONE", "", None),  # empty: ignored, the default holds
        ("DUPLIRANK_TIMEZONE", "../../etc/passwd", "is not a known time zone"),
        ("DUPLIRANK_NIGHTLY_CRON", "every night", "is not a cron line of 5 fields"),
        ("DUPLIRANK_NIGHTLY_CRON", "30 3 * * 8", "is not a valid cron line"),
        ("DUPLIRANK_SIMULTANE", '{"indice_best": 0}', "DUPLIRANK_SIMULTANE={"),
    ],
)
def test_a_bad_value_is_one_line_naming_the_variable(monkeypatch, variable, value, message):
    monkeypatch.setenv(variable, value)
    if message is None:
        assert load_settings().timezone == "Europe/Paris"
        return
    with pytest.raises(UserError) as caught:
        load_settings()
    text = str(caught.value)
    assert message in text and "\n" not in text
    assert text.startswith("setting ")


@pytest.mark.parametrize(
    "variable, hint",
    [
        ("DUPLIRANK_SIMULTANE__DEAL_TIME_LIMT_S", "DUPLIRANK_SIMULTANE__DEAL_TIME_LIMIT_S"),
        ("DUPLIRANK_WAREHOUS", "DUPLIRANK_WAREHOUSE"),
        ("duplirank_timezon", "DUPLIRANK_TIMEZONE"),
        ("DUPLIRANK_WINDOW_DAYS", "DUPLIRANK_SIMULTANE__WINDOW_DAYS"),  # section forgotten
        ("DUPLIRANK_FACE_A_FACE__KNEW", "DUPLIRANK_FACE_A_FACE__K_NEW"),
    ],
)
def test_an_unknown_variable_is_refused_with_the_nearest_name(monkeypatch, variable, hint):
    text = error_of(monkeypatch, **{variable: "1"})
    assert text == f"{variable} is not a duplirank setting: did you mean {hint}?"


def test_an_unknown_variable_far_from_any_name(monkeypatch):
    text = error_of(monkeypatch, DUPLIRANK_XYZZY="1")
    assert text.startswith("DUPLIRANK_XYZZY is not a duplirank setting (")


def test_settings_built_in_code_are_checked_too(monkeypatch):
    monkeypatch.setenv("DUPLIRANK_SIMULTANE__DEAL_TIME_LIMT_S", "240")
    with pytest.raises(ValueError, match="did you mean"):
        Settings()


def test_the_variable_names_derive_from_the_model(monkeypatch):
    names = env_names()
    every_field = [
        f"DUPLIRANK_SIMULTANE__{f.name.upper()}" for f in dataclasses.fields(SimultaneOptions)
    ]
    assert set(every_field) <= set(names)
    assert "DUPLIRANK_FACE_A_FACE__POOL_ATTACK_TYPES" in names
    assert "DUPLIRANK_LOG_DIR" in names

    # a section another part adds (a pydantic model or a dataclass) is known at once
    class IngestSection(BaseModel):
        max_line_bytes: int = 1_000_000

    @dataclasses.dataclass(frozen=True)
    class SqlSection:
        row_limit: int = 100

    class Extended(Settings):
        ingest: IngestSection = IngestSection()
        sql: SqlSection = SqlSection()

    extended = env_names(Extended)
    assert "DUPLIRANK_INGEST__MAX_LINE_BYTES" in extended
    assert "DUPLIRANK_SQL__ROW_LIMIT" in extended
    monkeypatch.setattr(settings_module, "env_names", lambda: extended)
    monkeypatch.setenv("DUPLIRANK_SQL__ROW_LIMT", "5")
    with pytest.raises(UserError, match="did you mean DUPLIRANK_SQL__ROW_LIMIT"):
        load_settings()


def test_the_default_cron_is_a_valid_one():
    from cronsim import CronSim

    assert settings_module.DEFAULT_CRON == Settings.model_fields["nightly_cron"].default
    CronSim(settings_module.DEFAULT_CRON, datetime(2026, 1, 1))  # what check_cron skips


def test_sources_merge_flags_over_variables_over_pyproject(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.duplirank]\ntimezone = "UTC"\nbatch_rows = 7\n'
        "[tool.duplirank.simultane]\nindice_best = 5\nwindow_days = 30\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("duplirank_batch_rows", "8")  # any case
    monkeypatch.setenv("DUPLIRANK_SIMULTANE", '{"window_days": 31, "block_deals": 10}')
    monkeypatch.setenv("DUPLIRANK_SIMULTANE__BLOCK_DEALS", "12")  # over the JSON's key
    monkeypatch.setenv("DUPLIRANK_LANDING", "")  # empty: ignored
    s = load_settings(warehouse=tmp_path / "w")
    assert (s.timezone, s.batch_rows, s.landing) == ("UTC", 8, Path("data/landing"))
    assert s.warehouse == tmp_path / "w"
    simultane = s.simultane
    assert (simultane.indice_best, simultane.window_days, simultane.block_deals) == (5, 31, 12)
    site = Settings(site=settings_module.SiteOptions(enabled=False)).site  # given whole
    assert site.enabled is False


def test_a_section_variable_that_is_not_json_is_one_line(monkeypatch):
    text = error_of(monkeypatch, DUPLIRANK_SIMULTANE="{indice_best: 5}")
    assert text.startswith("setting DUPLIRANK_SIMULTANE is not a JSON object") and "\n" not in text


def test_pyproject_unknown_key_is_refused(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[tool.duplirank]\nindice_best = 5\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserError) as caught:
        load_settings()
    assert str(caught.value) == (
        "setting indice_best ([tool.duplirank] in pyproject.toml, or a flag): "
        "is not a duplirank setting: did you mean simultane.indice_best?"
    )


def test_pyproject_values_are_checked(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[tool.duplirank.simultane]\nindice_best = 0\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserError, match="simultane.indice_best .*must be >= 1, not 0"):
        load_settings()


# --------------------------------------------------------------------------- options classes
@pytest.mark.parametrize(
    "cls, changes, field",
    [
        (SimultaneOptions, {"indice_best": 0}, "indice_best"),
        (SimultaneOptions, {"window_results": -3}, "window_results"),
        (SimultaneOptions, {"block_deals": 2.5}, "block_deals"),
        (SimultaneOptions, {"deal_time_limit_s": True}, "deal_time_limit_s"),
        (SimultaneOptions, {"timezone": "Mars/Olympus"}, "timezone"),
        (FaceAFaceOptions, {"divisor": 0}, "divisor"),
        (FaceAFaceOptions, {"elo_cap": float("inf")}, "elo_cap"),
        (FaceAFaceOptions, {"pool_attack_types": "yes"}, "pool_attack_types"),
        (BridgeOptions, {"cavendish_cap": -5}, "cavendish_cap"),
        (BridgeOptions, {"cap_base": -100}, "cap_base"),
        (BridgeOptions, {"adjusted_imps_per_10pct": math.nan}, "adjusted_imps_per_10pct"),
        (BridgeOptions, {"out": -1}, "out"),
        (BridgeOptions, {"penalty_p": -500}, "penalty_p"),
    ],
)
def test_options_refuse_values_out_of_range_from_code(cls, changes, field):
    with pytest.raises(OptionError) as caught:
        cls(**changes)
    assert caught.value.field == field
    with pytest.raises(OptionError):  # a copy with the bad value is refused the same way
        dataclasses.replace(cls(), **changes)


@pytest.mark.parametrize(
    "text, message",
    [
        ("cavendish_cap=-5", "cavendish_cap must be >= 1, not -5"),
        ("cap_base=-100", "cap_base must be >= 0, not -100"),
        ("adjusted_imps_per_10pct=nan", "adjusted_imps_per_10pct must be a finite number"),
    ],
)
def test_bridge_options_from_text_are_checked(text, message):
    key, value = text.split("=")
    with pytest.raises(ValueError, match=message):
        BridgeOptions.from_mapping({key: value})


def test_valid_edges_are_accepted():
    SimultaneOptions(indice_best=1, window_days=1, timezone="UTC")
    FaceAFaceOptions(mp_decimals=0, k_master=0, unfinished_mp=0)
    BridgeOptions(cap_base=0, cavendish_cap=1, adjusted_imps_per_10pct=0, out=0, penalty_w=100)
