"""The turn's feed: the events a client sees of one turn, kept from the start so that a late
follower (a retry during the turn) sees them all, in order:

    message         the stored student message            (first)
    delta           {"content": "..."}, a piece of the reply, screened, as the model writes it
    <tool>          the events of the tools the model called (llm.tools.ToolEvent), e.g. `memory`
                    (a note saved with save_memory) and `quiz` (a quiz made with create_quiz), and
                    of screening (`safety`, `reply_replaced`); a replay sends again those marked
                    `stored`
    done            the stored tutor message, with "replayed"
    error           the error envelope, with retry_safe
"""

from __future__ import annotations

import time
from typing import Any

from conversations.models import Message
from conversations.serializers import MessageOutput
from conversations.turn.claim import Replay
from core.drain import DRAIN_RETRY_AFTER_SECONDS
from core.errors import ServiceUnavailable
from core.feeds import Event, EventFeed
from llm.tools import ToolEvent

# The events of every turn; the others are its tools' and screening's (`TurnFeed.extra_events`).
TURN_EVENTS = frozenset({"message", "delta", "done", "error"})


class ServerShuttingDown(ServiceUnavailable):
    """The server is stopping (tutor.server.Drain); the same code as its refusals."""

    code = "server_shutting_down"
    retry_safe = True
    retry_after = DRAIN_RETRY_AFTER_SECONDS


_message_output: MessageOutput | None = None


def message_data(message: Message) -> dict[str, Any]:
    """`MessageOutput(message).data`, from one serializer built once (building a serializer's
    fields costs more than showing a message with them)."""
    global _message_output
    if _message_output is None:
        _message_output = MessageOutput()
    return dict(_message_output.to_representation(message))


class TurnFeed(EventFeed):
    """The events of one turn, kept from the start so that a late follower sees them all."""

    def __init__(self) -> None:
        super().__init__()
        self.replayed = False
        self.student_message: Message | None = None
        self.reply: Message | None = None
        # The tools' events sent in this turn, and those of them a replay sends again.
        self.tool_events: list[Event] = []
        self.stored_events: list[Event] = []
        # When the turn was claimed, and whether its first token has come (core.metrics).
        self.opened_at = time.monotonic()
        self.first_token_seen = False

    def start(self, student_message: Message) -> None:
        self.student_message = student_message
        self.publish("message", message_data(student_message))

    def add_tool_event(self, event: ToolEvent) -> None:
        """An event of one of this turn's tools, sent once: the same event again (a repeated
        call the tool answered with what it made the first time) is not sent twice."""
        item = (event.name, event.data)
        if item not in self.tool_events:
            self.tool_events.append(item)
            if event.stored:
                self.stored_events.append(item)
            self.publish(event.name, event.data)

    def tool_data(self, name: str) -> list[dict[str, Any]]:
        """The data of this turn's tool events named `name`, in order."""
        return [data for event, data in self.tool_events if event == name]

    def finish(self, reply: Message) -> None:
        self.reply = reply
        self.publish("done", {**message_data(reply), "replayed": self.replayed})
        self.close()

    def extra_events(self) -> list[dict[str, Any]]:
        """Every event of the turn's tools and screening, in the order the stream sent them, as
        the JSON answer carries them: {"event": name, "data": data}."""
        return [{"event": name, "data": data} for name, data in self.events if name not in TURN_EVENTS]

    @classmethod
    def replay(cls, stored: Replay, *, replayed: bool = True) -> TurnFeed:
        """A feed of a reply already stored; `replayed` is False for a client that waited for it."""
        feed = cls()
        feed.replayed = replayed
        feed.start(stored.student_message)
        for name, data in stored.events:
            feed.add_tool_event(ToolEvent(name, data))
        feed.publish("delta", {"content": stored.reply.content})
        feed.finish(stored.reply)
        return feed
