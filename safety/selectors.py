"""Reads of safety flags, always through `flags_visible_to`, the app's one scoping primitive.

A teacher sees the flags of the students of their classes (accounts.selectors.students_visible_to);
a staff account sees every flag; a student, or anyone else, sees none: students never see flags,
their own included. A flag outside the scope is a 404, never a 403.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from django.db.models import BooleanField, Case, F, IntegerField, Q, QuerySet, Value, When, Window
from django.db.models.functions import RowNumber
from django.utils.translation import gettext as _

from accounts.models import Classroom, User
from accounts.selectors import (
    classrooms_visible_to,
    enrollments_current,
    is_educator,
    is_staff_account,
    student_get_visible,
    students_visible_to,
)
from conversations.models import Message
from core.errors import Forbidden, NotFound
from safety.models import Flag
from safety.types import RANK

# The messages shown on each side of a flag's message in its detail.
SURROUNDING_MESSAGES = 3


def flags_visible_to(user: Any) -> QuerySet[Flag]:
    """The flags `user` may read and act on: all for staff, their students' for a teacher or a
    school administrator, none
    for a student or anyone else (fails closed)."""
    if is_staff_account(user):
        return Flag.objects.all()
    if is_educator(user):
        return Flag.objects.filter(student__in=students_visible_to(user).values("pk"))
    return Flag.objects.none()


def flag_get_visible(*, user: Any, flag_id: Any) -> Flag:
    """One flag `user` may see, or NotFound (as for a flag that does not exist)."""
    try:
        pk = int(flag_id)
    except (TypeError, ValueError):
        raise NotFound(_("Flag not found.")) from None
    flag = flags_visible_to(user).filter(pk=pk).select_related("student").first()
    if flag is None:
        raise NotFound(_("Flag not found."))
    return flag


def _severity_rank() -> Case:
    return Case(
        *(When(severity=severity.value, then=Value(rank)) for severity, rank in RANK.items()),
        default=Value(0),
        output_field=IntegerField(),
    )


def flag_list(
    *,
    user: Any,
    status: str | None = None,
    severity: str | None = None,
    student_id: int | None = None,
    classroom_id: int | None = None,
    ordering: str = "newest",
) -> QuerySet[Flag]:
    """The flags `user` may see, filtered, newest first (`ordering="severity"`: open ones first,
    then the most severe, then the newest: the queue's order).

    A student is Forbidden (students never see flags). A named student `user` may not see is a
    NotFound, as on every other list; a classroom `user` does not teach (any, for staff) filters
    to nothing."""
    if getattr(user, "role", None) == User.Role.STUDENT:
        raise Forbidden(_("Safety flags are for teachers and staff."))
    qs = flags_visible_to(user)
    if status:
        qs = qs.filter(status=status)
    if severity:
        qs = qs.filter(severity=severity)
    if student_id is not None:
        if is_staff_account(user):
            if not User.objects.filter(pk=student_id, role=User.Role.STUDENT).exists():
                raise NotFound(_("Student not found."))
            qs = qs.filter(student_id=student_id)
        else:
            qs = qs.filter(student=student_get_visible(user=user, student_id=student_id))
    if classroom_id is not None:
        classrooms = Classroom.objects.filter(pk=classroom_id)
        if not is_staff_account(user):
            classrooms = classrooms.filter(pk__in=classrooms_visible_to(user).values("pk"))
        enrolled = enrollments_current().filter(classroom__in=classrooms.values("pk"))
        qs = qs.filter(student__in=enrolled.values("student_id"))
    qs = qs.select_related("student")
    if ordering == "severity":
        is_open = Case(When(status=Flag.Status.OPEN, then=Value(1)), default=Value(0), output_field=IntegerField())
        return qs.annotate(open_first=is_open, severity_rank=_severity_rank()).order_by(
            "-open_first", "-severity_rank", "-created_at", "-id"
        )
    return qs.order_by("-created_at", "-id")


def flag_detail(*, user: Any, flag_id: Any) -> Flag:
    """A flag `user` may see with what its detail shows read at once: its log, its deliveries,
    its message, file and cited items (NotFound otherwise)."""
    flag = flag_get_visible(user=user, flag_id=flag_id)
    return (
        flags_visible_to(user)
        .filter(pk=flag.pk)
        .select_related("student", "message", "file")
        .prefetch_related("actions__actor", "deliveries", "cited_messages", "cited_memories")
        .get()
    )


def flag_surrounding_messages(*, flag: Flag, around: int = SURROUNDING_MESSAGES) -> list[Message]:
    """The messages of the flag's conversation around what it is about, oldest first: `around`
    on each side of its message (the message included), or around its file's upload. Empty for
    a flag with neither (a pattern cites its messages instead). `flag` comes from
    `flag_get_visible`: whoever may see the flag may read this much of its conversation."""
    if flag.message_id is not None and flag.message is not None:
        seq = flag.message.seq
        messages = Message.objects.filter(conversation_id=flag.message.conversation_id)
        return list(messages.filter(seq__gte=seq - around, seq__lte=seq + around).order_by("seq"))
    if flag.file_id is not None and flag.file is not None:
        messages = Message.objects.filter(conversation_id=flag.file.conversation_id)
        at = flag.file.created_at
        before = list(messages.filter(created_at__lte=at).order_by("-seq")[:around])
        after = list(messages.filter(created_at__gt=at).order_by("seq")[:around])
        return [*reversed(before), *after]
    return []


def message_context(*, conversation_id: int, before_id: int, size: int) -> list[str]:
    """The texts of the student's last `size` messages of the conversation before message
    `before_id`, oldest first: what the learned screen reads a message after."""
    if size <= 0:
        return []
    rows = (
        Message.objects.filter(conversation_id=conversation_id, role=Message.Role.STUDENT, pk__lt=before_id)
        .order_by("-pk")
        .values_list("content", flat=True)[:size]
    )
    return list(reversed(rows))


def message_contexts(*, messages: Sequence[tuple[int, int]], size: int) -> dict[int, list[str]]:
    """`message_context` of each (message id, conversation id) of `messages`, by message id, read
    in one statement (the sweep's batch): the student messages of those conversations from the
    batch's first id to its last, and the last `size` of each before the first."""
    contexts: dict[int, list[str]] = {pk: [] for pk, _ in messages}
    if size <= 0 or not messages:
        return contexts
    first, last = min(pk for pk, _ in messages), max(pk for pk, _ in messages)
    before = Case(When(pk__lt=first, then=Value(True)), default=Value(False), output_field=BooleanField())
    rows = (
        Message.objects.filter(
            conversation_id__in={conversation for _, conversation in messages}, role=Message.Role.STUDENT, pk__lt=last
        )
        .annotate(newest=Window(RowNumber(), partition_by=[F("conversation_id"), before], order_by=F("pk").desc()))
        .filter(Q(pk__gte=first) | Q(newest__lte=size))
        .order_by("conversation_id", "pk")
        .values_list("conversation_id", "pk", "content")
    )
    ids: dict[int, list[int]] = defaultdict(list)
    texts: dict[int, list[str]] = defaultdict(list)
    for conversation, pk, content in rows:
        ids[conversation].append(pk)
        texts[conversation].append(content)
    for pk, conversation in messages:
        end = bisect.bisect_left(ids[conversation], pk)
        contexts[pk] = texts[conversation][max(0, end - size) : end]
    return contexts
