"""The turn's claim, its first database step: the conversation leased to this turn and the
student's message stored, in one commit.

On PostgreSQL a new message on a free conversation takes one statement (`_claim_statement`);
otherwise one short transaction locks the user's own conversation (found through the scoping
primitive, so another user's request waits for nothing and gets its 404 or 403) and decides.
Both read, in the same round trip, whether the conversation has files and checkpoints and its
blocks' presence (llm.prompt_blocks: a block with nothing to show skips its reads), and whether
a budget may apply (llm.costs: a student past it is claimed all the same, `over_budget` set).

The lease (`turn_token`, `turn_expires_at` on the conversation row) serialises the turns of a
conversation: a send that finds a live lease waits and tries again, so messages stay in order.
The driver renews it while the model answers (`turn_renew`); a lease left by a crashed process
expires after TURN_LEASE_SECONDS and the next send takes the conversation over.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, F, OuterRef, Subquery
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from accounts.models import User
from conversations.models import ContextCheckpoint, Conversation, ConversationFile, Message, ReplyMemory
from conversations.selectors import conversation_get, require_student_owner
from conversations.turn.window import Limits, check_fits, turn_ceiling, turn_limits
from core.db import server_cursor
from core.errors import DATABASE_ERRORS, Conflict, DatabaseUnavailable, NotFound, ServiceUnavailable
from core.request_id import context_bind
from llm import costs, gateway, prompt_blocks
from llm.errors import ModelNotConfigured
from llm.models import LLMUsage
from llm.tokens import count_tokens
from llm.tools import Tool
from memory.models import AIMemory

logger = logging.getLogger(__name__)


class ConversationBusy(ServiceUnavailable):
    code = "conversation_busy"
    retry_safe = True


# What a student is told when no model is configured: the reason (which variable to set, the
# server's address) is for the operator, in the log and in the answers teachers and staff get
# (llm.gateway.not_configured_reason).
NOT_CONFIGURED_FOR_STUDENTS = gettext_noop(
    "The tutor is not set up to answer yet. Your message is saved; send it again later."
)


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
    # Whether the conversation has files and checkpoints, and the blocks whose presence found
    # nothing, when claimed (turn_begin): the prompt's reads of what is absent are skipped.
    has_files: bool = True
    has_checkpoint: bool = True
    absent: frozenset[str] = frozenset()
    # The spend budget the student is past (llm.costs), when claimed: the model is not called.
    over_budget: costs.BudgetExceeded | None = None
    # The spend held for this turn (llm.costs.budget_hold), given back by turn_finish or turn_abandon.
    budget_hold: int | None = None


def turn_begin(*, user: Any, conversation_id: Any, content: str, client_message_id: str) -> Replay | Busy | Claimed:
    """Claim the conversation and store the student's message, or say why not (see the classes).

    Raises NotFound, Forbidden, Conflict (ended conversation, client_message_id reused for other
    content), ModelNotConfigured (the message is stored, the lease released) and
    DatabaseUnavailable, whose message says whether the student's message was stored. A student
    past a spend budget is claimed all the same, with `over_budget` set: the caller screens the
    message, answers a crisis without the model and refuses the rest.
    """
    try:
        tokens = check_fits(content)
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
        return replace(outcome, limits=turn_limits(absent=outcome.absent))
    except BaseException as exc:
        release_quietly(conversation_id=outcome.conversation_id, token=outcome.token)
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
        over_budget = hold = None
        if conversation.budget_may_apply:
            # Past a spend budget the message is stored all the same, and screened: the turn
            # answers a crisis without the model and refuses the rest (429), its retry too. Under
            # it the most the turn can cost is held, so that turns at once never pass a budget.
            try:
                estimate, seconds = turn_ceiling()
                hold = costs.budget_hold(student_id=conversation.student_id, estimate=estimate, seconds=seconds)
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
        absent=_absent([getattr(conversation, f"present_{i}") for i in range(_presence_count())]),
        over_budget=over_budget,
        budget_hold=hold,
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
    if getattr(user, "role", None) != User.Role.STUDENT or not user.is_authenticated:
        # Only a student owns a conversation: anyone else's refusal is the transaction's to say
        # (a scope with no student compiles to no SQL at all).
        return None
    if costs.budget_setting_set():
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
    statement, spec = _claim_compiled()
    params = [slots[p] if isinstance(p, _Slot) else p for p in spec]
    fields = Conversation._meta.concrete_fields
    try:
        # A savepoint only inside a caller's transaction (tests): alone, the statement is atomic.
        with transaction.atomic() if connection.in_atomic_block else nullcontext(), server_cursor() as cursor:
            cursor.execute(statement, params)
            row = cursor.fetchone()
    except IntegrityError:
        return None
    if row is None:
        return None
    conversation = Conversation.from_db(connection.alias, [f.attname for f in fields], row[: len(fields)])
    conversation.student = user
    has_files, has_checkpoint, *present = row[len(fields) :]
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
        absent=_absent(present),
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
        # Unordered: an order means nothing to IN and EXISTS, and the statement stays short
        # enough for psycopg to cache its parsing (MAX_CACHED_STATEMENT_LENGTH).
        "scope": Conversation.objects.visible_to(user).filter(pk=pk, student_id=user.pk).order_by().values("pk").query,
        "budget": budget.query,
        "files": ConversationFile.objects.filter(conversation_id=pk).order_by().values("pk").query,
        "checkpoints": ContextCheckpoint.objects.filter(conversation_id=pk).order_by().values("pk").query,
    }
    presence = _presence(student_id=user.pk)
    for i, exists in enumerate(presence):
        parts[f"present_{i}"] = exists.query
    compiled: dict[str, tuple[str, tuple[Any, ...]]] = {name: query.sql_with_params() for name, query in parts.items()}
    fields = Conversation._meta.concrete_fields
    q = connection.ops.quote_name
    template = sql_named(_CLAIM_SQL).replace("<returned>", ", ".join(f"c.{q(f.column)}" for f in fields))
    statement = template.replace("<claimed>", ", ".join(f"claimed.{q(f.column)}" for f in fields))
    statement = statement.replace("<present>", "".join(f", EXISTS (<present_{i}>)" for i in range(len(presence))))
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
        *(param for i in range(len(presence)) for param in compiled[f"present_{i}"][1]),
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
    "SELECT <claimed>, EXISTS (<files>), EXISTS (<checkpoints>)<present> "
    "FROM claimed, stored"
)


def _claim_lookup(*, user: Any, conversation_id: Any, client_message_id: str) -> Any:
    """The user's own conversation locked, with its student, and as annotations:
    `stored_message_id` (the message already stored with this client_message_id, or None),
    `budget_may_apply` (llm.costs), `has_files`, `has_checkpoint` and `present_<i>`, the blocks'
    presence (`_presence`): whether the prompt's reads of them can find anything (a conversation
    without them skips those reads). Raises NotFound or Forbidden as `conversation_get` and `require_student_owner`."""
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
            **{f"present_{i}": exists for i, exists in enumerate(_presence(student_id=student))},
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


def _presence(*, student_id: Any) -> list[Any]:
    """The registered blocks' presence expressions (llm.prompt_blocks), in block order."""
    return [
        exists
        for block in prompt_blocks.registered()
        for exists in prompt_blocks.presence_of(block, student_id=student_id)
    ]


_layouts: dict[tuple[tuple[str, int], ...], list[tuple[str, int]]] = {}


def _presence_layout() -> list[tuple[str, int]]:
    """Each registered block's name and how many presence expressions it has, in block order
    (worked out once per set of registered blocks)."""
    blocks = prompt_blocks.registered()
    key = tuple((block.name, id(block)) for block in blocks)
    if key not in _layouts:
        _layouts[key] = [(block.name, len(prompt_blocks.presence_of(block, student_id=0))) for block in blocks]
    return _layouts[key]


def _presence_count() -> int:
    return sum(count for _name, count in _presence_layout())


def _absent(present: list[bool]) -> frozenset[str]:
    """The blocks none of whose presence expressions (`present`, in `_presence` order) is true."""
    absent = []
    found = iter(present)
    for name, count in _presence_layout():
        if count and not any([next(found) for _ in range(count)]):
            absent.append(name)
    return frozenset(absent)


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


def turn_renew(*, conversation_id: int, token: str) -> bool:
    """Extend the lease while the model answers; False if it is no longer ours."""
    expires = timezone.now() + _lease()
    return bool(Conversation.objects.filter(pk=conversation_id, turn_token=token).update(turn_expires_at=expires))


RELEASED: dict[str, Any] = {"turn_token": "", "turn_expires_at": None, "turn_message": None}


def release(*, conversation_id: int, token: str) -> None:
    Conversation.objects.filter(pk=conversation_id, turn_token=token).update(**RELEASED)


def release_quietly(*, conversation_id: int, token: str) -> None:
    try:
        release(conversation_id=conversation_id, token=token)
    except DATABASE_ERRORS:
        logger.warning("conversation %s: lease not released (database down); it expires by itself", conversation_id)


def turn_database_unavailable(claim: Claimed) -> DatabaseUnavailable:
    return DatabaseUnavailable(
        _("The database became unavailable. Your message is saved; retrying with the same client_message_id is safe."),
        details={"student_message_id": claim.student_message.pk},
    )


def sql_named(template: str) -> str:
    """`template` with its identifiers in braces ({conversation}, {message_count}) quoted."""
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
