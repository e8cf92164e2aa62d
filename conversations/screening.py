"""Screening of the chat turn as a plug-in: what a student writes and what the tutor answers,
looked at by an app that registers a `Guard` (today `safety`), which the turn knows only
through this interface.

A turn with a guard runs:

1. `guard.begin(turn)` right after the student's message is stored: the guard starts its work
   (a fast first look, then slower backends) in its own tasks, concurrently with the prompt's
   assembly and recall. It must return at once.
2. `screen.before_model()`, once the prompt is built: what the screening found so far, waiting
   at most as long as the guard chooses. A `Notice` adds instructions at the end of the prompt
   (this turn only), sends its events to the client before the reply, and gives a reply to
   store if the model cannot answer.
3. `screen.shown(chunk)` for each chunk of the reply as it streams: the text that may reach the
   client now, screened (the guard holds back what it has not screened yet: a short buffer), or
   None once the reply is withheld: nothing more is forwarded (the rest of the reply is still
   read and checked). Nothing a screen would refuse is ever sent.
4. `screen.check_reply(text)`, the whole reply: a replacement text, or None. A replaced reply is
   stored as the replacement; the client gets a `reply_replaced` event then `done` with it. A
   reply that passes gets what was held back (`screen.held_back()`) as its last delta.
5. `screen.reply_stored(reply, original)`, after the reply is stored: its own bookkeeping, in
   the background (the turn does not wait for it).

Every method must not raise for a backend that fails: screening never fails a turn. Without a
registered guard a turn runs as if nothing were found.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rest_framework import serializers

from core.registry import Registry
from llm.tools import ToolEvent, ToolEventType

if TYPE_CHECKING:
    from conversations.models import Message


@dataclass(frozen=True)
class ScreenTurn:
    """The turn being screened: whose, where, and the student's stored message."""

    student_id: int
    conversation_id: int
    message: Message
    language: str


@dataclass
class Notice:
    """What screening asks of a turn before the model is called.

    - `instructions`: a system message added at the end of the prompt, for this turn only.
    - `events`: sent to the client before the reply (and again on a replay, if `stored`).
    - `reply_suffix`: added to the end of the reply when it is stored (e.g. the resources).
    - `fallback_reply`: stored as the reply if the model cannot answer, instead of an error.
    """

    instructions: str = ""
    events: list[ToolEvent] = field(default_factory=list)
    reply_suffix: str = ""
    fallback_reply: str = ""


class TurnScreen(ABC):
    """One turn's screening, made by `Guard.begin`."""

    @abstractmethod
    async def before_model(self) -> Notice | None: ...

    def shown(self, chunk: str) -> str | None:
        """What of the reply may reach the client now, `chunk` its newest piece: that piece and
        what was held back before it once they are screened, "" while they are not, None once
        the reply is withheld."""
        return chunk

    def held_back(self) -> str:
        """The streamed text not shown yet, given once the whole reply passed (`check_reply`)."""
        return ""

    async def check_reply(self, text: str) -> str | None:
        """The replacement for a reply that fails screening, or None to store it as written."""
        return None

    async def reply_stored(self, reply: Message, original: str | None) -> None:
        """After the reply (`original`: the withheld text, if it was replaced) is stored."""
        return None

    def cancel(self) -> None:
        """The turn ended before its reply (an error): stop what is not needed any more. The
        student message's own screening goes on."""
        return None


class Guard(ABC):
    """Registered once (`register`). Its notices send the events of EVENT_TYPES (a `safety`
    event's data is a SafetyNoticeData)."""

    @abstractmethod
    def begin(self, turn: ScreenTurn) -> TurnScreen: ...


class _Unscreened(TurnScreen):
    async def before_model(self) -> Notice | None:
        return None


class ResourceData(serializers.Serializer[None]):
    name = serializers.CharField()
    phone = serializers.CharField(allow_blank=True)
    url = serializers.CharField(allow_blank=True)
    text = serializers.CharField(allow_blank=True)


class SafetyNoticeData(serializers.Serializer[None]):
    """What a client shows prominently when screening found a student in crisis: a short
    message and where to find help now, in the student's language."""

    severity = serializers.ChoiceField(choices=["crisis"])
    message = serializers.CharField()
    resources = ResourceData(many=True)


class ReplacedData(serializers.Serializer[None]):
    content = serializers.CharField(help_text="The reply to show instead of what was streamed.")


# The event that carries a SafetyNoticeData, and the one sent when a reply was withheld.
SAFETY = "safety"
REPLY_REPLACED = "reply_replaced"
EVENT_TYPES = (
    ToolEventType(
        SAFETY, SafetyNoticeData(), "The student may be in crisis: show this message and these resources prominently."
    ),
    ToolEventType(
        REPLY_REPLACED,
        ReplacedData(),
        "The reply streamed so far failed screening: show `content` instead (the stored reply).",
    ),
)

# One guard screens a turn: the registry's one slot.
_GUARD = "guard"
_registry: Registry[Guard] = Registry("screening guard", key=lambda guard: _GUARD, replace="any")


def register(guard: Guard) -> None:
    """Make `guard` the turn's screening (registering again replaces it)."""
    _registry.register(guard)


def unregister() -> None:
    _registry.unregister(_GUARD)


def registered() -> Guard | None:
    return _registry.get(_GUARD)


def begin(turn: ScreenTurn) -> TurnScreen:
    """The turn's screening, started; a turn with no guard gets one that finds nothing."""
    guard = registered()
    return guard.begin(turn) if guard is not None else _Unscreened()


def event_types() -> list[ToolEventType]:
    """The events screening may send in a turn, for the schema (whether a guard is registered
    or not: the API's shape does not depend on the settings)."""
    return list(EVENT_TYPES)
