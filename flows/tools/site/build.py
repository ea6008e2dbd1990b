"""Build the site: read the tables once, make every page, write only what changed, swap it in.

- `build_site(read_table, out_dir, lang, previous)` writes a complete site into `out_dir` (a new
  or empty folder). The data of the pages of each kind is prepared on whole columns, five
  parts of the site in three threads (`site_pages`); each page is rendered from its kind's
  template in the thread that made it (`render`: the template's text and the rows of its
  tables, slices of the row filler's buffers), hashed (sha256) and compared with the index of
  the `previous` site
  (`_pages.json`: path -> hash) by two writer threads: an unchanged page is hard-linked from the
  previous site (copied if linking fails), a changed or new one is written (one `writev`).
  Every page but the index also carries a fingerprint of its rows: when it and the build's
  context (code, language, settings, navigation) are those of the previous site, the page is
  linked without being made at all.
- `publish_site(read_table, out, …)` builds into a staging folder beside `out`, the previous
  site being `out` itself, then swaps the staging folder in with one atomic exchange of the two
  folders (Linux `renameat2(RENAME_EXCHANGE)`; two renames elsewhere): a reader sees the old
  site or the new one, never half of one.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import glob
import hashlib
import json
import os
import queue
import shutil
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from flows.errors import UserError
from flows.storage.local import process_running
from flows.tools.site import PAGE_INDEX, bridge, face_a_face, paths, simultane
from flows.tools.site.fmt import num, text
from flows.tools.site.labels import labels, month_name
from flows.tools.site.model import NO_PREVIOUS, Previous, ReadTable, Reuse, read_tables
from flows.tools.site.render import Page, Renderer
from flows.tools.site.tables import Col, bodies, columns
from transforms.simultane.options import SimultaneOptions

HERE = Path(__file__).resolve().parent
FORMAT = 2  # bump when the index file's layout changes


@dataclass
class SiteReport:
    out: Path
    pages: int = 0
    written: int = 0
    reused: int = 0
    seconds: float = 0.0
    phases: dict = field(default_factory=dict)  # seconds of each step of the build
    written_paths: list[str] = field(default_factory=list, repr=False)

    def text(self) -> str:
        return (
            f"site: {self.pages} pages in {self.out} ({self.written} written, "
            f"{self.reused} unchanged reused) in {self.seconds:.1f} s"
        )


def build_site(
    read_table: ReadTable,
    out_dir: Path | str,
    lang: str = "fr",
    previous: Path | str | None = None,
    *,
    timezone: str = SimultaneOptions.timezone,
    window_results: int = SimultaneOptions.window_results,
) -> SiteReport:
    """Write the whole site into `out_dir` (created; must be new or empty) from the published
    tables `read_table(name)` returns; pages identical to those of the `previous` site folder
    are linked from it instead of written again."""
    started = time.perf_counter()
    words = labels(lang)
    out = Path(out_dir)
    if out.exists() and any(out.iterdir()):
        raise UserError(f"{out} is not empty: build_site writes into a new or empty folder")
    out.mkdir(parents=True, exist_ok=True)
    tables = read_tables(read_table)
    phases = {"read": time.perf_counter() - started}
    chrome = Chrome(lang, words, site_nav(tables, words))
    context = build_context(chrome, timezone, window_results)
    before = load_previous(Path(previous) if previous else None, context)
    pages = site_pages(tables, words, lang, timezone, window_results, before, phases, chrome)
    report = write_pages(pages, out, before, chrome, context, phases)
    report.seconds = time.perf_counter() - started
    report.phases = {k: round(v, 2) for k, v in phases.items()}
    return report


def site_pages(
    tables: dict,
    words: dict,
    lang: str,
    timezone: str,
    window_results: int,
    previous: Previous = NO_PREVIOUS,
    phases: dict | None = None,
    chrome: Chrome | None = None,
):
    """Every page (`Page`, or `Rendered` with a `chrome`, or `Reuse`), made in three threads
    (mostly Polars and NumPy on whole columns, which release the GIL) part by part, the dearest
    first: the Simultané's months, days and tournaments; its players; the Face-à-Face's months
    and players; its days of matches; the bridge. Each page comes as soon as it is made,
    rendered in the thread that made it. The seconds spent making each part's pages (data and
    markup, not the writing) are in `phases`."""
    phases = {} if phases is None else phases
    yield from _timed("index", iter([index_page(tables, words, lang)]), phases)

    def made(pages):
        return pages if chrome is None else rendered(pages, chrome.renderer())

    nothing = [lambda: iter(())] * 2
    sim = simultane.parts(tables, words, lang, timezone, window_results, previous) or nothing
    ff = face_a_face.parts(tables, words, lang, timezone, previous) or nothing
    parts = [  # the dearest first
        ("simultane", lambda: made(sim[0]())),
        ("simultane_players", lambda: made(sim[1]())),
        ("face_a_face", lambda: made(ff[0]())),
        ("face_a_face_days", lambda: made(ff[1]())),
        ("bridge", lambda: made(bridge.pages(tables, words, lang, previous))),
    ]
    yield from concurrently(parts, phases)


@dataclass(slots=True)
class Rendered:
    """A page rendered: its site path, fingerprint and pieces (`Renderer.pieces`)."""

    path: str
    fingerprint: str | None
    pieces: list


def rendered(pages, renderer: Renderer):
    """`pages` with each `Page` rendered."""
    for page in pages:
        if isinstance(page, Page):
            yield Rendered(page.path, page.fingerprint, renderer.pieces(page))
        else:
            yield page


_END = object()


def concurrently(parts: list[tuple[str, object]], phases: dict, workers: int = 3):
    """The items of the generators `parts` make (under their label in `phases`), made by
    `workers` threads, each taking the next part when it has made one, yielded as they come,
    `HANDED` at a time (a page at a time, the caller's thread would wake for each)."""
    made: queue.SimpleQueue = queue.SimpleQueue()
    todo = iter(parts)  # (taken by the threads one part at a time: `next` holds the GIL)
    failed = threading.Event()  # (the other threads take no more parts)

    def run() -> None:
        batch: list = []
        try:
            for label, make in todo:
                if failed.is_set():
                    break
                for item in _timed(label, make(), phases):
                    batch.append(item)
                    if len(batch) >= HANDED:
                        made.put(batch)
                        batch = []
            made.put(batch)
        except BaseException as err:  # handed to the caller's thread
            failed.set()
            made.put(_Failed(err))
        finally:
            made.put(_END)

    threads = [
        threading.Thread(target=run, name=f"site-{i}", daemon=True)
        for i in range(min(workers, len(parts)))
    ]
    for thread in threads:
        thread.start()
    running = len(threads)
    while running:
        item = made.get()
        if item is _END:
            running -= 1
        elif isinstance(item, _Failed):
            for thread in threads:
                thread.join()
            raise item.error
        else:
            yield from item


HANDED = 64  # items a thread of `concurrently` hands over at once


@dataclass
class _Failed:
    error: BaseException


def _timed(label: str, items, phases: dict):
    """`items`, adding the seconds spent making each one to `phases[label]`."""
    phases.setdefault(label, 0.0)
    while True:
        start = time.perf_counter()
        try:
            item = next(items)
        except StopIteration:
            phases[label] += time.perf_counter() - start
            return
        phases[label] += time.perf_counter() - start
        yield item


@dataclass(frozen=True)
class Chrome:
    """What every page shares: its language, words and the top navigation (label, path)."""

    lang: str
    words: dict
    nav: list[tuple[str, str]]

    def renderer(self) -> Renderer:
        """A renderer of the site's templates (compiled once for all its renderers)."""
        return self._templates.sibling()

    @functools.cached_property
    def _templates(self) -> Renderer:
        return Renderer(self.lang, self.words, self.nav)


def site_nav(tables: dict, w: dict) -> list[tuple[str, str]]:
    """Links to the latest month of each competition that has data."""
    nav = []
    sim = simultane.months_of(tables["simultane_monthly"], tables["simultane_tournament_results"])
    if sim and tables["simultane_monthly"] is not None:
        nav.append((w["simultane"], paths.sim_month(sim[-1])))
    ff = face_a_face.months_of(tables["ff_monthly_ranking"], tables["ff_matches"])
    if ff:
        nav.append((w["face_a_face"], paths.ff_month(ff[-1])))
    standings = tables["bridge_standings"]
    if standings is not None and tables["bridge_board_results"] is not None:
        months = standings["month"].drop_nulls()
        if len(months):
            nav.append((w["bridge"], paths.bridge_month(months.max())))
    return nav


ASSETS = (paths.CSS, paths.JS)  # files of the site beside its pages
BATCH = 48  # pages a writer thread takes at once


def write_pages(
    pages,
    out: Path,
    previous: Previous,
    chrome: Chrome,
    context: str = "",
    phases: dict | None = None,
) -> SiteReport:
    """Write `pages` (`Page`, `Reuse`) and the stylesheet and script into `out`,
    reusing unchanged files of the `previous` site (a `Reuse` is linked without being made,
    a page whose bytes are those of the previous site's page is linked too); writes the index
    of the pages last.

    Two threads hash (sha256) and write the pages (both release the GIL: `writev` of a page's
    pieces, its rows not copied) while this one renders the next ones. `phases` gets the
    seconds spent here rendering pages and handing them over (render) and waiting for the
    writers at the end (write_wait)."""
    phases = {} if phases is None else phases
    render = 0.0
    renderer = chrome.renderer()
    report = SiteReport(out)
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="site-write") as pool:
        writer = Writer(out, previous, pool)
        for asset in ASSETS:
            writer.page(asset, None, [(HERE / "static" / asset).read_bytes()])
        for page in pages:
            start = time.perf_counter()
            if isinstance(page, Reuse):
                writer.reuse(page.path, page.fingerprint)
            elif isinstance(page, Rendered):
                writer.page(page.path, page.fingerprint, page.pieces)
            else:
                writer.page(page.path, page.fingerprint, renderer.pieces(page))
            render += time.perf_counter() - start
        start = time.perf_counter()
        index = writer.finish(report)
        phases["write_wait"] = time.perf_counter() - start
    phases["render"] = render
    report.pages = len(index) - len(ASSETS)
    report.written_paths.sort()
    tmp = out / (PAGE_INDEX + ".tmp")
    pages_index = {
        "format": FORMAT,
        "context": context,
        "pages": index,
        "fingerprints": writer.fingerprints,
    }
    tmp.write_text(json.dumps(pages_index, sort_keys=True, indent=0))
    os.replace(tmp, out / PAGE_INDEX)
    return report


class Writer:
    """The pages handed to two writer threads in batches: each page hashed, then linked from
    the previous site when it has the same bytes there, else written (`_write`); a `Reuse`
    linked without being hashed."""

    def __init__(self, out: Path, previous: Previous, pool: ThreadPoolExecutor):
        self.prefix = f"{out}/"  # paths as text: a site has tens of thousands of pages
        self.previous = previous
        self.pool = pool
        self.fingerprints: dict[str, str] = {}
        self._seen: set[str] = set()
        self._made_dirs: set[str] = set()
        self._pending: list[Future] = []
        self._batch: list = []
        self._links: list = []

    def page(self, path: str, fingerprint: str | None, pieces: list) -> None:
        self._claim(path, fingerprint)
        self._batch.append((path, self._target(path), pieces))
        self._hand_over()

    def reuse(self, path: str, fingerprint: str) -> None:
        self._claim(path, fingerprint)
        self._links.append((path, self._target(path)))
        self._hand_over()

    def finish(self, report: SiteReport) -> dict[str, str]:
        """Wait for the writers; {path: hash} of every file, counted in `report`."""
        self._hand_over(force=True)
        index: dict[str, str] = {}
        for future in self._pending:
            for path, digest, written in future.result():
                index[path] = digest
                if written:
                    report.written += 1
                    report.written_paths.append(path)
                else:
                    report.reused += 1
        return index

    def _claim(self, path: str, fingerprint: str | None) -> None:
        if path in self._seen:
            raise AssertionError(f"two pages at {path}")
        self._seen.add(path)
        if fingerprint is not None:
            self.fingerprints[path] = fingerprint

    def _target(self, path: str) -> str:
        target = self.prefix + path
        folder = target.rpartition("/")[0]
        if folder not in self._made_dirs:
            os.makedirs(folder, exist_ok=True)
            self._made_dirs.add(folder)
        return target

    def _hand_over(self, force: bool = False) -> None:
        if self._batch and (force or len(self._batch) >= BATCH):
            self._pending.append(self.pool.submit(self._store, self._batch))
            self._batch = []
        if self._links and (force or len(self._links) >= 4 * BATCH):
            self._pending.append(self.pool.submit(self._link, self._links))
            self._links = []

    def _store(self, batch: list[tuple[str, str, list]]) -> list[tuple[str, str, bool]]:
        done = []
        for path, target, pieces in batch:
            digest = hashlib.sha256()
            for piece in pieces:
                digest.update(piece)
            hexdigest = digest.hexdigest()
            if self.previous.pages.get(path) == hexdigest and _reuse(
                self.previous.file(path), target
            ):
                done.append((path, hexdigest, False))
                continue
            _write(target, pieces)
            done.append((path, hexdigest, True))
        return done

    def _link(self, batch: list[tuple[str, str]]) -> list[tuple[str, str, bool]]:
        done = []
        for path, target in batch:
            if not _reuse(self.previous.file(path), target):
                raise FileNotFoundError(f"{self.previous.file(path)} vanished")
            done.append((path, self.previous.pages[path], False))
        return done


def _write(target: str, slices: list) -> None:
    """Write the slices one after the other into a new file `target` (one `writev`; the
    rest of a short write after it)."""
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        total = sum(len(s) for s in slices)
        done = os.writev(fd, slices) if slices else 0
        if done < total:
            rest = memoryview(b"".join(bytes(s) for s in slices))[done:]
            while rest:
                rest = rest[os.write(fd, rest) :]
    finally:
        os.close(fd)


def _reuse(source: str, target: str) -> bool:
    try:
        os.link(source, target)
    except FileNotFoundError:
        return False
    except OSError:
        try:
            shutil.copyfile(source, target)
        except OSError:
            return False
    return True


def load_previous(folder: Path | None, context: str) -> Previous:
    """The previous site's index: page hashes always, row fingerprints when it was built in
    the same `context`."""
    if folder is None:
        return NO_PREVIOUS
    try:
        data = json.loads((folder / PAGE_INDEX).read_text())
    except (OSError, ValueError):
        return NO_PREVIOUS
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return NO_PREVIOUS
    same = context != "" and data.get("context") == context
    return Previous(folder, data.get("pages", {}), data.get("fingerprints", {}) if same else {})


def build_context(chrome: Chrome, timezone: str, window_results: int) -> str:
    """What every page depends on besides its rows: this package's code, templates and
    assets, the language, the settings shown, the navigation, the Polars version (its hash
    makes the fingerprints)."""
    digest = hashlib.sha256()
    for path in sorted(HERE.rglob("*")):
        if path.is_file() and path.suffix in (".py", ".j2", ".css", ".js"):
            digest.update(path.relative_to(HERE).as_posix().encode() + b"\0" + path.read_bytes())
    settings = [FORMAT, pl.__version__, chrome.lang, timezone, window_results, chrome.nav]
    digest.update(json.dumps(settings).encode())
    return digest.hexdigest()


# ------------------------------------------------------------------------------ index page
def index_page(tables: dict, w: dict, lang: str) -> Page:
    """The latest month of each competition (its top 10 or its events) and every month
    (`index.html.j2`)."""
    competitions = [
        _latest_simultane(tables, w, lang),
        _latest_face_a_face(tables, w, lang),
        _latest_bridge(tables, w, lang),
    ]
    data = {"title": w["site"], "crumbs": [], "competitions": competitions}
    return Page(paths.INDEX, "index.html.j2", data)


def _latest_simultane(tables: dict, w: dict, lang: str) -> dict:
    monthly = tables["simultane_monthly"]
    months = simultane.months_of(monthly, tables["simultane_tournament_results"])
    if not months or monthly is None:
        return _no_data(w, "simultane")
    cols = [
        Col(w["rank"], text(pl.col("rank_indice")), num=True),
        Col(w["player"], pl.col("player_id"), href=simultane.PLAYER_LINK, th=True),
        Col(w["indice"], num(pl.col("indice"), 2, lang), num=True),
        Col(w["victoire"], num(pl.col("victoire"), 2, lang), num=True),
        Col(w["pct_actuel"], num(pl.col("pct_actuel"), 1, lang), num=True),
    ]
    top = monthly.filter(pl.col("month") == months[-1]).sort("rank_indice", "player_id").head(10)
    return _latest(w, lang, "simultane", paths.sim_month, months, cols, top)


def _latest_face_a_face(tables: dict, w: dict, lang: str) -> dict:
    ranking = tables["ff_monthly_ranking"]
    months = face_a_face.months_of(ranking, tables["ff_matches"])
    if not months:
        return _no_data(w, "face_a_face")
    player = face_a_face.player_link("player_id")
    cols = [
        Col(w["rank"], text(pl.col("rank")), num=True),
        Col(w["player"], pl.col("player_id"), href=player, th=True),
        Col(w["points"], num(pl.col("points"), 2, lang), num=True),
        Col(w["elo"], num(pl.col("elo"), 0, lang), num=True),
        Col(w["n_matches"], text(pl.col("matches")), num=True),
    ]
    top = ranking.filter(pl.col("month") == months[-1]).sort("rank", "player_id").head(10)
    return _latest(w, lang, "face_a_face", paths.ff_month, months, cols, top)


def _latest_bridge(tables: dict, w: dict, lang: str) -> dict:
    standings = tables["bridge_standings"]
    if (
        standings is None
        or tables["bridge_board_results"] is None
        or not len(standings["month"].drop_nulls())
    ):
        return _no_data(w, "bridge")
    events = bridge.event_summary(standings, tables["bridge_event"])
    months = sorted(set(events["month"].drop_nulls().to_list()))
    link = pl.concat_str(
        pl.lit("bridge/tournois/"), paths.slug_expr("event_id"), pl.lit("/index.html")
    )
    cols = [
        Col(w["date"], text(pl.col("date"))),
        Col(w["event"], pl.col("event_id"), th=True, href=link),
        Col(w["pairs"], text(pl.col("pairs")), num=True),
        Col(w["winner"], text(pl.col("winners"))),
    ]
    top = events.filter(pl.col("month") == months[-1])
    return _latest(w, lang, "bridge", paths.bridge_month, months, cols, top)


def _no_data(w: dict, key: str) -> dict:
    return {"h2": w[key], "rows": None}


def _latest(
    w: dict, lang: str, key: str, month_path, months: list[str], cols: list[Col], top: pl.DataFrame
) -> dict:
    latest = month_name(months[-1], lang)
    rows = bodies(top.with_columns(_page=pl.lit(0)), ["_page"], cols, "").get(0, "")
    return {
        "h2": w[key],
        "id": key.replace("_", "-"),
        "link": month_path(months[-1]),
        "link_label": f"{w['latest_month']} — {latest}",
        "caption": f"{w[key]} — {latest}",
        "cols": columns(cols),
        "rows": rows,
        "months": [(month_name(m, lang), month_path(m)) for m in reversed(months)],
    }


# ------------------------------------------------------------------------------ publishing
def publish_site(
    read_table: ReadTable,
    out: Path | str,
    lang: str = "fr",
    *,
    timezone: str = SimultaneOptions.timezone,
    window_results: int = SimultaneOptions.window_results,
) -> SiteReport:
    """Build into a staging folder beside `out` (reusing `out`'s unchanged pages), then swap
    it in atomically; the old site is deleted after the swap."""

    def build(stage: Path, previous: Path | None) -> SiteReport:
        return build_site(
            read_table, stage, lang, previous, timezone=timezone, window_results=window_results
        )

    return publish(out, build)


def event_site(
    standings: pl.DataFrame,
    board_results: pl.DataFrame,
    events: pl.DataFrame,
    out: Path | str,
    lang: str = "fr",
    deals: pl.DataFrame | None = None,
) -> SiteReport:
    """The pages of the bridge events of one file (`duplirank score FILE --format html`):
    one event's standings at `out/index.html`, its travellers and pair cards beside it; with
    several events, an index of them and one folder per event. `events` has event_id, date;
    `deals` the boards' deals (`transforms.bridge.deals.board_deals`), when the file has them."""
    words = labels(lang)
    if standings.is_empty():
        raise UserError("no pair was scored: no page to write")
    ids = sorted(standings["event_id"].unique().to_list())
    single = len(ids) == 1
    events = events.select("event_id", pl.col("date").cast(pl.String)).unique("event_id")
    summary = bridge.event_summary(standings, events).with_columns(month=pl.lit(None, pl.String))
    if single:
        layout = bridge.Layout(lambda event_id: "", pl.lit(""), lambda event_id, month: [])
    else:
        layout = bridge.Layout(
            lambda event_id: f"{paths.slug(event_id)}/",
            pl.concat_str(paths.slug_expr("event_id"), pl.lit("/")),
            lambda event_id, month: [(words["events"], paths.INDEX)],
        )

    def pages():
        if not single:
            yield bridge.events_index(summary, words, lang)
        yield from bridge.event_pages(standings, board_results, summary, words, lang, layout, deals)

    def build(stage: Path, previous: Path | None) -> SiteReport:
        started = time.perf_counter()
        report = write_pages(pages(), stage, load_previous(previous, ""), Chrome(lang, words, []))
        report.seconds = time.perf_counter() - started
        return report

    return publish(out, build)


def publish(out: Path | str, build) -> SiteReport:
    """Run `build(stage, previous)` into a staging folder beside `out`, then swap it in."""
    out = Path(out).resolve()
    if out.exists() and not out.is_dir():
        raise UserError(f"{out} is a file, not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / PAGE_INDEX).exists():
        raise UserError(
            f"{out} exists and is not a duplirank site (no {PAGE_INDEX}); "
            "give a new or empty folder, or the folder of a site built before"
        )
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UserError(f"cannot create {out.parent}: {err.strerror or err}") from None
    stage = out.parent / f".{out.name}.staging-{os.getpid()}"
    shutil.rmtree(stage, ignore_errors=True)
    remove_stale(out)
    try:
        try:
            stage.mkdir()
        except OSError as err:
            raise UserError(f"cannot write beside {out}: {err.strerror or err}") from None
        report = build(stage, out if out.is_dir() else None)
        swap_in(stage, out)
    finally:
        shutil.rmtree(stage, ignore_errors=True)  # the new site's staging, or the old site
    report.out = out
    return report


def remove_stale(out: Path) -> None:
    """Remove the staging folders (and previous sites being swapped out) that builds of `out`
    killed before their end left beside it: those of processes that are gone. A build still
    running keeps its own."""
    for folder in out.parent.glob(f".{glob.escape(out.name)}.*-*"):
        kind, _, pid = folder.name[len(out.name) + 2 :].rpartition("-")
        if kind not in ("staging", "old") or not pid.isdigit() or process_running(int(pid)):
            continue
        shutil.rmtree(folder, ignore_errors=True)


def swap_in(stage: Path, out: Path) -> None:
    """Put the folder `stage` at `out`; the previous `out` ends at `stage` (or is gone)."""
    if not out.exists():
        os.rename(stage, out)
        return
    if _exchange(stage, out):
        return
    old = out.parent / f".{out.name}.old-{os.getpid()}"
    os.rename(out, old)
    os.rename(stage, out)
    os.rename(old, stage)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Atomically exchange two paths (Linux renameat2); False when not available."""
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    libc = ctypes.CDLL(name, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    result = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return result == 0
