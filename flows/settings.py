"""One typed settings object: every **Decision** of the spec with its default.

Precedence (highest first): command-line flags, environment variables (`DUPLIRANK_…`, nested
with `__`, e.g. `DUPLIRANK_SIMULTANE__DEAL_TIME_LIMIT_S=240`), `[tool.duplirank]` in
`pyproject.toml` of the current folder, then the defaults of the rules' option classes.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from pydantic import Field
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    PyprojectTomlConfigSettingsSource,
    SettingsConfigDict,
)

from flows.ingest.options import IngestOptions
from transforms.face_a_face.options import FaceAFaceOptions
from transforms.simultane.options import SimultaneOptions


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="DUPLIRANK_",
        env_nested_delimiter="__",
        pyproject_toml_table_header=("tool", "duplirank"),
        extra="ignore",
    )

    warehouse: Path = Field(Path("data/warehouse"), description="warehouse folder")
    landing: Path = Field(Path("data/landing"), description="folder the servers drop logs into")
    timezone: str = Field("Europe/Paris", description="platform time zone (months, days)")
    lock_wait_s: float = Field(30.0, description="how long a run waits for another to finish")
    batch_rows: int = Field(
        5_000_000, description="rows scored at once; bigger months are split (memory bound)"
    )
    nightly_cron: str = Field("30 3 * * *", description="schedule of `duplirank serve`")
    simultane: SimultaneOptions = SimultaneOptions()
    face_a_face: FaceAFaceOptions = FaceAFaceOptions()
    ingest: IngestOptions = IngestOptions()

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, PyprojectTomlConfigSettingsSource(settings_cls))

    def simultane_options(self) -> SimultaneOptions:
        return dataclasses.replace(self.simultane, timezone=self.timezone)

    def face_a_face_options(self) -> FaceAFaceOptions:
        return dataclasses.replace(self.face_a_face, timezone=self.timezone)
