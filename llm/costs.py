"""What model calls cost, and the spend budgets that stop a student's chat past them.

Prices: `settings.LLM_PRICES`, USD per million input and output tokens by model name; a model it
does not list costs 0 (a local one). Each `LLMUsage` row is priced when it is written
(llm.gateway), so a price changed later never rewrites what was spent.

Budgets, in USD per UTC day and per calendar month (UTC), each 0 for none:
- per student: BUDGET_STUDENT_DAILY and BUDGET_STUDENT_MONTHLY, or their classroom's override;
- per classroom, over the spend of all its students: BUDGET_CLASSROOM_DAILY and _MONTHLY, or its
  override;
- per asker (a teacher or staff member), over the questions they ask: BUDGET_ASKER_DAILY and
  _MONTHLY.
Every budget that covers the student applies (a student in two classes is held to both classes'
budgets, the strictest decides). A student's and a class's budgets count their chat spend
(llm.models.CHAT_PURPOSES: the turn's calls and the student's own questions); the work done after
a conversation (summaries, extraction, consolidation, grading) is metered, never counted nor
refused, so that it cannot lock a class out of the tutor. A teacher's or staff member's question
is metered to them (LLMUsage.asker, no student) and counts in their asker budgets only.
Only a chat turn's call of the model (or a question) is ever refused. A message past the budget
is still stored and screened, and a crisis is answered (the crisis reply and the resources,
without the model) and alerted; any other message gets the 429, and so does its retry until the
budget resets. A turn is answered only when every budget has room for the most it can cost,
which is held (BudgetHold) until its usage is stored: turns running at once never spend past a
limit (`budget_hold`, `budget_release`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from functools import reduce
from operator import or_
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import BooleanField, Exists, F, Q, Sum, Value
from django.utils import formats, timezone
from django.utils.translation import gettext as _

from accounts.models import Classroom
from core.errors import ApplicationError
from llm.models import CHAT_PURPOSES, BudgetHold, LLMUsage

ZERO = Decimal(0)
MILLION = Decimal(1_000_000)
# The cost column's precision (LLMUsage.cost: 8 decimal places).
COST_QUANTUM = Decimal("0.00000001")

# A dated snapshot of a priced model: gpt-4o-mini-2024-07-18, gpt-3.5-turbo-0125, claude-...-20250514.
_SNAPSHOT = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{8}|\d{4})$")


def model_price(model: str) -> tuple[Decimal, Decimal]:
    """USD per million (input, output) tokens: the name as configured, else without a router's
    `provider/` prefix, else its undated name; (0, 0) for a model not priced."""
    prices: dict[str, tuple[Decimal, Decimal]] = settings.LLM_PRICES
    bare = model.strip().rsplit("/", 1)[-1]
    for name in (model, bare, _SNAPSHOT.sub("", bare)):
        if name in prices:
            return prices[name]
    return ZERO, ZERO


def usage_cost(*, model: str, prompt_tokens: int, completion_tokens: int) -> Decimal:
    """The USD cost of one call, to LLMUsage.cost's precision."""
    prompt_price, completion_price = model_price(model)
    cost = (Decimal(prompt_tokens) * prompt_price + Decimal(completion_tokens) * completion_price) / MILLION
    return cost.quantize(COST_QUANTUM, rounding=ROUND_HALF_UP)


# --- Budgets ----------------------------------------------------------------------------------

DAILY, MONTHLY = "daily", "monthly"
STUDENT, CLASSROOM, ASKER = "student", "classroom", "asker"

# (scope, period) -> (the setting, the Classroom field that overrides it)
_SOURCES = {
    (STUDENT, DAILY): ("BUDGET_STUDENT_DAILY", "budget_student_daily"),
    (STUDENT, MONTHLY): ("BUDGET_STUDENT_MONTHLY", "budget_student_monthly"),
    (CLASSROOM, DAILY): ("BUDGET_CLASSROOM_DAILY", "budget_daily"),
    (CLASSROOM, MONTHLY): ("BUDGET_CLASSROOM_MONTHLY", "budget_monthly"),
}


@dataclass(frozen=True)
class Budget:
    scope: str  # STUDENT: the student's own spend; CLASSROOM: all the class's students'; ASKER: their questions
    period: str  # DAILY or MONTHLY
    limit: Decimal
    # The classroom whose budget (or override of a student budget) this is; None: the setting.
    classroom_id: int | None = None

    @property
    def name(self) -> str:
        return f"{self.scope}_{self.period}"


def period_start(period: str, now: datetime) -> datetime:
    start = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return start if period == DAILY else start.replace(day=1)


def period_end(period: str, now: datetime) -> datetime:
    """When the period's budget resets: the next UTC midnight, or the first of next month."""
    start = period_start(period, now)
    if period == DAILY:
        return start + timedelta(days=1)
    return start.replace(year=start.year + 1, month=1) if start.month == 12 else start.replace(month=start.month + 1)


def budget_setting_set() -> bool:
    """Whether a budget setting covers every student (then a budget may apply to anyone)."""
    return any(Decimal(getattr(settings, setting) or 0) > 0 for setting, _field in _SOURCES.values())


def budget_may_apply(*, student_id: Any) -> Exists | Value:
    """Whether a budget may cover the student, as an expression for a query to annotate
    (`student_id` an int or an OuterRef): False means `budgets_for` finds none, so there is
    nothing for `budget_check` to check. True whenever a budget setting is set."""
    if budget_setting_set():
        return Value(True, output_field=BooleanField())
    overridden = reduce(or_, (Q(**{f"{field}__gt": 0}) for _setting, field in _SOURCES.values()))
    return Exists(
        Classroom.objects.filter(overridden, active=True, enrollments__student_id=student_id, enrollments__active=True)
    )


def budgets_for(*, student_id: int) -> list[Budget]:
    """The budgets (limit above 0) that cover a student: their current classes' overrides (an
    ended enrolment or an inactive class covers no one), else the settings. One small query:
    the student's classrooms."""
    classrooms = list(
        Classroom.objects.filter(active=True, enrollments__student_id=student_id, enrollments__active=True).values(
            "id", *(field for _setting, field in _SOURCES.values())
        )
    )
    budgets: set[Budget] = set()
    for (scope, period), (setting, field) in _SOURCES.items():
        default = Decimal(getattr(settings, setting) or 0)
        if scope == STUDENT and not classrooms:
            budgets.add(Budget(scope, period, default))
        for classroom in classrooms:
            override = classroom[field]
            if override is not None:
                budgets.add(Budget(scope, period, override, classroom["id"]))
            else:
                budgets.add(Budget(scope, period, default, classroom["id"] if scope == CLASSROOM else None))
    return sorted((b for b in budgets if b.limit > 0), key=lambda b: (b.scope, b.period, b.classroom_id or 0))


def budget_spend(*, student_id: int, budgets: list[Budget], now: datetime) -> dict[Budget, Decimal]:
    """What each budget has spent in its current period, in one aggregate query over LLMUsage:
    the student's rows, and with classroom budgets the rows of those classes' students, since the
    day (or month) began, read from the (student, created_at, cost) index."""
    day = Q(created_at__gte=period_start(DAILY, now))
    since = period_start(MONTHLY if any(b.period == MONTHLY for b in budgets) else DAILY, now)
    own = Q(student_id=student_id)
    chat = Q(purpose__in=CHAT_PURPOSES)  # the spend index's own condition
    sums: dict[str, Any] = {
        "own_daily": Sum("cost", filter=own & day),
        "own_monthly": Sum("cost", filter=own),
    }
    classroom_ids = sorted({b.classroom_id for b in budgets if b.scope == CLASSROOM and b.classroom_id})
    if classroom_ids:
        # One group per classroom: its students' rows (the student's own are in every group).
        rows = list(
            LLMUsage.objects.filter(
                chat,
                created_at__gte=since,
                student__enrollments__classroom_id__in=classroom_ids,
                student__enrollments__active=True,
            )
            .values(class_id=F("student__enrollments__classroom_id"))
            .annotate(**sums, daily=Sum("cost", filter=day), monthly=Sum("cost"))
            .order_by()
        )
    else:
        rows = [LLMUsage.objects.filter(own, chat, created_at__gte=since).aggregate(**sums)]
    spent: dict[tuple[str, str, int | None], Decimal] = {}
    for row in rows:
        for period in (DAILY, MONTHLY):
            spent[(STUDENT, period, None)] = max(spent.get((STUDENT, period, None), ZERO), row[f"own_{period}"] or ZERO)
            if "class_id" in row:
                spent[(CLASSROOM, period, row["class_id"])] = row[period] or ZERO
    held = _held(student_id=student_id, classroom_ids=classroom_ids, now=now)
    return {
        b: spent.get(key, ZERO) + held.get((b.scope, key[2]), ZERO)
        for b in budgets
        for key in [(b.scope, b.period, b.classroom_id if b.scope == CLASSROOM else None)]
    }


def _held(*, student_id: int, classroom_ids: list[int], now: datetime) -> dict[tuple[str, int | None], Decimal]:
    """The live holds (BudgetHold: turns in flight) that count in the budgets, in one query: the
    student's own, keyed (STUDENT, None), and with classroom budgets those of each class's
    students, keyed (CLASSROOM, class id). A hold counts in its day and its month alike."""
    live = BudgetHold.objects.filter(expires_at__gt=now)
    if not classroom_ids:
        own = live.filter(student_id=student_id).aggregate(amount=Sum("amount"))["amount"]
        return {(STUDENT, None): own or ZERO}
    held: dict[tuple[str, int | None], Decimal] = {}
    for row in (
        live.filter(student__enrollments__classroom_id__in=classroom_ids, student__enrollments__active=True)
        .values(class_id=F("student__enrollments__classroom_id"))
        .annotate(own=Sum("amount", filter=Q(student_id=student_id)), amount=Sum("amount"))
        .order_by()
    ):
        held[(STUDENT, None)] = max(held.get((STUDENT, None), ZERO), row["own"] or ZERO)
        held[(CLASSROOM, row["class_id"])] = row["amount"] or ZERO
    return held


class BudgetExceeded(ApplicationError):
    """429: a chat message or a question past a spend budget. A chat message is stored (the turn
    adds `student_message_id` to the details) but not answered; the same message sent again is
    answered once the budget resets (Retry-After). A question is not stored."""

    status_code = 429
    code = "budget_exceeded"
    retry_safe = True

    def __init__(self, *, budget: Budget, spent: Decimal, now: datetime, needed: Decimal = ZERO) -> None:
        resets_at = period_end(budget.period, now)
        wait = max(1, math.ceil((resets_at - now).total_seconds()))
        messages = {
            "student_daily": _(
                "Your daily budget for the tutor is used up (%(spent)s of %(limit)s USD). New messages are "
                "accepted again from %(resets_at)s."
            ),
            "student_monthly": _(
                "Your monthly budget for the tutor is used up (%(spent)s of %(limit)s USD). New messages are "
                "accepted again from %(resets_at)s."
            ),
            "classroom_daily": _(
                "Your class's daily budget for the tutor is used up (%(spent)s of %(limit)s USD). New messages "
                "are accepted again from %(resets_at)s."
            ),
            "classroom_monthly": _(
                "Your class's monthly budget for the tutor is used up (%(spent)s of %(limit)s USD). New messages "
                "are accepted again from %(resets_at)s."
            ),
            "asker_daily": _(
                "Your daily budget for questions is used up (%(spent)s of %(limit)s USD). New questions are "
                "accepted again from %(resets_at)s."
            ),
            "asker_monthly": _(
                "Your monthly budget for questions is used up (%(spent)s of %(limit)s USD). New questions are "
                "accepted again from %(resets_at)s."
            ),
        }
        # Enough decimals to tell the spend from a limit under a cent.
        places = max(2, -int(budget.limit.normalize().as_tuple().exponent))
        message = messages[budget.name] % {
            "spent": formats.number_format(spent, places, force_grouping=True),
            "limit": formats.number_format(budget.limit, places, force_grouping=True),
            "resets_at": resets_at.strftime("%Y-%m-%d %H:%M UTC"),
        }
        super().__init__(
            message,
            details={
                "budget": budget.name,
                "classroom_id": budget.classroom_id,
                "spent_usd": f"{spent.quantize(COST_QUANTUM):f}",
                "limit_usd": f"{budget.limit.normalize():f}",
                "resets_at": resets_at.isoformat().replace("+00:00", "Z"),
                "retry_after_seconds": wait,
                # The most the refused turn could have cost, which the budget had to have room for.
                "needed_usd": f"{needed.quantize(COST_QUANTUM):f}",
            },
        )
        self.retry_after = wait


def budget_hold(*, student_id: int, estimate: Decimal, seconds: float, now: datetime | None = None) -> int | None:
    """Check the budgets that cover the student for a turn that may cost up to `estimate`, and
    reserve it: raise BudgetExceeded when a budget's spend, with the holds of the turns in flight,
    has reached its limit or leaves less room than `estimate`; else record a hold of `estimate`
    that lives `seconds` (the longest a turn may run) and return its id, for `budget_release` once
    the turn's usage is stored. None when no budget applies or nothing needs reserving (a model
    priced 0).

    Atomic: in a transaction (the caller's, when there is one) that takes each budget's lock first
    (on PostgreSQL an advisory lock per student and per classroom, in one order; SQLite's write
    transactions are serial already), so that turns starting at once cannot all pass on the same
    room: the next check waits for this one's commit, and then counts its hold."""
    now = now or timezone.now()
    budgets = budgets_for(student_id=student_id)
    if not budgets:
        return None
    with transaction.atomic():
        _budgets_lock(student_id=student_id, budgets=budgets)
        spend = budget_spend(student_id=student_id, budgets=budgets, now=now)
        over = [b for b in budgets if spend[b] >= b.limit or spend[b] + estimate > b.limit]
        if over:
            budget = max(over, key=lambda b: (period_end(b.period, now), spend[b] / b.limit))
            raise BudgetExceeded(budget=budget, spent=spend[budget], now=now, needed=estimate)
        if estimate <= 0:
            return None
        BudgetHold.objects.filter(student_id=student_id, expires_at__lte=now).delete()
        hold = BudgetHold.objects.create(
            student_id=student_id, amount=estimate, expires_at=now + timedelta(seconds=seconds)
        )
    return hold.pk


def budget_release(*, hold_id: int | None) -> None:
    """Forget a turn's hold, once its usage is stored (in the same transaction or after it, never
    before: the spend is then counted twice for a moment, never not at all)."""
    if hold_id is not None:
        BudgetHold.objects.filter(pk=hold_id).delete()


# The advisory locks' key spaces (PostgreSQL's one 64-bit key: the space in the high bits).
_LOCK_SPACES = {STUDENT: 1 << 48, CLASSROOM: 2 << 48}


def _budgets_lock(*, student_id: int, budgets: list[Budget]) -> None:
    if connection.vendor != "postgresql":
        return
    keys = {_LOCK_SPACES[STUDENT] | student_id}
    keys |= {_LOCK_SPACES[CLASSROOM] | b.classroom_id for b in budgets if b.scope == CLASSROOM and b.classroom_id}
    with connection.cursor() as cursor:
        for key in sorted(keys):  # one order for every transaction: no deadlock between them
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [key])


def budget_check(*, student_id: int, now: datetime | None = None) -> None:
    """Raise BudgetExceeded if a budget covering the student is spent for its period (the one
    that resets last, when several are: the student waits for all of them). Two small queries,
    the second only when a budget applies; called when a chat turn claims its message."""
    now = now or timezone.now()
    budgets = budgets_for(student_id=student_id)
    if not budgets:
        return
    spend = budget_spend(student_id=student_id, budgets=budgets, now=now)
    over = [b for b in budgets if spend[b] >= b.limit]
    if over:
        budget = max(over, key=lambda b: (period_end(b.period, now), spend[b] / b.limit))
        raise BudgetExceeded(budget=budget, spent=spend[budget], now=now)


def asker_budgets() -> list[Budget]:
    """The asker budgets (limit above 0): BUDGET_ASKER_DAILY and BUDGET_ASKER_MONTHLY."""
    budgets = [
        Budget(ASKER, DAILY, Decimal(settings.BUDGET_ASKER_DAILY or 0)),
        Budget(ASKER, MONTHLY, Decimal(settings.BUDGET_ASKER_MONTHLY or 0)),
    ]
    return [b for b in budgets if b.limit > 0]


def asker_budget_check(*, asker_id: int, now: datetime | None = None) -> None:
    """Raise BudgetExceeded if a teacher's or staff member's asker budget is spent: the
    questions metered to them (LLMUsage.asker) since the day or month began. No query when no
    asker budget is set, one aggregate otherwise."""
    now = now or timezone.now()
    budgets = asker_budgets()
    if not budgets:
        return
    since = period_start(MONTHLY if any(b.period == MONTHLY for b in budgets) else DAILY, now)
    sums = LLMUsage.objects.filter(asker_id=asker_id, purpose=LLMUsage.Purpose.ASK, created_at__gte=since).aggregate(
        daily=Sum("cost", filter=Q(created_at__gte=period_start(DAILY, now))), monthly=Sum("cost")
    )
    spend = {b: sums[b.period] or ZERO for b in budgets}
    over = [b for b in budgets if spend[b] >= b.limit]
    if over:
        budget = max(over, key=lambda b: (period_end(b.period, now), spend[b] / b.limit))
        raise BudgetExceeded(budget=budget, spent=spend[budget], now=now)
