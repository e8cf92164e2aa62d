"""The conversations app's prompt blocks (llm.prompt_blocks): the system prompt, the images the
student attached, and the history. Registered in ConversationsConfig.ready().

The conversation's files are read once per prompt by the turn (conversations.turn.prompt), into
`turn.files`: the learning record names them and shows their text (learning.blocks), the images
block shows the ready images.
"""

from __future__ import annotations

import logging

from django.conf import settings

from conversations import prompts
from conversations.context import Context
from learning.blocks import record_need
from llm.prompt_blocks import BaseBlock, Give, Need, Part, PromptTurn, TurnFile
from llm.tokens import message_tokens

logger = logging.getLogger(__name__)

# turn.data's key of the history built (conversations.turn.prompt builds it: it may compress).
HISTORY = "history"


class SystemBlock(BaseBlock):
    """The tutor's instructions. Its tokens (for the longest of its languages) and the tools'
    schemas are set aside before the blocks share the window (conversations.turn.window.Limits.fixed):
    it is never cut."""

    name = "system"
    position = 0
    give = Give.KEEP

    def build(self, turn: PromptTurn, budget: int) -> Part:
        return Part([{"role": "system", "content": prompts.system_prompt(language=turn.language, tools=turn.tools)}])


class ImagesBlock(BaseBlock):
    """The latest ready images, when the model takes images, within the learning record's
    budget (LLM_IMAGE_TOKENS each): the newest that fit."""

    name = "images"
    position = 40
    give = Give.SHRINK

    def need(self, turn: PromptTurn) -> Need:
        return record_need()

    def build(self, turn: PromptTurn, budget: int) -> Part:
        images, left_out = images_for_prompt(turn.files, budget=budget)
        if not images:
            return Part(left_out=left_out)
        message = prompts.images_message(images)
        return Part([message], message_tokens(message), left_out=left_out)


def images_for_prompt(files: list[TurnFile], *, budget: int) -> tuple[list[prompts.ImageItem], int]:
    """The latest LLM_MAX_IMAGES ready images as data URLs, when the model accepts images, as
    many as fit `budget` (LLM_IMAGE_TOKENS each), and how many of those were left out. An image
    the storage cannot give is left out."""
    if not settings.LLM_SUPPORTS_IMAGES:
        return [], 0
    ready = [f for f in files if f.image is not None][-settings.LLM_MAX_IMAGES :]
    fitting = ready[len(ready) - min(len(ready), budget // max(1, settings.LLM_IMAGE_TOKENS)) :]
    images = []
    for file in fitting:
        assert file.image is not None
        try:
            images.append(prompts.ImageItem(name=file.name, data_url=file.image()))
        except Exception:  # any storage backend's errors: the turn goes on without it
            logger.exception("file %s: image not read for the prompt", file.id)
    return images, len(ready) - len(images)


class HistoryBlock(BaseBlock):
    """The conversation so far: what the other blocks leave, compressed past the threshold
    (conversations.context). The turn builds it (compressing may call the summary model, off
    the database steps) and puts its Context in `turn.data[HISTORY]`."""

    name = "history"
    position = 90
    give = Give.SHRINK

    def need(self, turn: PromptTurn) -> Need:
        return Need(remainder=True)

    def build(self, turn: PromptTurn, budget: int) -> Part:
        context: Context = turn.data[HISTORY]
        return Part(
            prompts.history_messages(
                context.history,
                checkpoint_summary=context.checkpoint_summary,
                checkpoint_covered=context.checkpoint_covered,
                omitted=context.omitted,
            ),
            left_out=context.omitted,
        )
