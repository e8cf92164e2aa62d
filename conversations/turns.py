"""The database steps of a chat turn: each short and synchronous, none of them waits for the model.

A turn (driven by conversations.streaming):
1. `turn_begin` claims the conversation with a lease and stores the student's message
   (idempotent on `client_message_id`), and commits. On PostgreSQL a new message on a free
   conversation takes one statement (`_claim_statement`); otherwise one short transaction locks
   the user's own conversation (found through the scoping primitive, so another user's request
   waits for nothing and gets its 404 or 403) and decides. Both read, in the same round trip,
   whether the conversation has files and checkpoints and its student tasks or skills, so that
   the prompt skips the reads that would find nothing, and whether a budget may apply. The
   prompt is built after the commit (conversations.prompting: its blocks in
   `turn_prompt_draft`, its slow calls in between).
2. The model is streamed with no connection checked out.
3. `turn_tools_run` runs the model's tool calls (the tools the apps registered: llm.tools)
   between model rounds.
4. `turn_finish` stores the reply with the turn's usage rows and access log and releases the
   lease, atomically (on PostgreSQL one statement); `turn_abandon` stores the failed calls'
   usage and releases it.

The lease (`turn_token`, `turn_expires_at` on the conversation row) serialises the turns of a
conversation: a send that finds a live lease waits and tries again, so messages stay in order.
The driver renews it while the model answers (`turn_renew`); a lease left by a crashed process
expires after TURN_LEASE_SECONDS and the next send takes the conversation over.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, InterfaceError, OperationalError, connection, transaction
from django.db.models import Exists, F, OuterRef, Subquery
from django.utils import formats, timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from accounts.models import User
from conversations import prompts
from conversations.blocks import PROMPT_FILES
from conversations.context import Context, context_build
from conversations.files import PromptFile, files_for_prompt, image_data_url
from conversations.models import ContextCheckpoint, Conversation, ConversationFile, Message, ReplyMemory
from conversations.selectors import conversation_get, require_student_owner
from core.errors import ApplicationError, Conflict, NotFound, ServiceUnavailable
from core.request_id import context_bind
from learning import selectors as learning_selectors
from learning.blocks import FILES, HAS_LEARNING_DATA
from learning.prompts import FileItem
from llm import costs, gateway, prompt_blocks
from llm.models import LLMUsage
from llm.tokens import MESSAGE_OVERHEAD_TOKENS, count_tokens
from llm.tools import Tool, ToolContext, ToolResult, registered, tool_call_run
from memory.models import AIMemory

logger = logging.getLogger(__name__)

DATABASE_ERRORS = (OperationalError, InterfaceError)


class ModelUnavailable(ApplicationError):
    status_code = 503
    code = "model_unavailable"
    retry_safe = True


class ModelNotConfigured(ApplicationError):
    status_code = 503
    code = "model_not_configured"
    retry_safe = True


# What a student is told when no model is configured: the reason (which variable to set, the
# server's address) is for the operator, in the log and in the answers teachers and staff get
# (llm.gateway.not_configured_reason).
NOT_CONFIGURED_FOR_STUDENTS = gettext_noop(
    "The tutor is not set up to answer yet. Your message is saved; send it again later."
)


class ModelBadResponse(ApplicationError):
    status_code = 502
    code = "model_bad_response"
    retry_safe = True


class ConversationBusy(ServiceUnavailable):
    code = "conversation_busy"
    retry_safe = True


class TurnFailed(ServiceUnavailable):
    code = "turn_failed"
    retry_safe = True


class MessageTooLong(ApplicationError):
    code = "message_too_long"


class DatabaseUnavailable(ServiceUnavailable):
    code = "database_unavailable"
    retry_safe = True


@dataclass(frozen=True)
class Replay:
    """The message was answered already: the stored reply, no model call."""

    student_message: Message
    reply: Message
    # The events of that turn's tools kept for a replay (ToolEvent.stored), in order: (name, data).
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


@dataclass(frozen=True)
class Busy:
    """Another turn holds the conversation. `student_message` is set when that turn is this
    very message's (a retry during its turn): the caller follows it instead of waiting."""

    student_message: Message | None


@dataclass(frozen=True)
class Claimed:
    """The lease is ours and the message stored: the caller runs the model, then finishes."""

    conversation_id: int
    student_id: int
    student_message: Message
    token: str
    messages: list[dict[str, Any]]
    # As claimed (with its student), for building the first prompt without reading it again.
    conversation: Conversation | None = None
    # The longest reply asked of the model: what the window keeps free for it.
    max_tokens: int | None = None
    # The tools offered to the model (turn_tools).
    tools: list[Tool] = field(default_factory=list)
    # The memories in the prompt, in block order, and why (the access log's rows: turn_finish).
    shown: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    # What the chat model's window leaves for the prompt (turn_limits), when claimed.
    limits: Limits | None = None
    # Whether the conversation has files and checkpoints, and its student learning data, when
    # claimed (turn_begin): the prompt's reads of what is absent are skipped. True: read.
    has_files: bool = True
    has_checkpoint: bool = True
    has_learning: bool = True
    # The spend budget the student is past (llm.costs), when claimed: the model is not called.
    over_budget: costs.BudgetExceeded | None = None


def turn_begin(*, user: Any, conversation_id: Any, content: str, client_message_id: str) -> Replay | Busy | Claimed:
    """Claim the conversation and store the student's message, or say why not (see the classes).

    Raises NotFound, Forbidden, Conflict (ended conversation, client_message_id reused for other
    content), ModelNotConfigured (the message is stored, the lease released) and
    DatabaseUnavailable, whose message says whether the student's message was stored. A student
    past a spend budget is claimed all the same, with `over_budget` set: the caller screens the
    message, answers a crisis without the model and refuses the rest.
    """
    try:
        tokens = _check_fits(content)
        outcome = _claim(
            user=user,
            conversation_id=conversation_id,
            content=content,
            client_message_id=client_message_id,
            tokens=tokens,
        )
    except DATABASE_ERRORS as exc:
        logger.error("turn of conversation %s: database unavailable before storing: %s", conversation_id, exc)
        raise DatabaseUnavailable(
            _("The database is unavailable; your message was not stored. Send it again in a moment.")
        ) from exc
    if outcome.student_message is not None:  # the turn's ids on its log lines (no text)
        context_bind(conversation_id=outcome.student_message.conversation_id, turn_id=outcome.student_message.pk)
    if not isinstance(outcome, Claimed):
        return outcome
    if outcome.over_budget is not None:
        return outcome
    try:
        if not gateway.is_configured(gateway.chat_profile()):
            logger.warning("conversation %s: no chat model configured", conversation_id)
            raise ModelNotConfigured(
                _(NOT_CONFIGURED_FOR_STUDENTS), details={"student_message_id": outcome.student_message.pk}
            )
        return replace(outcome, limits=turn_limits())
    except BaseException as exc:
        _release_quietly(conversation_id=outcome.conversation_id, token=outcome.token)
        if isinstance(exc, DATABASE_ERRORS):
            raise DatabaseUnavailable(
                _(
                    "The database became unavailable. Your message is saved; retrying with the same "
                    "client_message_id is safe."
                ),
                details={"student_message_id": outcome.student_message.pk},
            ) from exc
        raise


def _claim(
    *, user: Any, conversation_id: Any, content: str, client_message_id: str, tokens: int
) -> Replay | Busy | Claimed:
    """The claim's transaction: one locking read of the user's own conversation (through the
    scoping primitive, with its student, whether this client_message_id is stored already, and
    what the budget check and the prompt will need to read), then, for a new message, its INSERT
    and the conversation's UPDATE. A retry reads its stored message too.

    A conversation that is not the user's is not locked or waited for: the read finds nothing and
    `conversation_get` then says 404 (not visible) or 403 (a teacher's).

    On PostgreSQL a new message on a free conversation is claimed by one statement first
    (`_claim_statement`); this transaction decides the other cases."""
    if connection.vendor == "postgresql":
        claimed = _claim_statement(
            user=user,
            conversation_id=conversation_id,
            content=content,
            client_message_id=client_message_id,
            tokens=tokens,
        )
        if claimed is not None:
            return claimed
    with transaction.atomic():
        conversation = _claim_lookup(user=user, conversation_id=conversation_id, client_message_id=client_message_id)
        now = timezone.now()
        message = None
        if conversation.stored_message_id is not None:
            message = Message.objects.get(pk=conversation.stored_message_id)
            if message.content != content:
                raise Conflict(
                    _("client_message_id was already used for a different message in this conversation."),
                    details={"client_message_id": client_message_id},
                )
            reply = Message.objects.filter(reply_to=message).first()
            if reply is not None:
                return Replay(message, reply, [(e["event"], e["data"]) for e in reply.tool_events])
            if conversation.turn_in_progress(now):
                return Busy(message if conversation.turn_message_id == message.pk else None)
            if conversation.is_ended:
                raise Conflict(
                    _("This conversation has ended; start a new one."), details={"student_message_id": message.pk}
                )
        else:
            if conversation.is_ended:
                raise Conflict(_("This conversation has ended; start a new one."))
            if conversation.turn_in_progress(now):
                return Busy(None)
        token = uuid.uuid4().hex

        def lease(answered: Message) -> dict[str, Any]:
            return {"turn_token": token, "turn_expires_at": now + _lease(), "turn_message": answered}

        if message is None:
            message = message_append(
                conversation=conversation,
                role=Message.Role.STUDENT,
                content=content,
                tokens=tokens,
                client_message_id=client_message_id,
                conversation_fields=lease,
            )
        else:
            Conversation.objects.filter(pk=conversation.pk).update(**lease(message))
        over_budget = None
        if conversation.budget_may_apply:
            # Past a spend budget the message is stored all the same, and screened: the turn
            # answers a crisis without the model and refuses the rest (429), its retry too.
            try:
                costs.budget_check(student_id=conversation.student_id)
            except costs.BudgetExceeded as exc:
                exc.details["student_message_id"] = message.pk
                over_budget = exc
    return Claimed(
        conversation.pk,
        conversation.student_id,
        message,
        token,
        [],
        conversation,
        has_files=conversation.has_files,
        has_checkpoint=conversation.has_checkpoint,
        has_learning=conversation.has_tasks or conversation.has_skills,
        over_budget=over_budget,
    )


def _claim_statement(
    *, user: Any, conversation_id: Any, content: str, client_message_id: str, tokens: int
) -> Claimed | None:
    """PostgreSQL, one statement: if the conversation is the user's (through the scoping
    primitive), not ended, not leased, with no message of this client_message_id and no budget
    that may cover its student, lease it, move its counters and insert the message, and read
    what `_claim_lookup` annotates. None when it claimed nothing: `_claim`'s transaction then
    decides (a retry, a busy or ended conversation, a budget, a 404). A concurrent insert of the
    same client_message_id makes it raise IntegrityError (nothing written): None too."""
    try:
        pk = int(conversation_id)
    except (TypeError, ValueError):
        return None
    if not isinstance(costs.budget_may_apply(student_id=user.pk), Exists):
        return None  # a budget setting covers every student: the transaction checks it
    now = timezone.now()
    token = uuid.uuid4().hex
    slots = {
        _CLAIM_PK: pk,
        _CLAIM_USER: user.pk,
        _CLAIM_TOKENS: tokens,
        _CLAIM_NOW: now,
        _CLAIM_TOKEN: token,
        _CLAIM_EXPIRES: now + _lease(),
        _CLAIM_CLIENT_ID: client_message_id,
        _CLAIM_CONTENT: content,
    }
    if getattr(user, "role", None) == User.Role.STUDENT and user.is_authenticated:
        statement, spec = _claim_compiled()
        params = [slots[p] if isinstance(p, _Slot) else p for p in spec]
    else:
        statement, params = _claim_compile(user=user, pk=pk, slots=slots)
    fields = Conversation._meta.concrete_fields
    try:
        # A savepoint only inside a caller's transaction (tests): alone, the statement is atomic.
        with transaction.atomic() if connection.in_atomic_block else nullcontext(), connection.cursor() as cursor:
            cursor.execute(statement, params)
            row = cursor.fetchone()
    except IntegrityError:
        return None
    if row is None:
        return None
    conversation = Conversation.from_db(connection.alias, [f.attname for f in fields], row[: len(fields)])
    conversation.student = user
    has_files, has_checkpoint, has_tasks, has_skills = row[len(fields) :]
    message = Message(
        id=conversation.turn_message_id,
        conversation_id=pk,
        seq=conversation.message_count,
        role=Message.Role.STUDENT,
        content=content,
        client_message_id=client_message_id,
        token_count=tokens,
        created_at=now,
    )
    message._state.adding, message._state.db = False, connection.alias
    return Claimed(
        pk,
        conversation.student_id,
        message,
        token,
        [],
        conversation,
        has_files=has_files,
        has_checkpoint=has_checkpoint,
        has_learning=has_tasks or has_skills,
    )


class _Slot:
    """A value of the claim statement filled in at each claim (`_claim_compiled`)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name}>"


_CLAIM_PK, _CLAIM_USER = _Slot("conversation id"), _Slot("user id")
_CLAIM_TOKENS, _CLAIM_NOW, _CLAIM_TOKEN = _Slot("tokens"), _Slot("now"), _Slot("token")
_CLAIM_EXPIRES, _CLAIM_CLIENT_ID, _CLAIM_CONTENT = _Slot("expires"), _Slot("client_message_id"), _Slot("content")
# Stand-ins for the ids while the ORM compiles the statement once: no id is negative.
_PK_STAND_IN, _USER_STAND_IN = -7_391_000_001, -7_391_000_002
_claim_cache: dict[str, tuple[str, list[Any]]] = {}


def _claim_compile(*, user: Any, pk: int, slots: dict[_Slot, Any]) -> tuple[str, list[Any]]:
    """The claim statement of `user` and conversation `pk` as the ORM compiles it, and its
    parameters, the values of `slots` in their places (a slot left out stays a `_Slot`)."""
    budget = costs.budget_may_apply(student_id=user.pk)
    assert isinstance(budget, Exists), "the claim statement is for students no budget setting covers"
    parts: dict[str, Any] = {
        "scope": Conversation.objects.visible_to(user).filter(pk=pk, student_id=user.pk).values("pk").query,
        "budget": budget.query,
        "files": ConversationFile.objects.filter(conversation_id=pk).values("pk").query,
        "checkpoints": ContextCheckpoint.objects.filter(conversation_id=pk).values("pk").query,
        "tasks": learning_selectors.tasks_exist(student_id=user.pk).query,
        "skills": learning_selectors.skills_exist(student_id=user.pk).query,
    }
    compiled: dict[str, tuple[str, tuple[Any, ...]]] = {name: query.sql_with_params() for name, query in parts.items()}
    fields = Conversation._meta.concrete_fields
    q = connection.ops.quote_name
    template = _sql(_CLAIM_SQL).replace("<returned>", ", ".join(f"c.{q(f.column)}" for f in fields))
    statement = template.replace("<claimed>", ", ".join(f"claimed.{q(f.column)}" for f in fields))
    for name, (sql, _params) in compiled.items():
        statement = statement.replace(f"<{name}>", sql)
    params: list[Any] = [
        _CLAIM_TOKENS,
        _CLAIM_NOW,
        _CLAIM_TOKEN,
        _CLAIM_EXPIRES,
        Message._meta.db_table,
        pk,
        *compiled["scope"][1],
        _CLAIM_NOW,
        _CLAIM_CLIENT_ID,
        *compiled["budget"][1],
        Message.Role.STUDENT,
        _CLAIM_CONTENT,
        _CLAIM_CLIENT_ID,
        _CLAIM_TOKENS,
        _CLAIM_NOW,
        *compiled["files"][1],
        *compiled["checkpoints"][1],
        *compiled["tasks"][1],
        *compiled["skills"][1],
    ]
    return statement, [slots.get(p, p) if isinstance(p, _Slot) else p for p in params]


def _claim_compiled() -> tuple[str, list[Any]]:
    """The claim statement of a student, compiled once per database connection alias (the ORM's
    compilation is most of a claim's CPU): its SQL and its parameters, with `_Slot`s where each
    claim's values go. Compiled for a stand-in student and conversation whose ids become slots;
    the same statement as `_claim_compile` gives for a real one (tests check it)."""
    cached = _claim_cache.get(connection.alias)
    if cached is None:
        stand_in = User(pk=_USER_STAND_IN, role=User.Role.STUDENT)
        statement, params = _claim_compile(user=stand_in, pk=_PK_STAND_IN, slots={})
        ids = {_PK_STAND_IN: _CLAIM_PK, _USER_STAND_IN: _CLAIM_USER}
        spec = [ids.get(p, p) if type(p) is int else p for p in params]
        if str(_PK_STAND_IN) in statement or str(_USER_STAND_IN) in statement:
            raise AssertionError("an id was written into the claim statement, not passed as a parameter")
        cached = _claim_cache[connection.alias] = (statement, spec)
    return cached


# PostgreSQL: the claim of a new message (_claim_statement); <name>: the compiled ORM queries.
_CLAIM_SQL = (
    "WITH claimed AS (UPDATE {conversation} c SET {message_count} = c.{message_count} + 1, "
    "{history_tokens} = c.{history_tokens} + %s, {last_activity_at} = %s, {turn_token} = %s, "
    "{turn_expires_at} = %s, {turn_message_id} = nextval(pg_get_serial_sequence(%s, 'id')) "
    "WHERE c.{id} = %s AND c.{id} IN (<scope>) AND c.{status} <> 'ended' "
    "AND (c.{turn_token} = '' OR c.{turn_expires_at} IS NULL OR c.{turn_expires_at} <= %s) "
    "AND NOT EXISTS (SELECT 1 FROM {message} m WHERE m.{conversation_id} = c.{id} AND m.{client_message_id} = %s) "
    "AND NOT EXISTS (<budget>) "
    "RETURNING <returned>), "
    "stored AS (INSERT INTO {message} ({id}, {conversation_id}, {seq}, {role}, {content}, {client_message_id}, "
    "{reply_to_id}, {token_count}, {prompt_tokens}, {completion_tokens}, {model}, {tool_events}, {created_at}) "
    "SELECT {turn_message_id}, {id}, {message_count}, %s, %s, %s, NULL, %s, 0, 0, '', '[]'::jsonb, %s "
    "FROM claimed RETURNING {id}) "
    "SELECT <claimed>, EXISTS (<files>), EXISTS (<checkpoints>), EXISTS (<tasks>), EXISTS (<skills>) "
    "FROM claimed, stored"
)


def _claim_lookup(*, user: Any, conversation_id: Any, client_message_id: str) -> Any:
    """The user's own conversation locked, with its student, and as annotations:
    `stored_message_id` (the message already stored with this client_message_id, or None),
    `budget_may_apply` (llm.costs), `has_files`, `has_checkpoint`, `has_tasks` and `has_skills`
    (whether the prompt's reads of them can find anything: a conversation without them skips
    those reads). Raises NotFound or Forbidden as `conversation_get` and `require_student_owner`."""
    try:
        pk = int(conversation_id)
    except (TypeError, ValueError):
        pk = None
    student = OuterRef("student_id")
    found = (
        Conversation.objects.visible_to(user)
        .filter(pk=pk, student_id=user.pk)
        .select_related("student")
        .select_for_update(of=("self",))
        .annotate(
            budget_may_apply=costs.budget_may_apply(student_id=student),
            stored_message_id=Subquery(
                Message.objects.filter(conversation=OuterRef("pk"), client_message_id=client_message_id).values("pk")[
                    :1
                ]
            ),
            has_files=Exists(ConversationFile.objects.filter(conversation=OuterRef("pk"))),
            has_checkpoint=Exists(ContextCheckpoint.objects.filter(conversation=OuterRef("pk"))),
            has_tasks=learning_selectors.tasks_exist(student_id=student),
            has_skills=learning_selectors.skills_exist(student_id=student),
        )
        .first()
        if pk is not None
        else None
    )
    if found is None:
        conversation = conversation_get(user=user, conversation_id=conversation_id)
        require_student_owner(user=user, conversation=conversation)
        raise NotFound(_("Conversation not found."))
    return found


# The tools' schemas take at most this share of the model's window.
TOOLS_WINDOW_SHARE = 8


_tools_tokens_cache: dict[tuple[str, tuple[str, ...]], int] = {}


def tools_tokens(tools: list[Tool]) -> int:
    """The tools' schemas as the product counts them (a server renders them into the prompt),
    counted once per chat model."""
    key = (settings.LLM_MODEL, tuple(tool.name for tool in tools))
    if key not in _tools_tokens_cache:
        _tools_tokens_cache[key] = count_tokens(json.dumps(tool_schemas(tools)))
    return _tools_tokens_cache[key]


def tool_schemas(tools: list[Tool]) -> list[dict[str, Any]]:
    """The tools as the model is offered them (OpenAI function definitions)."""
    return [tool.schema for tool in tools]


def turn_tools(window: int) -> list[Tool]:
    """The tools for a model of `window` tokens, in registration order: every registered tool
    when all their schemas take at most 1/TOOLS_WINDOW_SHARE of it, else the small_window ones."""
    tools = registered()
    if tools_tokens(tools) * TOOLS_WINDOW_SHARE <= window:
        return tools
    return [tool for tool in tools if tool.small_window]


@dataclass(frozen=True)
class Limits:
    """What the chat model's window leaves for a turn's prompt."""

    window: int  # in the product's token counts, the unit of every budget
    prompt: int  # the window less the reply's reserve
    fixed: int  # the system prompt and the tools' schemas
    stated: int  # the window as the server states it, for messages
    tools: list[Tool] = field(default_factory=list)  # offered to the model (turn_tools)

    @property
    def available(self) -> int:
        # What the prompt blocks share (llm.prompt_blocks): the prompt less the fixed part.
        return max(0, self.prompt - self.fixed)

    @property
    def message(self) -> int:
        # One message must fit beside the system prompt, with room for the markers around it.
        return self.prompt - self.fixed - MESSAGE_OVERHEAD_TOKENS - 64


def turn_limits() -> Limits:
    profile = gateway.chat_profile()
    resolved = gateway.context_window(profile)
    window = resolved.tokens
    tools = turn_tools(window)
    fixed = _system_prompt_tokens(tools)
    return Limits(window, window - gateway.reply_reserve(window), fixed, resolved.stated, tools)


def _check_fits(content: str) -> int:
    """The message's tokens. A message that cannot fit the model's window is refused before it
    is stored or sent."""
    limits = turn_limits()
    tokens = count_tokens(content)
    if tokens <= limits.message:
        return tokens
    max_characters = max(0, int(limits.message * len(content) / tokens) // 100 * 100)
    raise MessageTooLong(
        _(
            "This message is too long for the tutor model (%(context)s-token context): at most about "
            "%(characters)s characters. Split it or shorten it."
        )
        % {
            "context": formats.number_format(limits.stated, force_grouping=True),
            "characters": formats.number_format(max_characters, force_grouping=True),
        },
        details={"max_characters": max_characters, "context_window": limits.stated, "message_tokens": tokens},
    )


def _lease() -> timedelta:
    return timedelta(seconds=settings.TURN_LEASE_SECONDS)


def message_append(
    *,
    conversation: Conversation,
    role: str,
    content: str,
    tokens: int | None = None,
    conversation_fields: Callable[[Message], dict[str, Any]] | None = None,
    **fields: Any,
) -> Message:
    """Append a message to a conversation locked by the caller, keeping the running totals.
    `tokens`: the content's count if the caller has it already; `conversation_fields`: other
    columns of the conversation to set in the same UPDATE, given the new message."""
    tokens = count_tokens(content) if tokens is None else tokens
    seq = conversation.message_count + 1
    message = Message.objects.create(
        conversation=conversation, seq=seq, role=role, content=content, token_count=tokens, **fields
    )
    conversation.message_count = seq
    conversation.history_tokens += tokens
    conversation.last_activity_at = timezone.now()
    Conversation.objects.filter(pk=conversation.pk).update(
        message_count=seq,
        history_tokens=F("history_tokens") + tokens,
        last_activity_at=conversation.last_activity_at,
        **(conversation_fields(message) if conversation_fields else {}),
    )
    return message


def prompt_turn(claim: Claimed) -> prompt_blocks.PromptTurn:
    """What the prompt's blocks know of this turn (no database access: the claim has it all)."""
    conversation, limits = claim.conversation, claim.limits
    if conversation is None or limits is None:
        raise ValueError("a claim from turn_begin or turn_reprompt (with its conversation and limits) is needed")
    return prompt_blocks.PromptTurn(
        student_id=conversation.student_id,
        conversation_id=conversation.pk,
        message=claim.student_message.content,
        language=conversation.student.language,
        available=limits.available,
        tools=limits.tools,
    )


def turn_system_prompt(*, language: str, tools: list[Tool]) -> str:
    """The tutor's instructions for a student of `language` offered `tools` (the system block)."""
    return prompts.system_prompt(language=language, tools=tools)


@dataclass(frozen=True)
class Draft:
    allocation: prompt_blocks.Allocation  # every block but the history, built
    context: Context  # the history, or the compression it needs first (context.Compression)


def turn_prompt_draft(
    *, claim: Claimed, turn: prompt_blocks.PromptTurn, blocks: list[prompt_blocks.PromptBlock]
) -> Draft:
    """The database step of the prompt (conversations.prompting): the conversation's files, the
    blocks (after their `prepare`) within what the window leaves, then the history in what they
    leave, or the compression it needs first (its summary is not written here)."""
    conversation, limits = claim.conversation, claim.limits
    assert conversation is not None and limits is not None
    files = files_for_prompt(conversation_id=conversation.pk, include_unready=True) if claim.has_files else []
    turn.data[FILES] = [_file_item(f) for f in files]
    turn.data[PROMPT_FILES] = files
    turn.data[HAS_LEARNING_DATA] = claim.has_learning
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
    memories = parts.get("memories")
    shown = memories.detail if memories is not None and memories.detail is not None else None
    return replace(
        claim,
        messages=prompt_blocks.assemble(blocks, parts),
        max_tokens=limits.window - limits.prompt,
        tools=limits.tools,
        shown=[(m.pk, shown.signals.get(m.pk, {})) for m in shown.memories] if shown is not None else [],
    )


def turn_database_unavailable(claim: Claimed) -> DatabaseUnavailable:
    return DatabaseUnavailable(
        _("The database became unavailable. Your message is saved; retrying with the same client_message_id is safe."),
        details={"student_message_id": claim.student_message.pk},
    )


def _file_item(file: PromptFile) -> FileItem:
    """A file as the learning record shows it, saying what the tutor can and cannot read."""
    kind = "image" if file.is_image else "PDF" if file.content_type == "application/pdf" else "text"
    note = ""
    if file.status == ConversationFile.Status.PENDING:
        note = "still being read: its text is not available yet"
    elif file.status == ConversationFile.Status.UNREADABLE:
        note = f"unreadable ({file.reason.replace('_', ' ')})" if file.reason else "unreadable"
    elif file.is_image:
        note = "shown to you as an image" if settings.LLM_SUPPORTS_IMAGES else "you cannot see images: ask the student"
    elif file.text_truncated:
        note = "only the beginning of a long file was read"
    return FileItem(id=file.id, name=file.name, kind=kind, pages=file.pages, text=file.text, note=note)


def images_for_prompt(files: list[PromptFile], *, budget: int) -> tuple[list[prompts.ImageItem], int]:
    """The latest LLM_MAX_IMAGES ready images as data URLs, when the model accepts images, as
    many as fit `budget` (LLM_IMAGE_TOKENS each), and how many of those were left out. An image
    the storage cannot give is left out."""
    if not settings.LLM_SUPPORTS_IMAGES:
        return [], 0
    ready = [f for f in files if f.is_image and f.status == ConversationFile.Status.READY][-settings.LLM_MAX_IMAGES :]
    fitting = ready[len(ready) - min(len(ready), budget // max(1, settings.LLM_IMAGE_TOKENS)) :]
    images = []
    for file in fitting:
        try:
            images.append(prompts.ImageItem(name=file.name, data_url=image_data_url(file)))
        except Exception:  # any storage backend's errors: the turn goes on without it
            logger.exception("file %s: image not read for the prompt", file.id)
    return images, len(ready) - len(images)


_system_tokens_cache: dict[tuple[str, tuple[str, ...]], int] = {}


def _system_prompt_tokens(tools: list[Tool]) -> int:
    key = (settings.LLM_MODEL, tuple(tool.name for tool in tools))
    if key not in _system_tokens_cache:
        # The longest of the prompts that name a language: the budget holds for every student.
        system = max(count_tokens(prompts.system_prompt(language=code, tools=tools)) for code in prompts.LANGUAGE_NAMES)
        _system_tokens_cache[key] = system + tools_tokens(tools) + MESSAGE_OVERHEAD_TOKENS
    return _system_tokens_cache[key]


def turn_reprompt(*, claim: Claimed, sent_tokens: int, window: int | None, requested: int | None = None) -> Claimed:
    """The claim again, for a prompt rebuilt (conversations.prompting.turn_reprompt) after the
    server refused the last one as longer than its window: the conversation read again and the
    limits of the window learned. What is learned for the endpoint:
    - the window it named, and, when our count of what was sent (`sent_tokens`) is below the
      size the server gave (`requested`), or below the window itself, how many fewer tokens we
      count than it does (its tokenizer differs from ours);
    - if it named no window, one a fifth smaller than what was sent.
    Raises MessageTooLong if the student's message alone cannot fit that window."""
    profile = gateway.chat_profile()
    if window is None:
        gateway.learn_window(profile, min(turn_limits().window, sent_tokens) * 4 // 5)
    elif requested and requested > sent_tokens:
        gateway.learn_window(profile, window, scale=sent_tokens / requested * 0.95)
    elif sent_tokens < window:
        gateway.learn_window(profile, window, scale=sent_tokens / window * 0.9)
    # The window is known now: a message that cannot fit it on its own is refused (it stays
    # stored, as every message the student sent; a retry is refused the same way, up front).
    try:
        _check_fits(claim.student_message.content)
    except MessageTooLong as exc:
        exc.details["student_message_id"] = claim.student_message.pk
        raise
    conversation = Conversation.objects.select_related("student").get(pk=claim.conversation_id)
    # The first prompt of the turn may have written a checkpoint: read it.
    return replace(claim, conversation=conversation, limits=turn_limits(), has_checkpoint=True)


def turn_renew(*, conversation_id: int, token: str) -> bool:
    """Extend the lease while the model answers; False if it is no longer ours."""
    expires = timezone.now() + _lease()
    return bool(Conversation.objects.filter(pk=conversation_id, turn_token=token).update(turn_expires_at=expires))


@dataclass(frozen=True)
class ToolOutcome:
    call: gateway.ToolCall
    result: ToolResult  # its text for the model, its events for the client


def turn_tools_run(
    *,
    conversation_id: int,
    student_id: int,
    calls: list[gateway.ToolCall],
    message_id: int | None = None,
    tools: list[Tool] | None = None,
) -> list[ToolOutcome]:
    """Run the model's tool calls in the turn of the student message `message_id`, among the
    `tools` offered (every registered tool when None); an invalid call gets an error text for the
    model, never raises (llm.tools.tool_call_run)."""
    offered = registered() if tools is None else tools
    context = ToolContext(student_id=student_id, conversation_id=conversation_id, message_id=message_id)
    return [
        ToolOutcome(call, tool_call_run(tools=offered, context=context, name=call.name, arguments=call.arguments))
        for call in calls
    ]


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
                return _finish_statement(claim=claim, reply=reply, usage=usage)
        with transaction.atomic():
            reply.seq = _reply_seq(claim=claim, tokens=reply.token_count, now=reply.created_at)
            reply.save(force_insert=True)
            LLMUsage.objects.bulk_create(usage)
            _access_log_append(reply, claim.shown)
        return reply
    except IntegrityError:
        with transaction.atomic():
            answered = Message.objects.filter(reply_to=claim.student_message).first()
            if answered is None:
                raise
            LLMUsage.objects.bulk_create(usage)
            _release(conversation_id=claim.conversation_id, token=claim.token)
        logger.warning("conversation %s: message %s was answered by another turn", claim.conversation_id, answered.pk)
        return answered


def _reply_seq(*, claim: Claimed, tokens: int, now: Any) -> int:
    """The conversation's UPDATE for a reply of `tokens`: its running totals moved and the lease
    released if it is still ours, its row locked; returns the reply's `seq`."""
    stamp = connection.ops.adapt_datetimefield_value(now)
    token = claim.token
    with connection.cursor() as cursor:
        cursor.execute(_sql(_REPLY_SEQ_SQL), [tokens, stamp, token, token, token, claim.conversation_id])
        row = cursor.fetchone()
    if row is None:
        raise Conversation.DoesNotExist(f"conversation {claim.conversation_id} is gone")
    return int(row[0])


def _finish_statement(*, claim: Claimed, reply: Message, usage: list[LLMUsage]) -> Message:
    """PostgreSQL: the conversation's UPDATE, the reply's INSERT, the usage rows, the access log
    and the memories' counters, as one statement. Raises IntegrityError (nothing written) if the
    student message has a reply already."""
    token = claim.token
    usage_columns, usage_types, usage_rows = _recordset(usage)
    template = _FINISH_SQL.replace("<reply_seq>", _REPLY_SEQ_SQL)
    statement = _sql(template).replace("<usage_columns>", usage_columns).replace("<usage_types>", usage_types)
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
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        row = cursor.fetchone()
    if row is None:
        raise Conversation.DoesNotExist(f"conversation {claim.conversation_id} is gone")
    reply.pk, reply.seq = row
    reply._state.adding = False
    reply._state.db = connection.alias
    return reply


def _recordset(rows: list[LLMUsage]) -> tuple[str, str, str]:
    """New usage rows for an INSERT ... SELECT FROM jsonb_to_recordset (PostgreSQL): their
    columns, the recordset's column definitions, and the rows as a JSON array."""
    fields = [f for f in LLMUsage._meta.concrete_fields if not f.primary_key]
    q = connection.ops.quote_name
    values = [{f.column: f.get_db_prep_save(f.pre_save(row, True), connection) for f in fields} for row in rows]
    columns = ", ".join(q(f.column) for f in fields)
    types = ", ".join(f"{q(f.column)} {f.db_type(connection)}" for f in fields)
    return columns, types, json.dumps(values, default=str)


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


# The statements of the finish: identifiers in braces (quoted by `_sql`), values as parameters.
_REPLY_SEQ_SQL = (
    "UPDATE {conversation} SET {message_count} = {message_count} + 1, "
    "{history_tokens} = {history_tokens} + %s, {last_activity_at} = %s, "
    "{turn_token} = CASE WHEN {turn_token} = %s THEN '' ELSE {turn_token} END, "
    "{turn_expires_at} = CASE WHEN {turn_token} = %s THEN NULL ELSE {turn_expires_at} END, "
    "{turn_message_id} = CASE WHEN {turn_token} = %s THEN NULL ELSE {turn_message_id} END "
    "WHERE {id} = %s RETURNING {message_count}"
)
# PostgreSQL: <reply_seq> is _REPLY_SEQ_SQL; <usage_*> the usage rows' columns (_recordset).
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


def _sql(template: str) -> str:
    tables = {
        "conversation": Conversation._meta.db_table,
        "message": Message._meta.db_table,
        "usage": LLMUsage._meta.db_table,
        "reply_memory": ReplyMemory._meta.db_table,
        "memory": AIMemory._meta.db_table,
    }
    columns = [
        "id",
        "message_count",
        "history_tokens",
        "last_activity_at",
        "turn_token",
        "turn_expires_at",
        "turn_message_id",
        "conversation_id",
        "seq",
        "role",
        "content",
        "client_message_id",
        "reply_to_id",
        "token_count",
        "prompt_tokens",
        "completion_tokens",
        "model",
        "tool_events",
        "created_at",
        "message_id",
        "memory_id",
        "rank",
        "score",
        "signals",
        "recall_count",
        "last_recalled_at",
        "status",
    ]
    names = {**tables, **{column: column for column in columns}}
    return template.format(**{key: connection.ops.quote_name(name) for key, name in names.items()})


def turn_abandon(*, claim: Claimed, usage: list[LLMUsage]) -> None:
    """A failed turn: its calls are metered, the lease released; the student's message stays."""
    with transaction.atomic():
        LLMUsage.objects.bulk_create(usage)
        _release(conversation_id=claim.conversation_id, token=claim.token)


RELEASED: dict[str, Any] = {"turn_token": "", "turn_expires_at": None, "turn_message": None}


def _release(*, conversation_id: int, token: str) -> None:
    Conversation.objects.filter(pk=conversation_id, turn_token=token).update(**RELEASED)


def _release_quietly(*, conversation_id: int, token: str) -> None:
    try:
        _release(conversation_id=conversation_id, token=token)
    except DATABASE_ERRORS:
        logger.warning("conversation %s: lease not released (database down); it expires by itself", conversation_id)
