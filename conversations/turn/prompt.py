"""The turn's prompt, built from the registered blocks (llm.prompt_blocks) after the claim's
commit: database reads and writes in database steps (core.db.db_step), slow calls awaited
between them on their own threads (llm.offload), never inside a step.

1. Each block's `prepare` (memory: the query's embedding, after a read of its topic text).
2. One database step (`turn_prompt_draft`): the conversation's files, every block but the
   history within its share of the window (prompt_blocks.allocate), then the history's
   compression decision. When no block has anything to prepare for the turn
   (prompt_blocks.synchronous), 1 is skipped and 2 runs in the claim's own step
   (`draft_with_claim`): one thread hand-off for both.
3. If the history needs a summary: the summary model (context.compression_summary), then one
   database step that stores the checkpoint and reads the history (context.context_compressed).

The blocks are named nowhere here: each reports what it showed (`shown`, the reply's access
log) and what its presence check found (`PromptTurn.absent`) through its own hooks.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from functools import partial

from django.conf import settings

from conversations import context
from conversations.blocks import HISTORY
from conversations.context import Context, context_build
from conversations.files import PromptFile, files_for_prompt, image_data_url
from conversations.models import Conversation, ConversationFile
from conversations.turn.claim import Claimed, release_quietly, turn_database_unavailable
from conversations.turn.window import MessageTooLong, check_fits, turn_limits, window_learn
from core.db import db_step
from core.errors import DATABASE_ERRORS
from llm import prompt_blocks
from llm.offload import offload


def prompt_turn(claim: Claimed) -> prompt_blocks.PromptTurn:
    """What the prompt's blocks know of this turn (no database access: the claim has it all)."""
    conversation, limits = claim.conversation, claim.limits
    if conversation is None or limits is None:
        raise ValueError("a claim from turn_begin or claim_for_window (with its conversation and limits) is needed")
    return prompt_blocks.PromptTurn(
        student_id=conversation.student_id,
        conversation_id=conversation.pk,
        message=claim.student_message.content,
        language=conversation.student.language,
        available=limits.available,
        tools=limits.tools,
        absent=claim.absent,
    )


@dataclass(frozen=True)
class Draft:
    allocation: prompt_blocks.Allocation  # every block but the history, built
    context: Context  # the history, or the compression it needs first (context.Compression)


def turn_prompt_draft(
    *, claim: Claimed, turn: prompt_blocks.PromptTurn, blocks: list[prompt_blocks.PromptBlock]
) -> Draft:
    """The database step of the prompt: the conversation's files, the
    blocks (after their `prepare`) within what the window leaves, then the history in what they
    leave, or the compression it needs first (its summary is not written here)."""
    conversation, limits = claim.conversation, claim.limits
    assert conversation is not None and limits is not None
    files = files_for_prompt(conversation_id=conversation.pk, include_unready=True) if claim.has_files else []
    turn.files = [_turn_file(f) for f in files]
    allocation = prompt_blocks.allocate(blocks, turn)
    context = context_build(
        conversation=conversation,
        upto_seq=claim.student_message.seq,
        fixed_tokens=limits.fixed + allocation.used,
        threshold=min(settings.COMPRESSION_THRESHOLD_TOKENS, limits.prompt),
        capacity=limits.prompt,
        summarise=False,
        checkpointed=claim.has_checkpoint,
    )
    return Draft(allocation, context)


@dataclass(frozen=True)
class Drafted:
    """The prompt's database step, run in the claim's (`draft_with_claim`): its draft, or its error."""

    turn: prompt_blocks.PromptTurn | None
    blocks: list[prompt_blocks.PromptBlock]
    draft: Draft | None
    error: Exception | None = None


def draft_with_claim(claim: Claimed) -> Drafted | None:
    """In the claim's database step, right after the claim: the prompt's step (`turn_prompt_draft`)
    when no block has anything to prepare for this turn; None when one has (or the turn is past
    its budget). An error is kept for `turn_prompt`, which answers for it as for its own step's
    (the lease released; a database error says the message is stored)."""
    if claim.over_budget is not None:
        return None
    blocks = prompt_blocks.registered()
    try:
        turn = prompt_turn(claim)
        if not prompt_blocks.synchronous(blocks, turn):
            return None
        return Drafted(turn, blocks, turn_prompt_draft(claim=claim, turn=turn, blocks=blocks))
    except Exception as exc:
        return Drafted(None, blocks, None, exc)


def prompt_claimed(
    claim: Claimed,
    turn: prompt_blocks.PromptTurn,
    blocks: list[prompt_blocks.PromptBlock],
    allocation: prompt_blocks.Allocation,
) -> Claimed:
    """The claim with its prompt: every block's messages in position order, the history's
    (built from `turn.data[HISTORY]`) included."""
    limits = claim.limits
    assert limits is not None
    parts = dict(allocation.parts)
    for block in blocks:
        if block.need(turn).remainder:
            parts[block.name] = block.build(turn, allocation.remaining)
    return replace(
        claim,
        messages=prompt_blocks.assemble(blocks, parts),
        max_tokens=limits.window - limits.prompt,
        tools=limits.tools,
        shown=[row for block in blocks for row in prompt_blocks.shown_by(block, parts.get(block.name))],
    )


def _turn_file(file: PromptFile) -> prompt_blocks.TurnFile:
    """A file as the prompt's blocks show it, saying what the tutor can and cannot read; a ready
    image, when the model takes images, with the reader of its data URL."""
    kind = "image" if file.is_image else "PDF" if file.content_type == "application/pdf" else "text"
    note = ""
    image = None
    if file.status == ConversationFile.Status.PENDING:
        note = "still being read: its text is not available yet"
    elif file.status == ConversationFile.Status.UNREADABLE:
        note = f"unreadable ({file.reason.replace('_', ' ')})" if file.reason else "unreadable"
    elif file.is_image:
        note = "shown to you as an image" if settings.LLM_SUPPORTS_IMAGES else "you cannot see images: ask the student"
        image = partial(image_data_url, file) if settings.LLM_SUPPORTS_IMAGES else None
    elif file.text_truncated:
        note = "only the beginning of a long file was read"
    return prompt_blocks.TurnFile(
        id=file.id, name=file.name, kind=kind, pages=file.pages, text=file.text, note=note, image=image
    )


def claim_for_window(*, claim: Claimed, sent_tokens: int, window: int | None, requested: int | None = None) -> Claimed:
    """The claim again, for a prompt rebuilt after the server refused the last one as longer than
    its window: the window learned (window.window_learn) and the conversation read again. Raises
    MessageTooLong if the student's message alone cannot fit that window."""
    window_learn(sent_tokens=sent_tokens, window=window, requested=requested)
    # The window is known now: a message that cannot fit it on its own is refused (it stays
    # stored, as every message the student sent; a retry is refused the same way, up front).
    try:
        check_fits(claim.student_message.content)
    except MessageTooLong as exc:
        exc.details["student_message_id"] = claim.student_message.pk
        raise
    conversation = Conversation.objects.select_related("student").get(pk=claim.conversation_id)
    # The first prompt of the turn may have written a checkpoint: read it.
    return replace(claim, conversation=conversation, limits=turn_limits(absent=claim.absent), has_checkpoint=True)


async def turn_prompt(claim: Claimed, drafted: Drafted | None = None) -> Claimed:
    """The claimed turn with its prompt (its database step done already if `drafted`). On any
    failure the lease is released; a database error is DatabaseUnavailable (the student's message
    is stored: a retry is safe)."""
    try:
        return await _build(claim, drafted)
    except BaseException as exc:
        await asyncio.shield(db_step(release_quietly, conversation_id=claim.conversation_id, token=claim.token))
        if isinstance(exc, DATABASE_ERRORS):
            raise turn_database_unavailable(claim) from exc
        raise


async def turn_reprompt(
    *, claim: Claimed, sent_tokens: int, window: int | None, requested: int | None = None
) -> Claimed:
    """The prompt again after the server refused it as longer than its window, for the window
    learned (`claim_for_window`). Raises MessageTooLong if the message alone cannot fit it."""
    claim = await db_step(claim_for_window, claim=claim, sent_tokens=sent_tokens, window=window, requested=requested)
    return await _build(claim)


async def _build(claim: Claimed, drafted: Drafted | None = None) -> Claimed:
    if drafted is None:
        blocks = prompt_blocks.registered()
        turn = prompt_turn(claim)
        for block in blocks:
            await block.prepare(turn)
        draft = await db_step(turn_prompt_draft, claim=claim, turn=turn, blocks=blocks)
    else:
        if drafted.error is not None:
            raise drafted.error
        assert drafted.turn is not None and drafted.draft is not None
        blocks, turn, draft = drafted.blocks, drafted.turn, drafted.draft
    built = draft.context
    if built.compression is not None:
        summary = await offload(context.compression_summary, built.compression)
        built = await db_step(context.context_compressed, built.compression, summary)
    turn.data[HISTORY] = built
    return prompt_claimed(claim, turn, blocks, draft.allocation)
