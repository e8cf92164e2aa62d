"""The student card's prompt block (llm.prompt_blocks): the card at the top of the tutor's
prompt, before the memories, whatever the window. Registered in MemoryConfig.ready().

The card is bounded on write (memory.card: MEMORY_CARD_MAX_TOKENS), so the block is KEEP: it is
built whole on every turn, however small the window or long the conversation (the history is
what gives way). An empty card adds nothing, and so does the card of a student without consent
to memory.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from django.conf import settings
from django.db.models import Exists

from llm.prompt_blocks import BaseBlock, Give, Need, Part, PromptTurn
from memory.card_prompts import card_block, card_tokens
from memory.card_selectors import card_view
from memory.models import StudentCard

# Before the memories (20), after the system prompt (0).
CARD_POSITION = 10


class StudentCardBlock(BaseBlock):
    name = "student_card"
    position = CARD_POSITION
    give = Give.KEEP

    def need(self, turn: PromptTurn) -> Need:
        return Need(share=Fraction(1), cap=settings.MEMORY_CARD_MAX_TOKENS)

    def presence(self, *, student_id: Any) -> list[Any]:
        """A card, of a student with consent to memory: without it the card stays out of the
        prompt, whoever wrote it (docs/privacy.md#consent-to-memory)."""
        return [Exists(StudentCard.objects.filter(student_id=student_id, student__memory_consent=True))]

    def build(self, turn: PromptTurn, budget: int) -> Part:
        if self.name in turn.absent:
            return Part()
        card = StudentCard.objects.filter(student_id=turn.student_id, student__memory_consent=True).first()
        if card is None:
            return Part()
        view = card_view(card)
        text = card_block(view, language=turn.language)
        if not text:
            return Part()
        return Part([{"role": "system", "content": text}], card_tokens(view, language=turn.language))
