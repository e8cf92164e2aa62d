"""Reading a OneRoster CSV bundle (a zip or a folder), bounded in size and streamed row by row.

A bundle that cannot be used raises `BundleError`, before or while its rows are read: no
manifest, a file the manifest lists missing, a required column missing, text that is not UTF-8,
a zip that is unreadable or would expand past the caps. The import runs inside one transaction,
so an error raised half-way changes nothing.
"""

from __future__ import annotations

import csv
import io
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

# Caps on what a zip may expand to (a zip bomb): its members together, and each member's ratio
# of expanded to compressed size. CSV compresses about 10:1; 200:1 is a bomb.
MAX_UNCOMPRESSED_BYTES = 500 * 1024 * 1024
MAX_RATIO = 200
MAX_FIELD_CHARS = 64 * 1024

# The entities imported, and the files read for them.
ENTITIES = ("orgs", "users", "classes", "enrollments")
# What the spec also allows in a bundle: accepted and not read (docs/roster.md).
IGNORED = (
    "academicSessions",
    "categories",
    "classResources",
    "courseResources",
    "courses",
    "demographics",
    "lineItems",
    "resources",
    "results",
    "userProfiles",
    "userResources",
    "lineItemLearningObjectiveIds",
    "lineItemScoreScales",
    "resultLearningObjectiveIds",
    "resultScoreScales",
    "scoreScales",
)
MODES = ("bulk", "delta", "absent")


class BundleError(Exception):
    """The bundle cannot be used; nothing is written."""


@dataclass
class Bundle:
    """An opened bundle: its OneRoster version ("1.1" or "1.2") and each file's mode."""

    root: Path
    version: str
    modes: dict[str, str] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)
    _zip: zipfile.ZipFile | None = None
    _names: dict[str, str] = field(default_factory=dict)

    def mode(self, entity: str) -> str:
        return self.modes.get(entity, "absent")

    def rows(self, name: str, required: tuple[str, ...]) -> Iterator[tuple[int, dict[str, str]]]:
        """The rows of `<name>.csv` as (line number, {column: value}), streamed; BundleError if
        the file or one of the `required` columns is missing or the text is not UTF-8 (a BOM
        is allowed)."""
        with self._open(f"{name}.csv") as raw:
            text = io.TextIOWrapper(raw, encoding="utf-8-sig", errors="strict", newline="")
            try:
                reader = csv.reader(text)
                header = [column.strip() for column in next(reader, [])]
                missing = [column for column in required if column not in header]
                if missing:
                    raise BundleError(f"{name}.csv: required column(s) missing: {', '.join(missing)}")
                for values in reader:
                    if not any(value.strip() for value in values):
                        continue
                    yield (
                        reader.line_num,
                        {column: (values[i].strip() if i < len(values) else "") for i, column in enumerate(header)},
                    )
            except UnicodeDecodeError as exc:
                raise BundleError(f"{name}.csv is not UTF-8 text (byte {exc.start}): save it as UTF-8") from None
            except csv.Error as exc:
                raise BundleError(f"{name}.csv is not valid CSV: {exc}") from None

    def has(self, filename: str) -> bool:
        return filename.lower() in self._names

    def _open(self, filename: str) -> IO[bytes]:
        actual = self._names.get(filename.lower())
        if actual is None:
            raise BundleError(f"{filename} is missing from the bundle")
        if self._zip is None:
            return open(self.root / actual, "rb")
        info = self._zip.getinfo(actual)
        return _Bounded(self._zip.open(info), limit=info.file_size, name=filename)  # type: ignore[return-value]

    def close(self) -> None:
        if self._zip is not None:
            self._zip.close()


class _Bounded(io.RawIOBase):
    """A zip member that may not expand past the size its header declares (checked already
    against the caps): a header that lies is caught while reading."""

    def __init__(self, raw: IO[bytes], *, limit: int, name: str) -> None:
        self.raw, self.left, self.name = raw, limit, name

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self.raw.read(len(buffer))
        if len(data) > self.left:
            raise BundleError(f"{self.name} expands past its declared size")
        self.left -= len(data)
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self.raw.close()
        super().close()


def bundle_open(path: Path | str, *, max_bytes: int) -> Bundle:
    """Open the bundle at `path` (a .zip file or a folder) and read its manifest.

    BundleError when the zip is larger than `max_bytes`, unreadable, or would expand past the
    caps; when there is no manifest, its OneRoster version is not 1.1 or 1.2, or a file it lists
    as bulk or delta is missing."""
    path = Path(path)
    csv.field_size_limit(MAX_FIELD_CHARS)
    if path.is_dir():
        names = {p.name.lower(): p.name for p in path.iterdir() if p.is_file()}
        bundle = Bundle(root=path, version="", _names=names)
    elif path.is_file():
        if path.stat().st_size > max_bytes:
            raise BundleError(f"the bundle is larger than {max_bytes} bytes")
        bundle = Bundle(root=path, version="", _zip=_zip_open(path))
        assert bundle._zip is not None
        bundle._names = {Path(i.filename).name.lower(): i.filename for i in bundle._zip.infolist() if not i.is_dir()}
    else:
        raise BundleError(f"{path} is neither a zip file nor a folder")
    try:
        _manifest_read(bundle)
    except BaseException:
        bundle.close()
        raise
    return bundle


def _zip_open(path: Path) -> zipfile.ZipFile:
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise BundleError(f"the zip cannot be read: {exc}") from None
    total = 0
    for info in archive.infolist():
        total += info.file_size
        if info.file_size > MAX_RATIO * max(info.compress_size, 1) + 1024:
            archive.close()
            raise BundleError(f"{info.filename} would expand more than {MAX_RATIO} times: refused")
        if info.flag_bits & 0x1:
            archive.close()
            raise BundleError(f"{info.filename} is encrypted")
    if total > MAX_UNCOMPRESSED_BYTES:
        archive.close()
        raise BundleError(f"the zip would expand to more than {MAX_UNCOMPRESSED_BYTES} bytes: refused")
    return archive


def _manifest_read(bundle: Bundle) -> None:
    if not bundle.has("manifest.csv"):
        raise BundleError("manifest.csv is missing: not a OneRoster CSV bundle")
    properties = {
        row["propertyName"]: row["value"] for _line, row in bundle.rows("manifest", ("propertyName", "value"))
    }
    version = properties.get("oneroster.version", "")
    if version not in ("1.1", "1.2"):
        raise BundleError(f"oneroster.version {version or '(none)'} is not 1.1 or 1.2")
    bundle.version = version
    for key, mode in properties.items():
        if not key.startswith("file."):
            continue
        name, mode = key.removeprefix("file."), mode.lower()
        if mode not in MODES:
            raise BundleError(f"manifest.csv: {key} is {mode!r}, not bulk, delta or absent")
        if mode == "absent":
            continue
        if not bundle.has(f"{name}.csv"):
            raise BundleError(f"manifest.csv lists {name}.csv as {mode}, and it is missing")
        if name in ENTITIES or name == "roles":
            bundle.modes[name] = mode
        else:
            bundle.ignored.append(name)
    if not any(entity in bundle.modes for entity in ENTITIES):
        raise BundleError("manifest.csv lists none of orgs, users, classes, enrollments")
    if version == "1.2" and "users" in bundle.modes and "roles" not in bundle.modes:
        raise BundleError("a OneRoster 1.2 bundle with users.csv needs roles.csv (the users' roles)")
