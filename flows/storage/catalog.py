"""The published tables and their columns, read from `sql/catalog.toml` (one source for the
views' comments, empty views, the README's table list and the tests).

    python -m flows.storage.catalog --readme    rewrites the README's table list
"""

from __future__ import annotations

import re
import sys
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from transforms.sql_models import SQL_DIR

README_START = "<!-- tables:start (generated from sql/catalog.toml) -->"
README_END = "<!-- tables:end -->"


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    description: str


@dataclass(frozen=True)
class Table:
    name: str
    layer: str
    grain: str
    description: str
    columns: tuple[Column, ...]
    key: tuple[str, ...] = ()  # the columns that identify a row (none: the whole row)

    @property
    def summary(self) -> str:
        return f"{self.description} One row per {self.grain}."

    def column(self, name: str) -> Column | None:
        return next((c for c in self.columns if c.name == name), None)


@cache
def tables() -> dict[str, Table]:
    data = tomllib.loads((SQL_DIR / "catalog.toml").read_text(encoding="utf-8"))
    return {
        name: Table(
            name,
            entry["layer"],
            entry["grain"],
            entry["description"],
            tuple(Column(c, t, d) for c, (t, d) in entry["columns"].items()),
            tuple(entry.get("key", ())),
        )
        for name, entry in data.items()
    }


def readme_table() -> str:
    rows = ["| table | grain | what it holds | columns |", "|---|---|---|---|"]
    for t in tables().values():
        columns = ", ".join(f"`{c.name}`" for c in t.columns)
        rows.append(f"| `{t.name}` | {t.grain} | {t.description} | {columns} |")
    return "\n".join(rows)


def update_readme(path: Path) -> bool:
    """Rewrite the generated part of the README; True if it changed."""
    text = path.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(README_START) + ".*?" + re.escape(README_END), re.S)
    new = pattern.sub(lambda _: f"{README_START}\n{readme_table()}\n{README_END}", text)
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


if __name__ == "__main__":
    if sys.argv[1:] == ["--readme"]:
        readme = Path(__file__).resolve().parents[2] / "README.md"
        print("README updated" if update_readme(readme) else "README up to date")
    else:
        print(readme_table())
