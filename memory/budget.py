"""The memory block's token budget: which memories fit, counted from their stored token counts
(no re-tokenising on the chat turn). The block's text is memory.block."""

from __future__ import annotations

from functools import lru_cache

from llm.tokens import count_tokens
from memory.block import MEMORY_BLOCK_CLOSE, MEMORY_BLOCK_OPEN, MEMORY_PREAMBLE, format_memory, memory_item
from memory.models import AIMemory

# Tokens that format_memory adds around a memory's stored "title\ncontent" count: the <memory>
# element, its date and source label, the conversation id. An upper bound, checked in the tests
# for every source, so the block never overruns its budget.
MEMORY_FORMAT_OVERHEAD_TOKENS = 30
# What a fact's or an approach's provenance adds (confidence, up to three evidence ids, outcomes).
PROVENANCE_OVERHEAD_TOKENS = 32


def memory_block_cost(memory: AIMemory) -> int:
    """Tokens this memory adds to the block, from its stored count (no re-tokenising)."""
    if memory.token_count:
        provenance = PROVENANCE_OVERHEAD_TOKENS if memory.kind in ("fact", "approach") else 0
        return memory.token_count + MEMORY_FORMAT_OVERHEAD_TOKENS + provenance + 1  # +1: the joining newline
    return count_tokens(format_memory(memory_item(memory))) + 1


@lru_cache(maxsize=1)
def memory_block_frame_tokens() -> int:
    """Tokens of the block without its memories: the delimiters and the preamble."""
    return count_tokens("\n".join([MEMORY_BLOCK_OPEN, MEMORY_PREAMBLE, MEMORY_BLOCK_CLOSE]))


def memory_block_tokens(memories: list[AIMemory]) -> int:
    """An upper bound of the memory block's tokens, from the memories' stored counts."""
    if not memories:
        return 0
    return memory_block_frame_tokens() + sum(memory_block_cost(m) for m in memories)


def fit_memory_budget(
    memories: list[AIMemory], *, budget: int, skip_larger: bool = True, frame: bool = True
) -> list[AIMemory]:
    """The memories, in priority order, that fit a memory block of at most `budget` tokens.

    A memory that does not fit is skipped and smaller ones after it may still go in, unless
    `skip_larger` is False: then the first that does not fit ends the list (the newest are kept).
    Returned newest first, the order the block shows them in. Each memory is counted as it will
    be formatted (with its date and source) from its stored token count, plus the block's frame
    unless `frame` is False (memories added to a block counted already).
    """
    used = memory_block_frame_tokens() if frame else 0
    chosen = []
    for memory in memories:
        cost = memory_block_cost(memory)
        if used + cost <= budget:
            chosen.append(memory)
            used += cost
        elif not skip_larger:
            break
    return sorted(chosen, key=lambda m: (m.created_at, m.pk), reverse=True)
