"""One typed settings object: every **Decision** of the spec with its default, checked.

Precedence (highest first): command-line flags, environment variables (`DUPLIRANK_…`, nested
with `__`, e.g. `DUPLIRANK_SIMULTANE__DEAL_TIME_LIMIT_S=240`), `[tool.duplirank]` in
`pyproject.toml` of the current folder, then the defaults of the rules' option classes.

Every value is checked when the settings are built: types and ranges (pydantic here, the
options classes' own `RANGES` for the rules), the time zone, the cron. An environment variable
`DUPLIRANK_…` that names no setting is refused with the nearest valid name (a misspelt setting
silently ignored would publish results computed with the default). `load_settings` turns any
of these into one `UserError` line naming the setting and its variable.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import typing
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from flows.cluster_options import ClusterOptions
from flows.errors import UserError
from flows.ingest.options import IngestOptions
from flows.runlog import log_dir
from flows.storage.options import RetentionOptions, StorageOptions
from transforms.face_a_face.options import FaceAFaceOptions
from transforms.option_checks import PLATFORM_TIMEZONE, OptionError, check_zone
from transforms.simultane.options import SimultaneOptions


@dataclass(frozen=True)
class SqlLimits:
    """Bounds of an analyst's query (settings `sql.*`; `duplirank sql` flags override them)."""

    timeout_s: float = 300.0  # wall time of a query, printing included; 0 = no limit
    max_rows: int = 0  # rows printed at most (then a note on stderr); 0 = all
    memory_limit: str = "2GB"  # DuckDB's memory; beyond it sorts and joins spill to disk
    max_temp_size: str = "20GB"  # disk DuckDB may spill to
    temp_directory: Path | None = None  # spill folder; default $TMPDIR/duplirank-sql-<uid>

    def __post_init__(self):
        if self.timeout_s < 0 or math.isnan(self.timeout_s):
            raise ValueError(f"sql.timeout_s must be >= 0 (0: no limit), not {self.timeout_s}")
        if self.max_rows < 0:
            raise ValueError(f"sql.max_rows must be >= 0 (0: no limit), not {self.max_rows}")


LANGUAGES = ("fr", "en")


@dataclass(frozen=True)
class SiteOptions:
    """Settings of the results site (`flows/tools/site/`)."""

    enabled: bool = True  # every nightly/backfill rebuilds <warehouse>/site/ (changed pages)
    lang: str = "fr"  # the pages' language: fr (the platform's) or en

    def __post_init__(self) -> None:
        if self.lang not in LANGUAGES:
            raise ValueError(f"lang {self.lang!r} not one of {', '.join(LANGUAGES)}")


ENV_PREFIX = "DUPLIRANK_"
DEFAULT_CRON = "30 3 * * *"  # every night at 03:30
NESTED = "__"


def _location(value: Any) -> Any:
    """A local folder as a Path; a URL (`s3://bucket/prefix`) kept as text (a Path would
    fold its `//`)."""
    if isinstance(value, str) and "://" in value:
        scheme = value.split("://", 1)[0].lower()
        if scheme not in ("s3", "s3a"):
            raise ValueError(f"{value!r}: a local folder or s3://bucket/prefix")
        return value
    return Path(value) if isinstance(value, str) else value


# a local folder (Path) or an object-store URL (str): `flows.storage.locations.open_store`
Location = Annotated[Path | str, BeforeValidator(_location)]


class Settings(BaseModel):
    """Built from the values given (flags), over the environment, over `pyproject.toml`
    (`_sources`), every value checked; defaults checked too."""

    model_config = ConfigDict(extra="forbid", validate_default=True)

    warehouse: Location = Field(
        Path("data/warehouse"), description="warehouse folder, or s3://bucket/prefix"
    )
    landing: Location = Field(
        Path("data/landing"), description="folder the servers drop logs into (or s3://…)"
    )
    timezone: str = Field(PLATFORM_TIMEZONE, description="platform time zone (months, days)")
    lock_wait_s: float = Field(
        30.0, ge=0, allow_inf_nan=False, description="how long a run waits for another to finish"
    )
    retention_days: float = Field(
        7.0,
        ge=0,
        allow_inf_nan=False,
        description="files of the publications of the last N days are kept (open readers)",
    )
    batch_rows: int = Field(
        5_000_000, gt=0, description="rows scored at once; bigger months are split (memory bound)"
    )
    nightly_cron: str = Field(DEFAULT_CRON, description="schedule of `duplirank serve`")
    log_dir: Path = Field(default_factory=log_dir, description="one log file per run")
    simultane: SimultaneOptions = SimultaneOptions()
    face_a_face: FaceAFaceOptions = FaceAFaceOptions()
    sql: SqlLimits = SqlLimits()  # bounds of `duplirank sql` (flows/tools/query/)
    ingest: IngestOptions = IngestOptions()
    site: SiteOptions = SiteOptions()  # the results site every nightly/backfill rebuilds
    storage: StorageOptions = StorageOptions()  # object store of s3:// locations
    retention: RetentionOptions = RetentionOptions()  # official publications kept
    cluster: ClusterOptions = ClusterOptions()  # where tasks run (--runner dask)

    def __init__(self, **values: Any) -> None:
        super().__init__(**_sources(type(self), values))

    @model_validator(mode="before")
    @classmethod
    def _no_unknown_variable(cls, data: Any) -> Any:
        unknown_variables(os.environ)
        return data

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        check_zone(value)
        return value

    @field_validator("nightly_cron")
    @classmethod
    def _parseable_cron(cls, value: str) -> str:
        check_cron(value)
        return value

    def retention_policy(self):
        """The retention of publications these settings give (`retention_days`, `retention.*`):
        a `flows.storage.retention.RetentionPolicy`, imported here only (no Polars)."""
        from flows.storage.retention import RetentionPolicy

        return RetentionPolicy(self.retention_days, self.retention.keep_official, self.timezone)

    def simultane_options(self) -> SimultaneOptions:
        return dataclasses.replace(self.simultane, timezone=self.timezone)

    def face_a_face_options(self) -> FaceAFaceOptions:
        return dataclasses.replace(self.face_a_face, timezone=self.timezone)


def check_cron(text: str) -> None:
    """A five-field cron line (what `duplirank serve` gives Prefect), or OptionError. The
    default is one (cronsim is loaded only for another)."""
    if text == DEFAULT_CRON:
        return
    from cronsim import CronSim, CronSimError

    if len(text.split()) != 5:
        raise OptionError(
            "nightly_cron", f"{text!r} is not a cron line of 5 fields (m h dom mon dow)"
        )
    try:
        CronSim(text, datetime(2026, 1, 1))
    except CronSimError as err:
        raise OptionError("nightly_cron", f"{text!r} is not a valid cron line ({err})") from None


def _sources(model: type, given: dict[str, Any]) -> dict[str, Any]:
    """The raw values of `model`'s fields: `given` over the environment over `[tool.duplirank]`
    of `./pyproject.toml`, sections merged key by key (a section given whole replaces it)."""
    return _merge(_merge(_pyproject(), _environment(model, os.environ)), given)


def _environment(model: type, environ: dict[str, str]) -> dict[str, Any]:
    """The values the environment gives `model`'s fields: `DUPLIRANK_NAME` (any case; empty
    ignored), a section as a JSON object, or key by key as `DUPLIRANK_SECTION__KEY`."""
    found = {k.lower(): v for k, v in environ.items() if v != ""}
    values: dict[str, Any] = {}
    for name, section in _sections(model).items():
        variable = (ENV_PREFIX + name).lower()
        value: Any = found.get(variable)
        if section is not None and value is not None:
            try:
                value = json.loads(value)
            except ValueError as err:
                raise OptionError(variable.upper(), f"is not a JSON object ({err})") from None
        nested = variable + NESTED
        keys = {k[len(nested) :]: v for k, v in found.items() if k.startswith(nested)}
        if keys and (value is None or isinstance(value, dict)):
            exploded: dict[str, Any] = {}
            for key, text in keys.items():
                *parents, last = key.split(NESTED)
                level = exploded
                for parent in parents:
                    level = level.setdefault(parent, {})
                    if not isinstance(level, dict):
                        break
                else:
                    level[last] = text
            value = _merge(value or {}, exploded)
        if value is not None:
            values[name] = value
    return values


def _pyproject() -> dict[str, Any]:
    """`[tool.duplirank]` of `pyproject.toml` in the working directory ({} without one)."""
    path = Path("pyproject.toml")
    if not path.is_file():
        return {}
    import tomllib

    try:
        with path.open("rb") as f:
            table = tomllib.load(f).get("tool", {}).get("duplirank", {})
    except (OSError, tomllib.TOMLDecodeError) as err:
        raise OptionError("pyproject.toml", f"cannot be read: {err}") from None
    return table if isinstance(table, dict) else {}


def _merge(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in update.items():
        old = merged.get(key)
        both = isinstance(old, dict) and isinstance(value, dict)
        merged[key] = _merge(old, value) if both else value
    return merged


def _sections(model: type) -> dict[str, type | None]:
    """Field name → the class of a nested section (a dataclass or model), or None."""
    if isinstance(model, type) and issubclass(model, BaseModel):
        return {
            name: field.annotation if _is_section(field.annotation) else None
            for name, field in model.model_fields.items()
        }
    hints = typing.get_type_hints(model)
    return {
        f.name: hints[f.name] if _is_section(hints[f.name]) else None
        for f in dataclasses.fields(model)
    }


def _is_section(kind: Any) -> bool:
    return isinstance(kind, type) and (
        dataclasses.is_dataclass(kind) or issubclass(kind, BaseModel)
    )


def env_names(model: type = Settings, prefix: str = ENV_PREFIX) -> list[str]:
    """Every environment variable a setting can be read from, derived from the model."""
    names = []
    for name, section in _sections(model).items():
        variable = prefix + name.upper()
        names.append(variable)
        if section is not None:
            names += env_names(section, variable + NESTED)
    return names


def unknown_variables(environ: dict[str, str]) -> None:
    """Refuse a `DUPLIRANK_…` variable that names no setting (OptionError with a suggestion)."""
    known = {name[len(ENV_PREFIX) :]: name for name in env_names()}
    for variable in sorted(environ):
        upper = variable.upper()
        if upper.startswith(ENV_PREFIX) and upper[len(ENV_PREFIX) :] not in known:
            import difflib

            rest = upper[len(ENV_PREFIX) :]
            close = (
                difflib.get_close_matches(rest, known, n=1, cutoff=0.7)
                or [name for name in known if name.endswith(NESTED + rest.split(NESTED)[-1])][:1]
            )
            hint = (
                f": did you mean {known[close[0]]}?"
                if close
                else " (the Settings section of the README lists them)"
            )
            raise OptionError(variable, f"is not a duplirank setting{hint}")


def _nearest(dotted: str) -> str:
    """`: did you mean simultane.indice_best?` for a name of pyproject.toml, or ''."""
    import difflib

    names = [n[len(ENV_PREFIX) :].lower().replace(NESTED, ".") for n in env_names()]
    close = (
        difflib.get_close_matches(dotted, names, n=1, cutoff=0.7)
        or [n for n in names if n.endswith("." + dotted.split(".")[-1])][:1]
    )
    return f": did you mean {close[0]}?" if close else ""


def _source(loc: tuple) -> str:
    """Where a setting's value came from: its environment variable, else pyproject.toml."""
    for depth in range(len(loc), 0, -1):
        variable = ENV_PREFIX + NESTED.join(str(part).upper() for part in loc[:depth])
        value = next((v for k, v in os.environ.items() if k.upper() == variable), None)
        if value is not None:
            return f"{variable}={value}"
    return "[tool.duplirank] in pyproject.toml, or a flag"


def describe(err: ValidationError) -> str:
    """One line for the first problem of a settings ValidationError."""
    first = err.errors(include_url=False)[0]
    loc = tuple(p for p in first["loc"] if isinstance(p, str))
    cause = (first.get("ctx") or {}).get("error")
    if isinstance(cause, OptionError):
        if cause.field.upper().startswith(ENV_PREFIX):  # an unknown variable
            return str(cause)
        loc = (*loc, cause.field) if cause.field not in loc else loc
        reason = cause.reason
    else:
        reason = first["msg"].removeprefix("Value error, ")
        if reason.startswith("Input should be "):
            reason = "must be " + reason.removeprefix("Input should be ")
        if first["type"] == "extra_forbidden":
            reason = "is not a duplirank setting" + _nearest(".".join(loc))
        if "input" in first and first["type"] not in ("missing", "extra_forbidden"):
            reason += f", not {first['input']!r}"
    more = f" (and {err.error_count() - 1} more)" if err.error_count() > 1 else ""
    name = ".".join(loc) or "settings"
    return f"setting {name} ({_source(loc)}): {reason}{more}"


def load_settings(**overrides: Any) -> Settings:
    """The settings (flags given as `overrides`), or a one-line `UserError`."""
    try:
        settings = Settings(**{k: v for k, v in overrides.items() if v is not None})
    except ValidationError as err:
        raise UserError(describe(err)) from None
    except OptionError as err:  # raised outside pydantic (e.g. a dataclass given as override)
        raise UserError(f"setting {err}") from None
    from flows.storage.locations import configure

    configure(settings.storage)  # every s3:// reader of this process uses them
    return settings
