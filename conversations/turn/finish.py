"""The turn's finish, its last database step: the reply stored with the turn's usage rows and
access log (what the tutor knew: the memories its prompt showed) and the lease released,
atomically (on PostgreSQL one statement); or, for a failed turn, its usage stored and the lease
released (`turn_abandon`): the student's message stays.
"""

from __future__ import annotations

import json
import logging
from contextlib import nullcontext
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone

from conversations.models import Conversation, Message, ReplyMemory
from conversations.turn.claim import Claimed, release, sql_named
from core.db import server_cursor
from llm import costs
from llm.models import LLMUsage
from llm.tokens import count_tokens
from memory.models import AIMemory

logger = logging.getLogger(__name__)


def turn_finish(
    *,
    claim: Claimed,
    content: str,
    prompt_tokens: int,
    completion_tokens: int,
    model: str,
    usage: list[LLMUsage],
    events: list[tuple[str, dict[str, Any]]] | None = None,
) -> Message:
    """Store the reply with the turn's usage rows and access log and release the lease,
    atomically: on PostgreSQL one statement (one round trip, no transaction around it), else one
    transaction. `events`: its tools' events a replay gives back (ToolEvent.stored), (name, data)
    in order.

    The reply is stored even if the conversation was ended meanwhile (its summary waits for the
    lease, see conversations.summaries) or the lease expired and was taken over (the lease is
    released only if it is still ours): a reply is never lost, and `reply_to` being unique, a
    message never gets two; a message answered meanwhile by another turn keeps that reply, which
    is returned, and this turn's usage is still stored.
    """
    reply = Message(
        conversation_id=claim.conversation_id,
        role=Message.Role.TUTOR,
        content=content,
        token_count=count_tokens(content),
        reply_to=claim.student_message,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        model=model,
        tool_events=[{"event": name, "data": data} for name, data in events or []],
        created_at=timezone.now(),
    )
    try:
        if connection.vendor == "postgresql":
            # A savepoint only inside a caller's transaction (tests): alone, the statement is atomic.
            with transaction.atomic() if connection.in_atomic_block else nullcontext():
                reply = _finish_statement(claim=claim, reply=reply, usage=usage)
        else:
            with transaction.atomic():
                reply.seq = _reply_seq(claim=claim, tokens=reply.token_count, now=reply.created_at)
                reply.save(force_insert=True)
                LLMUsage.objects.bulk_create(usage)
                _access_log_append(reply, claim.shown)
        # After the usage is stored: the hold no longer stands for spend to come.
        costs.budget_release(hold_id=claim.budget_hold)
        return reply
    except IntegrityError:
        with transaction.atomic():
            answered = Message.objects.filter(reply_to=claim.student_message).first()
            if answered is None:
                raise
            LLMUsage.objects.bulk_create(usage)
            release(conversation_id=claim.conversation_id, token=claim.token)
            costs.budget_release(hold_id=claim.budget_hold)
        logger.warning("conversation %s: message %s was answered by another turn", claim.conversation_id, answered.pk)
        return answered


def _reply_seq(*, claim: Claimed, tokens: int, now: Any) -> int:
    """The conversation's UPDATE for a reply of `tokens`: its running totals moved and the lease
    released if it is still ours, its row locked; returns the reply's `seq`."""
    stamp = connection.ops.adapt_datetimefield_value(now)
    token = claim.token
    with connection.cursor() as cursor:
        cursor.execute(sql_named(_REPLY_SEQ_SQL), [tokens, stamp, token, token, token, claim.conversation_id])
        row = cursor.fetchone()
    if row is None:
        raise Conversation.DoesNotExist(f"conversation {claim.conversation_id} is gone")
    return int(row[0])


def _finish_statement(*, claim: Claimed, reply: Message, usage: list[LLMUsage]) -> Message:
    """PostgreSQL: the conversation's UPDATE, the reply's INSERT, the usage rows, the access log
    and the memories' counters, as one statement. Raises IntegrityError (nothing written) if the
    student message has a reply already."""
    token = claim.token
    statement, usage_rows = _finish_sql(), _recordset(usage)
    tool_events = Message._meta.get_field("tool_events")
    params: list[Any] = [
        reply.token_count,
        reply.created_at,
        token,
        token,
        token,
        claim.conversation_id,
        claim.conversation_id,
        reply.role,
        reply.content,
        claim.student_message.pk,
        reply.token_count,
        reply.prompt_tokens,
        reply.completion_tokens,
        reply.model,
        json.dumps(reply.tool_events, cls=tool_events.encoder),
        reply.created_at,
        usage_rows,
        _access_rows(claim.shown),
        reply.created_at,
    ]
    with server_cursor() as cursor:
        cursor.execute(statement, params)
        row = cursor.fetchone()
    if row is None:
        raise Conversation.DoesNotExist(f"conversation {claim.conversation_id} is gone")
    reply.pk, reply.seq = row
    reply._state.adding = False
    reply._state.db = connection.alias
    return reply


_finish_statements: dict[str, str] = {}


def _finish_sql() -> str:
    """The finish statement, its names quoted and the usage rows' columns written in, once per
    database alias."""
    statement = _finish_statements.get(connection.alias)
    if statement is None:
        fields = _usage_fields()
        q = connection.ops.quote_name
        statement = (
            sql_named(_FINISH_SQL.replace("<reply_seq>", _REPLY_SEQ_SQL))
            .replace("<usage_columns>", ", ".join(q(f.column) for f in fields))
            .replace("<usage_types>", ", ".join(f"{q(f.column)} {f.db_type(connection)}" for f in fields))
        )
        _finish_statements[connection.alias] = statement
    return statement


def _usage_fields() -> list[Any]:
    return [f for f in LLMUsage._meta.concrete_fields if not f.primary_key]


def _recordset(rows: list[LLMUsage]) -> str:
    """New usage rows for the finish statement's INSERT ... SELECT FROM jsonb_to_recordset
    (PostgreSQL), as a JSON array."""
    fields = _usage_fields()
    values = [{f.column: f.get_db_prep_save(f.pre_save(row, True), connection) for f in fields} for row in rows]
    return json.dumps(values, default=str)


def _access_rows(shown: list[tuple[int, dict[str, Any]]]) -> str:
    """The access log's rows of a reply, by rank, as a JSON array for jsonb_to_recordset."""
    signals = ReplyMemory._meta.get_field("signals")
    data = [
        {"memory_id": memory_id, "rank": rank, "score": fields.get("score"), "signals": fields}
        for rank, (memory_id, fields) in enumerate(shown, 1)
    ]
    return json.dumps(data, cls=signals.encoder)


def _access_log_append(reply: Message, shown: list[tuple[int, dict[str, Any]]]) -> None:
    """What the tutor knew when it wrote `reply`: one ReplyMemory row per memory of its prompt,
    appended in the reply's transaction, and the memories' recall counters moved (decay and the
    procedural outcomes read them). (On PostgreSQL `_finish_statement` does it.)"""
    if not shown:
        return
    ReplyMemory.objects.bulk_create(
        ReplyMemory(message=reply, memory_id=memory_id, rank=rank, score=signals.get("score"), signals=signals)
        for rank, (memory_id, signals) in enumerate(shown, 1)
    )
    AIMemory.objects.filter(pk__in=[memory_id for memory_id, _ in shown]).update(
        recall_count=F("recall_count") + 1, last_recalled_at=reply.created_at
    )


# The statements of the finish: identifiers in braces (quoted by `claim.sql_named`), values as parameters.
_REPLY_SEQ_SQL = (
    "UPDATE {conversation} SET {message_count} = {message_count} + 1, "
    "{history_tokens} = {history_tokens} + %s, {last_activity_at} = %s, "
    "{turn_token} = CASE WHEN {turn_token} = %s THEN '' ELSE {turn_token} END, "
    "{turn_expires_at} = CASE WHEN {turn_token} = %s THEN NULL ELSE {turn_expires_at} END, "
    "{turn_message_id} = CASE WHEN {turn_token} = %s THEN NULL ELSE {turn_message_id} END "
    "WHERE {id} = %s RETURNING {message_count}"
)


# PostgreSQL: <reply_seq> is _REPLY_SEQ_SQL; <usage_*> the usage rows' columns (_finish_sql).
_FINISH_SQL = (
    "WITH counted AS (<reply_seq>), "
    "reply AS (INSERT INTO {message} ({conversation_id}, {seq}, {role}, {content}, {client_message_id}, "
    "{reply_to_id}, {token_count}, {prompt_tokens}, {completion_tokens}, {model}, {tool_events}, {created_at}) "
    "SELECT %s, {message_count}, %s, %s, NULL, %s, %s, %s, %s, %s, %s::jsonb, %s FROM counted "
    "RETURNING {id}, {seq}), "
    "usage AS (INSERT INTO {usage} (<usage_columns>) SELECT <usage_columns> "
    "FROM jsonb_to_recordset(%s::jsonb) AS t(<usage_types>)), "
    "shown AS (SELECT * FROM jsonb_to_recordset(%s::jsonb) "
    "AS t(memory_id bigint, rank integer, score double precision, signals jsonb)), "
    "logged AS (INSERT INTO {reply_memory} ({message_id}, {memory_id}, {rank}, {score}, {signals}) "
    "SELECT reply.{id}, memory_id, rank, score, signals FROM shown, reply RETURNING {memory_id}), "
    "recalled AS (UPDATE {memory} SET {recall_count} = {recall_count} + 1, {last_recalled_at} = %s "
    "WHERE {id} IN (SELECT memory_id FROM logged)) "
    "SELECT {id}, {seq} FROM reply"
)


def turn_abandon(*, claim: Claimed, usage: list[LLMUsage]) -> None:
    """A failed turn: its calls are metered, the lease released; the student's message stays."""
    with transaction.atomic():
        LLMUsage.objects.bulk_create(usage)
        release(conversation_id=claim.conversation_id, token=claim.token)
        costs.budget_release(hold_id=claim.budget_hold)
