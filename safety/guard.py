"""The safety guard of the chat turn (conversations.screening), docs/safety.md.

- The student's message: the offline line (the rules, then the learned screen with the
  student's previous messages: safety.line) and the configured backends (SAFETY_BACKENDS) in
  tasks of their own, concurrently with the prompt's assembly and recall. What the offline line
  finds is recorded as soon as it answers, what the backends add when they answer
  (`recording.flag_record` merges both into one flag): a crisis found after the model was called
  is still flagged and alerted.
- Before the model: a crisis (from the offline line, which the turn waits for up to
  LINE_WAIT_SECONDS, or from the backends if they answered within SAFETY_TURN_WAIT_SECONDS of
  the prompt being ready) makes a `Notice`: the crisis
  instructions in the student's language (their setting), a `safety` event with the resources, the resources
  added to the reply, and a reply of ours if the model cannot answer.
- The reply: the offline line on its newest text as it streams, the text held back until it is
  screened (a failure stops the deltas: nothing it refused was sent), then the offline line and
  the backends on the whole reply. A reply fails when it gives
  self-harm instructions, or sexual, hateful, harassing or violent content of concern or
  above; a caring reply that names help lines does not. A failed reply is replaced by a safe
  text, and flagged with the original kept for staff.

No method raises for a backend or a database that fails: screening never fails a turn.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

from django.conf import settings

from conversations.models import Message
from conversations.screening import SAFETY, Guard, Notice, ScreenTurn, TurnScreen
from core.db import db_step
from llm.offload import offload
from llm.tools import ToolEvent
from safety import learned, line, offline, recording, replies
from safety.models import Flag
from safety.resources import resources_for
from safety.types import BackendResult, Category, Severity, Verdict, combine, rank

logger = logging.getLogger(__name__)

# What makes a tutor reply fail (at concern or above); self-harm only as instructions.
REPLY_FAILS = frozenset(
    {Category.SEXUAL, Category.SEXUAL_MINORS, Category.HATE, Category.HARASSMENT, Category.VIOLENCE}
)
# The streamed reply is screened at each sentence end, or every this many new characters, over
# what is held back and the shown text's last HOLD_WINDOW_CHARS.
HOLD_EVERY_CHARS = 160
HOLD_WINDOW_CHARS = 400
# A screened text is shown up to its last sentence end (the sentence after it may be unfinished,
# and its end may make it refused); a longer run without one, up to its last space.
HOLD_MAX_CHARS = 480
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*\s+|\n")

# How long the turn waits for the offline line's learned screen before the model (it takes
# milliseconds once loaded); past it, the rules alone decide this turn's notice, and what the
# learned screen finds is still recorded and alerted.
LINE_WAIT_SECONDS = 2.0

# The screening tasks still running (the loop keeps only weak references to tasks).
_running: set[asyncio.Task[Any]] = set()


def _spawn(coro: Any) -> asyncio.Task[Any]:
    task = asyncio.ensure_future(coro)
    _running.add(task)
    task.add_done_callback(_running.discard)
    return task


def reply_fails(verdict: Verdict) -> bool:
    for signal in verdict.signals:
        if rank(signal.severity) < rank(Severity.CONCERN):
            continue
        if signal.category == Category.SELF_HARM and "instructions" in signal.rule:
            return True
        if signal.category in REPLY_FAILS:
            return True
    return False


async def _screen_backends(text: str, *, purpose: str, student_id: int) -> list[Any]:
    backends = list(settings.SAFETY_BACKENDS)
    if not backends:
        return []
    from safety.backends import screen_backends

    return await screen_backends(text, backends=backends, purpose=purpose, student_id=student_id)


class _Screen(TurnScreen):
    def __init__(self, turn: ScreenTurn) -> None:
        self.turn = turn
        self.text = turn.message.content
        self.offline = offline.screen(self.text)
        self.line_task = _spawn(self._screen_line())
        # The student's own setting, the language of their page: a crisis message, its help
        # lines and the reply come in the language the student reads, whatever this text is in.
        self.language = replies.language(turn.language)
        self.message_task = _spawn(self._screen_message())
        self.reply_verdict: Verdict | None = None
        # The streamed reply: the end of what was shown (the context of the next check), what is
        # held back until it is screened, and how much of that was not checked yet.
        self._shown_tail = ""
        self._pending = ""
        self._unchecked = 0
        self._held = False

    async def _record(
        self, verdict: Verdict, *, source: str, message_id: int, excerpt: str, original: str = ""
    ) -> None:
        try:
            await asyncio.shield(
                db_step(
                    recording.flag_record,
                    student_id=self.turn.student_id,
                    source=source,
                    verdict=verdict,
                    conversation_id=self.turn.conversation_id,
                    message_id=message_id,
                    excerpt=excerpt,
                    original_text=original,
                )
            )
        except Exception:
            logger.exception("message %s: the safety flag could not be recorded", message_id)

    async def _screen_line(self) -> list[BackendResult]:
        message_id, conversation_id = self.turn.message.pk, self.turn.conversation_id
        if not learned.enabled():  # the rules' result is known already: no thread, no statement
            return line.screen_stored(
                message_id=message_id, conversation_id=conversation_id, text=self.text, rules=self.offline, context=[]
            )
        try:
            # The context in a database step, the encoder off the database threads (llm.offload):
            # a turn waiting for the encoder holds no connection.
            context = await db_step(line.stored_context, message_id=message_id, conversation_id=conversation_id)
            return await offload(
                line.screen_stored,
                message_id=message_id,
                conversation_id=conversation_id,
                text=self.text,
                rules=self.offline,
                context=context,
            )
        except Exception:
            logger.exception("message %s: the learned screen failed; the rules alone", self.turn.message.pk)
            return [self.offline]

    async def _line(self, timeout: float | None = None) -> list[BackendResult]:
        """The offline line's results, or the rules alone if the learned screen is not done in
        `timeout` seconds."""
        done, _ = await asyncio.wait({self.line_task}, timeout=timeout)
        return self.line_task.result() if done else [self.offline]

    async def _screen_message(self) -> Verdict:
        offline_line = await self._line()
        first = combine(offline_line)
        if first.signals:
            await self._record(first, source=Flag.Source.MESSAGE, message_id=self.turn.message.pk, excerpt=self.text)
        try:
            results = await _screen_backends(self.text, purpose="message", student_id=self.turn.student_id)
        except Exception:
            logger.exception("message %s: the screening backends failed", self.turn.message.pk)
            results = []
        if not results:
            return first
        verdict = combine([*offline_line, *results])
        if verdict.signals:
            await self._record(verdict, source=Flag.Source.MESSAGE, message_id=self.turn.message.pk, excerpt=self.text)
        return verdict

    async def before_model(self) -> Notice | None:
        verdict = combine(await self._line(LINE_WAIT_SECONDS))
        if verdict.severity != Severity.CRISIS and settings.SAFETY_BACKENDS:
            done, _ = await asyncio.wait({self.message_task}, timeout=settings.SAFETY_TURN_WAIT_SECONDS)
            if self.message_task in done and self.message_task.exception() is None:
                verdict = self.message_task.result()
        if verdict.severity != Severity.CRISIS:
            return None
        try:
            resources = await db_step(resources_for, student_id=self.turn.student_id, language=self.language)
        except Exception:
            logger.exception("message %s: the class's safety resources could not be read", self.turn.message.pk)
            resources = []
        message = replies.CRISIS_MESSAGE[self.language]
        data = {"severity": Severity.CRISIS.value, "message": message, "resources": resources}
        return Notice(
            instructions=replies.CRISIS_INSTRUCTIONS[self.language],
            events=[ToolEvent(SAFETY, data, stored=True)],
            reply_suffix=replies.resources_text(resources, self.language),
            fallback_reply=message,
        )

    def shown(self, chunk: str) -> str | None:
        if self._held:
            return None
        if not settings.SAFETY_SCREEN_REPLIES:
            return chunk
        self._pending += chunk
        self._unchecked += len(chunk)
        ended = _SENTENCE_END.search(self._pending, max(0, len(self._pending) - len(chunk) - 4))
        if ended is None and self._unchecked < HOLD_EVERY_CHARS:
            return ""
        self._unchecked = 0
        if reply_fails(combine([offline.screen(self._shown_tail + self._pending)])):
            self._held = True
            return None
        cut = _show_upto(self._pending)
        shown, self._pending = self._pending[:cut], self._pending[cut:]
        self._shown_tail = (self._shown_tail + shown)[-HOLD_WINDOW_CHARS:]
        return shown

    def held_back(self) -> str:
        pending, self._pending = self._pending, ""
        return "" if self._held else pending

    async def check_reply(self, text: str) -> str | None:
        if not settings.SAFETY_SCREEN_REPLIES:
            return None
        results = [offline.screen(text)]
        try:
            results += await _screen_backends(text, purpose="reply", student_id=self.turn.student_id)
        except Exception:
            logger.exception("message %s: the screening backends failed on the reply", self.turn.message.pk)
        self.reply_verdict = combine(results)
        if self._held or reply_fails(self.reply_verdict):
            return replies.REPLACEMENT[self.language]
        return None

    async def reply_stored(self, reply: Message, original: str | None) -> None:
        verdict = self.reply_verdict
        if original is None or verdict is None:
            return
        if not verdict.signals:  # held while streaming on a window the whole text then passed
            verdict = combine([offline.screen(original)])
        if verdict.signals:
            await self._record(
                verdict, source=Flag.Source.REPLY, message_id=reply.pk, excerpt=original, original=original
            )


def _show_upto(text: str) -> int:
    """Where screened `text` may be shown up to: after its last sentence end, else (a run longer
    than HOLD_MAX_CHARS) after its last space, else nowhere yet."""
    ends = [m.end() for m in _SENTENCE_END.finditer(text)]
    if ends:
        return ends[-1]
    if len(text) > HOLD_MAX_CHARS:
        return text.rfind(" ") + 1
    return 0


class SafetyGuard(Guard):
    def begin(self, turn: ScreenTurn) -> TurnScreen:
        return _Screen(turn)
