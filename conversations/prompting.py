"""The chat turn's prompt, built from the registered blocks (llm.prompt_blocks), asynchronously:
database reads and writes in database steps (core.db.db_step), slow calls awaited between them
on their own threads (llm.offload), never inside a step.

1. Each block's `prepare` (memory: the query's embedding, after a read of its topic text).
2. One database step (turns.turn_prompt_draft): the conversation's files, every block but the
   history within its share of the window (prompt_blocks.allocate), then the history's
   compression decision.
3. If the history needs a summary: the summary model (context.compression_summary), then one
   database step that stores the checkpoint and reads the history (context.context_compressed).
"""

from __future__ import annotations

import asyncio

from conversations import context, turns
from conversations.blocks import HISTORY
from core.db import db_step
from llm import prompt_blocks
from llm.offload import offload


async def turn_prompt(claim: turns.Claimed) -> turns.Claimed:
    """The claimed turn with its prompt. On any failure the lease is released; a database error
    is DatabaseUnavailable (the student's message is stored: a retry is safe)."""
    try:
        return await _build(claim)
    except BaseException as exc:
        await asyncio.shield(db_step(turns._release_quietly, conversation_id=claim.conversation_id, token=claim.token))
        if isinstance(exc, turns.DATABASE_ERRORS):
            raise turns.turn_database_unavailable(claim) from exc
        raise


async def turn_reprompt(
    *, claim: turns.Claimed, sent_tokens: int, window: int | None, requested: int | None = None
) -> turns.Claimed:
    """The prompt again after the server refused it as longer than its window, for the window
    learned (turns.turn_reprompt). Raises MessageTooLong if the message alone cannot fit it."""
    claim = await db_step(turns.turn_reprompt, claim=claim, sent_tokens=sent_tokens, window=window, requested=requested)
    return await _build(claim)


async def _build(claim: turns.Claimed) -> turns.Claimed:
    blocks = prompt_blocks.registered()
    turn = turns.prompt_turn(claim)
    for block in blocks:
        await block.prepare(turn)
    draft = await db_step(turns.turn_prompt_draft, claim=claim, turn=turn, blocks=blocks)
    built = draft.context
    if built.compression is not None:
        summary = await offload(context.compression_summary, built.compression)
        built = await db_step(context.context_compressed, built.compression, summary)
    turn.data[HISTORY] = built
    return turns.prompt_claimed(claim, turn, blocks, draft.allocation)
