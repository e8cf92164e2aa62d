"""The conversations app's prompt blocks (llm.prompt_blocks): the system prompt, the images the
student attached, and the history. Registered in ConversationsConfig.ready().

The conversation's files are loaded once per prompt by the turn (conversations.turns), into
`turn.data`: as `FileItem`s for the learning record, which names them and shows their text
(learning.blocks), and as `PromptFile`s for the images block.
"""

from __future__ import annotations

from conversations import prompts
from conversations.context import Context
from learning.blocks import record_need
from llm.prompt_blocks import BaseBlock, Give, Need, Part, PromptTurn
from llm.tokens import message_tokens

# turn.data's keys: the conversation's files (conversations.files.PromptFile), the history built.
PROMPT_FILES = "prompt_files"
HISTORY = "history"


class SystemBlock(BaseBlock):
    """The tutor's instructions. Its tokens (for the longest of its languages) and the tools'
    schemas are set aside before the blocks share the window (turns.Limits.fixed): it is
    never cut."""

    name = "system"
    position = 0
    give = Give.KEEP

    def build(self, turn: PromptTurn, budget: int) -> Part:
        from conversations.turns import turn_system_prompt

        return Part([{"role": "system", "content": turn_system_prompt(language=turn.language, tools=turn.tools)}])


class ImagesBlock(BaseBlock):
    """The latest ready images, when the model takes images, within the learning record's
    budget (LLM_IMAGE_TOKENS each): the newest that fit."""

    name = "images"
    position = 40
    give = Give.SHRINK

    def need(self, turn: PromptTurn) -> Need:
        return record_need()

    def build(self, turn: PromptTurn, budget: int) -> Part:
        from conversations.turns import images_for_prompt

        images, left_out = images_for_prompt(turn.data.get(PROMPT_FILES, []), budget=budget)
        if not images:
            return Part(left_out=left_out)
        message = prompts.images_message(images)
        return Part([message], message_tokens(message), left_out=left_out)


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
