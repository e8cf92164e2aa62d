"""The offline line on a stored student message: its context read (the student's previous
messages in the conversation, safety.selectors.message_context), then the rules and the learned
screen (safety.learned.screen_message). The chat turn's guard and the sweep both screen a
message this way, so that a message the sweep catches is judged as its turn would have. The
guard reads the context in a database step (`stored_context`) and screens off the database
threads, holding no connection while the encoder runs."""

from __future__ import annotations

from collections.abc import Sequence

from safety import learned, offline
from safety.selectors import message_context
from safety.types import BackendResult


def stored_context(*, message_id: int, conversation_id: int) -> list[str]:
    """What the learned screen reads message `message_id` after (nothing when it is off)."""
    size = learned.context_size()
    if not size:
        return []
    return message_context(conversation_id=conversation_id, before_id=message_id, size=size)


def screen_stored(
    *,
    message_id: int,
    conversation_id: int,
    text: str,
    rules: BackendResult | None = None,
    context: Sequence[str] | None = None,
) -> list[BackendResult]:
    """The line's results on message `message_id` (`rules`: the rules' result if already known;
    `context`: its `message_context` if already read, as the sweep reads a batch's at once).
    Reads the database when the learned screen is on and `context` is not given; never raises
    for the screen itself."""
    rules = rules if rules is not None else offline.screen(text)
    if context is None:
        context = stored_context(message_id=message_id, conversation_id=conversation_id)
    elif not learned.context_size():
        context = []
    return learned.screen_message(text, context, rules)
