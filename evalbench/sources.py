"""Registry of pinned public data files, and ``fetch``.

Every file a study reads from the internet is registered in ``sources.tsv`` (next to this
module) with its upstream URL at a full commit SHA, sha256, size, license and a one-line
description. :func:`fetch` looks for it, in order, in the data mirror
(``EVALBENCH_DATA_MIRROR``, laid out as ``<host>/<path>`` of the URL), in the cache
(``EVALBENCH_CACHE``), and finally downloads it. A file whose sha256 differs from the
registry is never used.

Every file handed out (and every local file passed to :func:`record_read`) is remembered
with its sha256 so the run manifest can list exactly what a study read.
"""

from __future__ import annotations

import csv
import difflib
import hashlib
import shutil
import tempfile
import urllib.error
import urllib.request
from functools import cache
from importlib import resources
from pathlib import Path
from typing import NamedTuple

from tqdm.auto import tqdm

from evalbench.settings import get_settings

_CHUNK = 1 << 20
_READS: dict[str, str] = {}


class Source(NamedTuple):
    """One pinned public file."""

    name: str
    url: str
    sha256: str
    bytes: int
    license: str
    description: str


class DataUnavailable(RuntimeError):
    """A registered file is in neither the mirror nor the cache and cannot be downloaded.

    A study that raises this is reported as *skipped* (not failed), with this message.
    """


class UnknownSource(LookupError):
    """A source name that is not in the registry."""


class ChecksumMismatch(RuntimeError):
    """A file's sha256 differs from the registry; the file is not used."""


@cache
def registry() -> dict[str, Source]:
    """All registered sources by name (read once from ``sources.tsv``)."""
    text = resources.files("evalbench").joinpath("sources.tsv").read_text(encoding="utf-8")
    rows = csv.DictReader(text.splitlines(), delimiter="\t")
    return {
        r["name"]: Source(
            r["name"], r["url"], r["sha256"], int(r["bytes"]), r["license"], r["description"]
        )
        for r in rows
    }


def get(name: str) -> Source:
    """The registered source called ``name``; an unknown name suggests close matches."""
    reg = registry()
    if name not in reg:
        close = difflib.get_close_matches(name, list(reg), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else "; see `evalbench sources`"
        raise UnknownSource(f"unknown data source {name!r}{hint}")
    return reg[name]


def names(prefix: str = "") -> list[str]:
    """Sorted names of registered sources starting with ``prefix``."""
    return sorted(n for n in registry() if n.startswith(prefix))


def relative_path(url: str) -> Path:
    """``https://host/a/b`` -> ``host/a/b``: the layout shared by mirror and cache."""
    _scheme, sep, rest = url.partition("://")
    if not sep or not rest or ".." in Path(rest).parts:
        raise ValueError(f"not a usable source URL: {url!r}")
    return Path(rest)


def fetch(name: str, *, progress: bool = True) -> Path:
    """Local path of the registered file ``name`` (mirror, then cache, then download).

    Raises:
        UnknownSource: ``name`` is not registered.
        ChecksumMismatch: a candidate file has the wrong sha256.
        DataUnavailable: no verified copy is reachable; says how to provide one.
    """
    return fetch_source(get(name), progress=progress)


def fetch_source(source: Source, *, progress: bool = True) -> Path:
    """Like :func:`fetch`, for a :class:`Source` that need not be registered."""
    settings = get_settings()
    rel = relative_path(source.url)
    tried = []
    if settings.data_mirror is not None:
        candidate = settings.data_mirror / rel
        if candidate.is_file():
            return _verified(candidate, source, "mirror")
        tried.append(f"not in the mirror {settings.data_mirror}")
    else:
        tried.append("no mirror set (EVALBENCH_DATA_MIRROR)")
    cached = settings.cache_dir / "data" / rel
    if cached.is_file():
        return _verified(cached, source, "cache")
    tried.append(f"not in the cache {settings.cache_dir / 'data'}")
    if settings.offline:
        tried.append("downloads are off (EVALBENCH_OFFLINE)")
    else:
        try:
            _download(source, cached, progress=progress)
            return _verified(cached, source, "download")
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            tried.append(f"download failed: {exc}")
    raise DataUnavailable(
        f"data file {source.name!r} ({source.url}) is unavailable: {'; '.join(tried)}. "
        f"Provide it with `evalbench fetch {source.name}` on a machine with network access, "
        f"or point EVALBENCH_DATA_MIRROR at a mirror that holds {rel}."
    )


def availability(source: Source) -> str:
    """``cached`` when ``source`` can be read without downloading (a copy in the mirror or
    the cache with its pinned sha256), ``bad sha256`` when the only copies found have other
    bytes (a study would refuse them), else ``-``."""
    settings = get_settings()
    rel = relative_path(source.url)
    places = [settings.cache_dir / "data" / rel]
    if settings.data_mirror is not None:
        places.insert(0, settings.data_mirror / rel)
    found = [p for p in places if p.is_file()]
    if any(p.stat().st_size == source.bytes and sha256_file(p) == source.sha256 for p in found):
        return "cached"
    return "bad sha256" if found else "-"


def cached_path(source: Source) -> Path:
    """Where ``source`` lives (or would live) in the download cache."""
    return get_settings().cache_dir / "data" / relative_path(source.url)


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def record_read(path: Path | str, label: str | None = None) -> str:
    """Hash a local (unregistered) data file and remember it for the manifest.

    Returns:
        The file's sha256.
    """
    path = Path(path)
    digest = sha256_file(path)
    _READS[label or str(path.resolve())] = digest
    return digest


def forget_reads() -> None:
    """Start a new record of data files read (a warm kernel's next study)."""
    _READS.clear()


def reads() -> dict[str, str]:
    """Every data file handed out in this process so far: name or path -> sha256."""
    return dict(_READS)


def _verified(path: Path, source: Source, where: str) -> Path:
    digest = sha256_file(path)
    if digest != source.sha256:
        raise ChecksumMismatch(
            f"{where} copy of {source.name!r} at {path} has sha256 {digest}, "
            f"expected {source.sha256}; the file was not used"
        )
    _READS[source.name] = digest
    return path


def _download(source: Source, target: Path, *, progress: bool) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=target.parent, delete=False, suffix=".part") as tmp:
        tmp_path = Path(tmp.name)
        try:
            with urllib.request.urlopen(source.url, timeout=30) as resp:
                bar = tqdm(
                    total=source.bytes or None,
                    unit="B",
                    unit_scale=True,
                    desc=f"fetch {source.name}",
                    disable=not progress,
                )
                with bar:
                    for chunk in iter(lambda: resp.read(_CHUNK), b""):
                        tmp.write(chunk)
                        bar.update(len(chunk))
        except BaseException:
            tmp_path.unlink(missing_ok=True)
            raise
    digest = sha256_file(tmp_path)
    if digest != source.sha256:
        tmp_path.unlink(missing_ok=True)
        raise ChecksumMismatch(
            f"download of {source.name!r} from {source.url} has sha256 {digest}, "
            f"expected {source.sha256}; the file was discarded"
        )
    shutil.move(tmp_path, target)
