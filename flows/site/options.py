"""Settings of the results site (`flows/site/`)."""

from __future__ import annotations

from dataclasses import dataclass

LANGUAGES = ("fr", "en")


@dataclass(frozen=True)
class SiteOptions:
    enabled: bool = True  # every nightly/backfill rebuilds <warehouse>/site/ (changed pages)
    lang: str = "fr"  # the pages' language: fr (the platform's) or en

    def __post_init__(self) -> None:
        if self.lang not in LANGUAGES:
            raise ValueError(f"lang {self.lang!r} not one of {', '.join(LANGUAGES)}")
