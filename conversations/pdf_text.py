"""A PDF's text, read with pypdf in a process of its own, within bounds no file can pass.

`conversations.files` runs this file as a script for each PDF (`python -I pdf_text.py
MAX_DECODED_BYTES MAX_CHARS MAX_MEMORY_BYTES MAX_CPU_SECONDS`, the PDF on stdin) and reads one
JSON object from its stdout: `{"status", "reason", "pages", "text", "truncated"}`, `status`
and `reason` being values of ConversationFile.Status and ConversationFile.Reason.

The bounds, so that a decompression bomb costs the worker nothing:
- decompressed bytes: every stream pypdf decodes for the document (content streams, object
  streams, forms, font maps) counts against MAX_DECODED_BYTES, together; past it the file is
  `too_large`. pypdf's own limits are per stream (75 MB each), which a file of many such
  streams passes;
- memory: the process's address space is limited to MAX_MEMORY_BYTES (RLIMIT_AS); a file that
  needs more is `too_large` (a MemoryError, or exit status EXIT_TOO_LARGE);
- time: the parent kills the process past its own limit; RLIMIT_CPU stops it too should the
  parent die first;
- and the memory it used goes back to the system when it exits.

It imports nothing of Django's or of the project's: it starts in a fraction of a second, and a
crafted file meets no secret (the parent gives it no environment beyond PATH).
"""

from __future__ import annotations

import io
import json
import logging
import resource
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pypdf.filters
from pypdf import PasswordType, PdfReader, apply_configuration, get_configuration
from pypdf.errors import LimitReachedError

logger = logging.getLogger("pdf_text")

READY = "ready"
UNREADABLE = "unreadable"
MALFORMED = "malformed"
ENCRYPTED = "encrypted"
NO_TEXT = "no_text"
TOO_LARGE = "too_large"
PAGE_BREAK = "\f"
# The exit status of a process that ran out of memory before it could write its answer.
EXIT_TOO_LARGE = 3

# pypdf's per-stream output limits: each decoding is held to what is left of the budget.
_OUTPUT_LIMITS = (
    "zlib_maximum_output_length",
    "lzw_maximum_output_length",
    "run_length_maximum_output_length",
    "jbig2_maximum_output_length",
    "brotli_maximum_output_length",
    "array_based_stream_maximum_output_length",
)


class DecodedTooLarge(LimitReachedError):
    """The document's streams decompress to more than the budget."""


class DecodeBudget:
    """Counts the bytes pypdf decompresses for one document, all streams together.

    Each decoding runs with pypdf's output limits lowered to what is left of the budget, so no
    single stream can allocate past it either; the first decoding that would pass it raises
    DecodedTooLarge (and `exhausted` stays set, should pypdf catch the error on its way up).
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self.exhausted = False

    def wrap(self, decode: Callable[[Any], bytes]) -> Callable[[Any], bytes]:
        def decode_within_budget(stream: Any) -> bytes:
            left = self.limit - self.used
            if left <= 0:
                self.exhausted = True
                raise DecodedTooLarge(f"the streams decompress to more than {self.limit} bytes")
            current = get_configuration()
            lowered = {name: min(getattr(current, name) or left, left) for name in _OUTPUT_LIMITS}
            try:
                with apply_configuration(current.with_overwrites(**lowered)):
                    data = decode(stream)
            except LimitReachedError:
                if any(lowered[name] < (getattr(current, name) or left + 1) for name in _OUTPUT_LIMITS):
                    self.exhausted = True
                    raise DecodedTooLarge(f"the streams decompress to more than {self.limit} bytes") from None
                raise
            self.used += len(data)
            if self.used > self.limit:  # a filter without an output limit of its own
                self.exhausted = True
                raise DecodedTooLarge(f"the streams decompress to more than {self.limit} bytes")
            return data

        return decode_within_budget


@contextmanager
def decode_budget(limit: int) -> Iterator[DecodeBudget]:
    """Count every stream pypdf decodes meanwhile against `limit` bytes.

    pypdf's stream objects look `decode_stream_data` up in `pypdf.filters` at each decoding;
    it is replaced there for the duration (in this process only, which reads one file).
    """
    budget = DecodeBudget(limit)
    original = pypdf.filters.decode_stream_data
    pypdf.filters.decode_stream_data = budget.wrap(original)  # type: ignore[assignment]
    try:
        yield budget
    finally:
        pypdf.filters.decode_stream_data = original


def _clean(text: str) -> str:
    # PostgreSQL refuses NUL in text, and a lone surrogate cannot be encoded: neither is content.
    return text.replace("\x00", "").encode("utf-8", "replace").decode("utf-8")


def _result(status: str, reason: str = "", pages: int | None = None, text: str = "", truncated: bool = False) -> dict:
    return {"status": status, "reason": reason, "pages": pages, "text": text, "truncated": truncated}


def pdf_read(data: bytes, *, max_decoded_bytes: int, max_chars: int) -> dict[str, Any]:
    """The text of each page (joined by PAGE_BREAK, at most `max_chars`), or why there is none.

    Never raises for the file's sake: any error of pypdf's (a malformed file can raise anything
    from its parser: PdfReadError, KeyError, RecursionError...) makes it `malformed`, and a page
    that fails alone is skipped. Only MemoryError goes through (the caller answers `too_large`).
    """
    with decode_budget(max_decoded_bytes) as budget:
        try:
            reader = PdfReader(io.BytesIO(data), strict=False)
            if reader.is_encrypted:
                # pypdf already tried the empty user password, which any viewer opens without asking.
                try:
                    opened = reader.decrypt("") != PasswordType.NOT_DECRYPTED
                except MemoryError:
                    raise
                except Exception as exc:  # an unsupported algorithm (DependencyError, NotImplementedError)
                    logger.info("encrypted PDF that cannot be opened: %r", exc)
                    opened = False
                if not opened:
                    return _result(UNREADABLE, ENCRYPTED)
            count = len(reader.pages)
        except DecodedTooLarge:
            return _result(UNREADABLE, TOO_LARGE)
        except MemoryError:
            raise
        except Exception as exc:
            if budget.exhausted:
                return _result(UNREADABLE, TOO_LARGE)
            logger.warning("malformed PDF: %r", exc)
            return _result(UNREADABLE, MALFORMED)
        if count == 0:
            return _result(UNREADABLE, MALFORMED, pages=0)
        parts: list[str] = []
        total = 0
        failed = 0
        for number in range(count):
            if total > max_chars:
                break  # the rest would be cut off anyway
            try:
                # A form feed inside a page would read as a page break (PAGE_BREAK joins the pages).
                page_text = _clean(reader.pages[number].extract_text() or "").replace(PAGE_BREAK, "\n")
            except MemoryError:
                raise
            except Exception as exc:
                if not budget.exhausted:
                    failed += 1
                    logger.warning("page %s of %s unreadable: %r", number + 1, count, exc)
                page_text = ""
            if budget.exhausted:
                logger.warning(
                    "page %s of %s: the streams decompress to more than %s bytes", number + 1, count, budget.limit
                )
                return _result(UNREADABLE, TOO_LARGE, pages=count)
            parts.append(page_text)
            total += len(page_text) + 1
    if failed == count:
        return _result(UNREADABLE, MALFORMED, pages=count)
    if not any(part.strip() for part in parts):
        return _result(UNREADABLE, NO_TEXT, pages=count)
    text = PAGE_BREAK.join(parts)
    return _result(READY, pages=count, text=text[:max_chars], truncated=len(text) > max_chars or len(parts) < count)


def main(argv: list[str]) -> int:
    max_decoded_bytes, max_chars, max_memory_bytes, max_cpu_seconds = (int(arg) for arg in argv[1:5])
    # Before reading anything of the file: its memory and processor time, for this process.
    resource.setrlimit(resource.RLIMIT_AS, (max_memory_bytes, max_memory_bytes))
    resource.setrlimit(resource.RLIMIT_CPU, (max_cpu_seconds, max_cpu_seconds + 1))
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(message)s")
    try:
        result = pdf_read(sys.stdin.buffer.read(), max_decoded_bytes=max_decoded_bytes, max_chars=max_chars)
    except MemoryError:
        result = _result(UNREADABLE, TOO_LARGE)
    try:
        sys.stdout.write(json.dumps(result))
        sys.stdout.flush()
    except MemoryError:
        return EXIT_TOO_LARGE
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except MemoryError:
        sys.exit(EXIT_TOO_LARGE)
