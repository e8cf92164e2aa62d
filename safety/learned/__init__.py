"""The learned screen: the offline line's model, beside its rules (safety.offline). It reads a
student's message with their previous few messages in the conversation, in French, English or
a mix, and runs on the CPU in this process: no network, nothing downloaded (docs/safety.md,
"The learned screen").

Contract:

- `screen_message(text, context=(), rules=None)` is the offline line on a student's message:
  the rules' result (`rules`, or `safety.offline.screen(text)`) and the learned screen's, as two
  `BackendResult`s to combine (safety.types.combine). Never raises.
  - The learned result ("learned") has at most one signal (safety.learned.model) and its
    probabilities as `scores`.
  - A crisis of the rules that the learned screen does not confirm becomes a quiet concern (its
    rule named "...:unconfirmed"): it waits in the teachers' queue, but a joke such as "kms this
    essay lol" is not a crisis. Sexual content involving minors stays a crisis
    (safety.types.Signal).
  - The learned screen's own concerns are quiet too: the teachers' queue, without an alert.
  - When the learned screen is off (`SAFETY_LEARNED=false`) or fails, its result says so
    (`answered` False, `error`) and the rules stand unchanged.
- `warm_up()` loads the head and its embedders now rather than on the first message (a web
  process calls it at start-up, in a thread; a worker loads them at its first sweep).
- Students' messages only: tutor replies, files and memories are read by the rules alone (the
  model was trained on what students write).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from django.conf import settings

from safety import offline
from safety.types import BackendResult, Category, Severity

if TYPE_CHECKING:
    from safety.learned.model import Head

logger = logging.getLogger(__name__)

NAME = "learned"

_lock = threading.Lock()
_head: Head | None = None


def head() -> Head:
    """The shipped head, loaded once per process."""
    from safety.learned.model import Head

    global _head
    with _lock:
        if _head is None:
            _head = Head.load()
        return _head


def context_size() -> int:
    """How many previous messages the screen reads (0 when it is off or cannot load)."""
    if not settings.SAFETY_LEARNED:
        return 0
    try:
        return head().context_size
    except Exception:
        logger.exception("the learned screen's head could not be loaded")
        return 0


def _learned(text: str, context: Sequence[str], rules: BackendResult) -> tuple[BackendResult, bool]:
    """The learned result, and whether it found a crisis."""
    if not settings.SAFETY_LEARNED:
        return BackendResult(NAME, answered=False, error="off (SAFETY_LEARNED)"), False
    started = time.perf_counter()
    try:
        model = head()
        p = model.probabilities(text, context, rules.signals)
        signal = model.signal(p)
    except Exception as exc:
        logger.exception("the learned screen failed")
        return BackendResult(NAME, answered=False, error=f"{type(exc).__name__}: {exc}"), False
    result = BackendResult(
        NAME,
        answered=True,
        signals=[signal] if signal else [],
        scores={"crisis": round(p.crisis, 3), "flag": round(p.flag, 3)},
        ms=round((time.perf_counter() - started) * 1000),
    )
    return result, signal is not None and signal.severity == Severity.CRISIS


def _unconfirmed(rules: BackendResult) -> BackendResult:
    signals = [
        dataclasses.replace(s, severity=Severity.CONCERN, rule=f"{s.rule}:unconfirmed", quiet=True)
        if s.severity == Severity.CRISIS and s.category != Category.SEXUAL_MINORS
        else s
        for s in rules.signals
    ]
    return dataclasses.replace(rules, signals=signals)


def screen_message(text: str, context: Sequence[str] = (), rules: BackendResult | None = None) -> list[BackendResult]:
    """The offline line's results on a student's message (see the module's contract)."""
    rules = rules if rules is not None else offline.screen(text)
    learned, crisis = _learned(text, context, rules)
    if learned.answered and not crisis:
        rules = _unconfirmed(rules)
    return [rules, learned]


def enabled() -> bool:
    return bool(settings.SAFETY_LEARNED)


def warm_up() -> None:
    """Load the head and its embedders now (one message screened); raises if they cannot load."""
    if settings.SAFETY_LEARNED:
        model = head()
        model.probabilities("warm-up", ["warm-up"], [])
