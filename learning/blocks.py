"""The learning app's prompt block (llm.prompt_blocks): the student's learning record (open tasks,
weakest skills, latest results, the conversation's files), built, delimited and neutralised by
learning.prompts. Registered in LearningConfig.ready().

The conversation's files are the conversations app's: the turn gives them in `turn.files`. The
record's reads are skipped for a student with neither tasks nor skills (`presence`, read by the
turn's claim).
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Any

from django.conf import settings

from learning.prompts import FileItem, learning_record_block
from learning.selectors import learning_record_empty, learning_record_for, skills_exist, tasks_exist
from llm.prompt_blocks import BaseBlock, Give, Need, Part, PromptTurn
from llm.tokens import MESSAGE_OVERHEAD_TOKENS, count_tokens


def record_need() -> Need:
    """A quarter of what the window leaves, at most LEARNING_RECORD_TOKEN_BUDGET."""
    return Need(share=Fraction(1, 4), cap=settings.LEARNING_RECORD_TOKEN_BUDGET)


class LearningRecordBlock(BaseBlock):
    name = "learning_record"
    position = 30
    give = Give.SHRINK

    def need(self, turn: PromptTurn) -> Need:
        return record_need()

    def presence(self, *, student_id: Any) -> list[Any]:
        return [tasks_exist(student_id=student_id), skills_exist(student_id=student_id)]

    def build(self, turn: PromptTurn, budget: int) -> Part:
        if self.name in turn.absent:
            record = learning_record_empty()
        else:
            record = learning_record_for(student_id=turn.student_id)
        files = [
            FileItem(id=f.id, name=f.name, kind=f.kind, pages=f.pages, text=f.text, note=f.note) for f in turn.files
        ]
        record = replace(record, files=files)
        text = learning_record_block(record, budget_tokens=budget)
        if not text:
            return Part()
        return Part([{"role": "system", "content": text}], count_tokens(text) + MESSAGE_OVERHEAD_TOKENS)
