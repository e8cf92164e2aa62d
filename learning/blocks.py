"""The learning app's prompt block (llm.prompt_blocks): the student's learning record (open tasks,
weakest skills, latest results, the conversation's files), built, delimited and neutralised by
learning.prompts. Registered in LearningConfig.ready().

The conversation's files are the conversations app's: the turn puts them, as `FileItem`s, in
`turn.data[FILES]` before the blocks are built.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from django.conf import settings

from learning.prompts import learning_record_block
from learning.selectors import learning_record_empty, learning_record_for
from llm.prompt_blocks import BaseBlock, Give, Need, Part, PromptTurn
from llm.tokens import MESSAGE_OVERHEAD_TOKENS, count_tokens

# turn.data's key for the conversation's files, as learning.prompts.FileItem.
FILES = "files"
# turn.data's key for whether the student may have learning data (learning.selectors.tasks_exist
# or skills_exist, read by the turn's claim): False skips the record's queries. Absent: True.
HAS_LEARNING_DATA = "has_learning_data"


def record_need() -> Need:
    """A quarter of what the window leaves, at most LEARNING_RECORD_TOKEN_BUDGET."""
    return Need(share=Fraction(1, 4), cap=settings.LEARNING_RECORD_TOKEN_BUDGET)


class LearningRecordBlock(BaseBlock):
    name = "learning_record"
    position = 30
    give = Give.SHRINK

    def need(self, turn: PromptTurn) -> Need:
        return record_need()

    def build(self, turn: PromptTurn, budget: int) -> Part:
        if turn.data.get(HAS_LEARNING_DATA, True):
            record = learning_record_for(student_id=turn.student_id)
        else:
            record = learning_record_empty()
        record = replace(record, files=list(turn.data.get(FILES, [])))
        text = learning_record_block(record, budget_tokens=budget)
        if not text:
            return Part()
        return Part([{"role": "system", "content": text}], count_tokens(text) + MESSAGE_OVERHEAD_TOKENS)
