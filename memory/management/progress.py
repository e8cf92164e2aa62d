"""A one-line progress bar on stderr for the long management commands (reembed, recall_eval).

Plain text redrawn in place with a carriage return: no colour (progress is not an error), and
no dependency, since these commands run on a runtime install that has no tqdm.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


class ProgressBar:
    """`[#########.....................] 120/400 searches 310/s  conv-26: searching`

    Redrawn at most every `interval` seconds, so that a fast loop spends its time on the work and
    a log that captures stderr gets a few frames a second, not one per item. `close()` draws the
    last frame (unless it is on screen already) and ends the line.
    """

    def __init__(
        self, total: int, *, unit: str = "", stream: TextIO | None = None, width: int = 30, interval: float = 0.2
    ) -> None:
        self.total = total
        self.done = 0
        self.unit = unit
        self.status = ""
        self._stream = stream if stream is not None else sys.stderr
        self._width = width
        self._interval = interval
        self._started = time.monotonic()
        self._drawn_at = -interval
        self._drawn_length = 0
        self._drawn: tuple[int, str] | None = None

    def update(self, advance: int = 0, *, status: str | None = None) -> None:
        """Count `advance` more items done and/or show a new `status`; redraw if it is time."""
        self.done += advance
        if status is not None:
            self.status = status
        now = time.monotonic()
        if status is not None or now - self._drawn_at >= self._interval or self.done >= self.total:
            self._draw(now)

    def close(self) -> None:
        if self._drawn != (self.done, self.status):
            self._draw(time.monotonic())
        self._stream.write("\n")
        self._stream.flush()

    def _draw(self, now: float) -> None:
        self._drawn_at = now
        self._drawn = (self.done, self.status)
        filled = int(self._width * self.done / self.total) if self.total else self._width
        rate = self.done / max(now - self._started, 1e-6)
        unit = f" {self.unit}" if self.unit else ""
        status = f"  {self.status}" if self.status else ""
        line = f"[{'#' * filled}{'.' * (self._width - filled)}] {self.done}/{self.total}{unit} {rate:.0f}/s{status}"
        # Spaces over what a longer previous frame left at the end of the line.
        self._stream.write("\r" + line.ljust(self._drawn_length))
        self._stream.flush()
        self._drawn_length = len(line)
