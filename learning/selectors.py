"""Reads of quizzes, mastery and tasks. Every read of a student's data goes through
accounts.selectors.students_visible_to (a row outside it is a 404), except `learning_record_for`,
which the chat turn calls for the student who owns the conversation.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db.models import Exists, OuterRef, Prefetch, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import Classroom, User
from accounts.selectors import (
    classrooms_visible_to,
    enrollments_current,
    is_educator,
    student_get_readable,
    student_get_visible,
    students_readable_by,
    students_visible_to,
)
from core.errors import NotFound
from learning.mastery import BktParams, decayed
from learning.models import TASKS_DUE_FIRST, Answer, Question, Quiz, SkillMastery, Task, TaskStatus
from learning.prompts import LearningRecord, SkillItem, TaskItem
from learning.review_cards import reviews_due_for_record

# --- Quizzes ------------------------------------------------------------------------------------


def quizzes_visible_to(user: Any) -> QuerySet[Quiz]:
    """The scoping primitive for quizzes: those of the students `user` may read
    (accounts.selectors.students_readable_by: a guardian's children's too; only the student
    answers one, learning.services)."""
    return Quiz.objects.filter(student__in=students_readable_by(user).values("pk"))


def quiz_list(*, user: Any, student_id: Any = None, conversation_id: int | None = None) -> QuerySet[Quiz]:
    """Quizzes `user` may read, newest first, narrowed to one visible student and/or one
    conversation. A student or a conversation `user` may not see is a NotFound (as their detail
    endpoints answer), not an empty list."""
    qs = quizzes_visible_to(user)
    if student_id not in (None, ""):
        qs = qs.filter(student=student_get_readable(user=user, student_id=student_id))
    if conversation_id is not None:
        # Learning sits below conversations: their scoping primitive is reached through the
        # quiz's foreign key rather than imported.
        conversations: Any = Quiz._meta.get_field("conversation").related_model
        if not conversations.objects.visible_to(user).filter(pk=conversation_id).exists():
            raise NotFound(_("Conversation not found."))
        qs = qs.filter(conversation_id=conversation_id)
    return qs.select_related("attempt").order_by("-created_at", "-id")


def quiz_get(*, user: Any, quiz_id: int) -> Quiz:
    """One quiz `user` may read, with its questions, its attempt and answers; else NotFound."""
    quiz = (
        quizzes_visible_to(user)
        .filter(pk=quiz_id)
        .select_related("attempt")
        .prefetch_related(
            Prefetch("questions", queryset=Question.objects.order_by("position")),
            Prefetch("attempt__answers", queryset=Answer.objects.order_by("question__position")),
        )
        .first()
    )
    if quiz is None:
        raise NotFound(_("Quiz not found."))
    return quiz


# --- Mastery ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SkillRow:
    student_id: int
    username: str
    skill: str
    estimate: float  # decayed to now
    trend: float
    attempts: int
    correct: int
    latest_quiz_id: int | None
    latest_correct: int
    latest_total: int
    last_result_at: datetime


def _skill_row(row: SkillMastery, *, now: datetime, params: BktParams, username: str = "") -> SkillRow:
    return SkillRow(
        student_id=row.student_id,
        username=username,
        skill=row.skill,
        estimate=round(decayed(row.estimate, elapsed=now - row.estimated_at, params=params), 4),
        trend=round(row.trend, 4),
        attempts=row.attempts,
        correct=row.correct,
        latest_quiz_id=row.latest_quiz_id,
        latest_correct=row.latest_correct,
        latest_total=row.latest_total,
        last_result_at=row.estimated_at,
    )


def student_skills(*, user: Any, student_id: int) -> list[SkillRow]:
    """The skills of one student `user` may read (their teacher, their guardian, or themself),
    by label."""
    student = student_get_readable(user=user, student_id=student_id)
    now, params = timezone.now(), BktParams.from_settings()
    rows = SkillMastery.objects.filter(student=student).order_by("skill_key")
    return [_skill_row(row, now=now, params=params, username=student.username) for row in rows]


def classroom_get_visible(*, user: Any, classroom_id: int) -> Classroom:
    """A classroom `user` teaches, or of a school they administer (accounts.selectors.
    classrooms_visible_to); any other (and any classroom for a student) is NotFound."""
    classroom = classrooms_visible_to(user).filter(pk=classroom_id).first()
    if classroom is None:
        raise NotFound(_("Classroom not found."))
    return classroom


@dataclass(frozen=True)
class ClassSkill:
    skill: str
    class_average: float  # of the assessed students' estimates
    students: list[SkillRow]  # the assessed students, weakest first


def classroom_skills(*, user: Any, classroom_id: int) -> tuple[Classroom, list[ClassSkill]]:
    """Per skill label, the class average and each assessed student's estimate, weakest skill
    first, for the classroom's teacher."""
    classroom = classroom_get_visible(user=user, classroom_id=classroom_id)
    now, params = timezone.now(), BktParams.from_settings()
    enrolled = enrollments_current().filter(classroom=classroom).values("student_id")
    rows = SkillMastery.objects.filter(student_id__in=enrolled).select_related("student").order_by("skill_key")
    by_skill: dict[str, list[SkillRow]] = {}
    labels: dict[str, str] = {}
    for row in rows:
        by_skill.setdefault(row.skill_key, []).append(
            _skill_row(row, now=now, params=params, username=row.student.username)
        )
        labels.setdefault(row.skill_key, row.skill)
    skills = [
        ClassSkill(
            skill=labels[key],
            class_average=round(sum(s.estimate for s in students) / len(students), 4),
            students=sorted(students, key=lambda s: (s.estimate, s.username)),
        )
        for key, students in by_skill.items()
    ]
    skills.sort(key=lambda s: (s.class_average, s.skill))
    return classroom, skills


# --- Tasks --------------------------------------------------------------------------------------


def tasks_visible_to(user: Any) -> QuerySet[Task]:
    """The scoping primitive for tasks. A student: the tasks set to them or to a class they are
    in. A teacher or a school administrator: the tasks of the classes they see and those set to
    one of their students. Anyone else: none."""
    role = getattr(user, "role", None)
    students = students_visible_to(user).values("pk")
    if role == User.Role.STUDENT:
        classrooms = enrollments_current().filter(student__in=students).values("classroom_id")
        return Task.objects.filter(Q(student__in=students) | Q(classroom_id__in=classrooms))
    if is_educator(user):
        return Task.objects.filter(Q(classroom__in=classrooms_visible_to(user).values("pk")) | Q(student__in=students))
    return Task.objects.none()


def task_get(*, user: Any, task_id: int) -> Task:
    task = tasks_visible_to(user).filter(pk=task_id).first()
    if task is None:
        raise NotFound(_("Task not found."))
    return task


def task_list(*, user: Any, student_id: Any = None) -> QuerySet[Task]:
    """Tasks `user` may see, due first (those without a due date last), then oldest first;
    with `student_id`, those set to that student or to a class they are in. A student `user`
    may not see is a NotFound (accounts.selectors.student_get_visible)."""
    qs = tasks_visible_to(user)
    if student_id not in (None, ""):
        student = student_get_visible(user=user, student_id=student_id)
        classrooms = enrollments_current().filter(student=student).values("classroom_id")
        qs = qs.filter(Q(student=student) | Q(classroom_id__in=classrooms))
    return qs.select_related("student").order_by(*TASKS_DUE_FIRST)


@dataclass(frozen=True)
class StudentTaskStatus:
    student_id: int
    username: str
    status: str
    set_by: str | None  # TaskStatus.Source; None: never set (todo)
    reason: str
    updated_at: datetime | None
    overdue: bool


@dataclass(frozen=True)
class TaskRow:
    task: Task
    statuses: list[StudentTaskStatus]


def is_overdue(due_at: datetime | None, status: str, now: datetime) -> bool:
    """Overdue is computed, never stored: a due date passed and the task not done."""
    return due_at is not None and due_at < now and status != TaskStatus.Status.DONE


def task_rows(*, user: Any, tasks: list[Task]) -> list[TaskRow]:
    """Each task with the statuses `user` may see: a student their own, a teacher every targeted
    student's (the class's current students, or the one student). Three queries for any number
    of tasks."""
    now = timezone.now()
    visible = set(students_visible_to(user).values_list("pk", flat=True))
    class_ids = {t.classroom_id for t in tasks if t.classroom_id is not None}
    members: dict[int, list[tuple[int, str]]] = {}
    if class_ids:
        enrolled = (
            enrollments_current()
            .filter(classroom_id__in=class_ids, student_id__in=visible)
            .order_by("student__username")
            .values_list("classroom_id", "student_id", "student__username")
        )
        for classroom_id, student_id, username in enrolled:
            members.setdefault(classroom_id, []).append((student_id, username))
    saved = {
        (s.task_id, s.student_id): s
        for s in TaskStatus.objects.filter(task__in=[t.pk for t in tasks], student_id__in=visible)
    }
    rows = []
    for task in tasks:
        if task.student is not None:
            targets = [(task.student.pk, task.student.username)] if task.student.pk in visible else []
        else:
            targets = members.get(task.classroom_id or 0, [])
        statuses = []
        for student_id, username in targets:
            row = saved.get((task.pk, student_id))
            status = row.status if row else TaskStatus.Status.TODO
            statuses.append(
                StudentTaskStatus(
                    student_id=student_id,
                    username=username,
                    status=status,
                    set_by=row.source if row else None,
                    reason=row.reason if row else "",
                    updated_at=row.updated_at if row else None,
                    overdue=is_overdue(task.due_at, status, now),
                )
            )
        rows.append(TaskRow(task=task, statuses=statuses))
    return rows


# --- The learning record of the prompt ------------------------------------------------------------


def tasks_exist(*, student_id: Any) -> Exists:
    """Whether any task is set for the student or one of their classes, done or not: an
    expression (`student_id` an int or an OuterRef) for the chat turn's claim to annotate. False
    means `learning_record_for` would find no task."""
    classrooms = enrollments_current().filter(student_id=student_id).values("classroom_id")
    return Exists(Task.objects.filter(Q(student_id=student_id) | Q(classroom_id__in=classrooms)))


def skills_exist(*, student_id: Any) -> Exists:
    """Whether the student has a skill with a graded attempt: an expression, as `tasks_exist`.
    False means `learning_record_for` would find no skill."""
    return Exists(SkillMastery.objects.filter(student_id=student_id, attempts__gt=0))


def learning_record_empty(*, now: datetime | None = None) -> LearningRecord:
    """The record of a student with no task and no skill (tasks_exist and skills_exist False),
    built without a query."""
    return LearningRecord(now=now or timezone.now(), tasks=[], recent=[], weakest=[])


def learning_record_for(*, student_id: int) -> LearningRecord:
    """What the tutor is told about the student's learning, in three queries whatever the history:
    the open tasks (not done), due first, up to LEARNING_RECORD_MAX_TASKS; the skills by latest
    result, up to LEARNING_RECORD_MAX_SKILLS; the weakest skills (lowest estimates now, mastered
    ones left out), up to LEARNING_RECORD_WEAKEST; the skills due for review, up to
    LEARNING_RECORD_MAX_REVIEWS (learning.review_cards.reviews_due_for_record).

    Called by the chat turn for the student who owns the conversation, so the scope is the
    student id itself (an inactive student has none).
    """
    now, params = timezone.now(), BktParams.from_settings()
    own_status = TaskStatus.objects.filter(task=OuterRef("pk"), student_id=student_id).values("status")[:1]
    classrooms = enrollments_current().filter(student_id=student_id).values("classroom_id")
    tasks = (
        Task.objects.filter(
            Q(student_id=student_id) | Q(classroom_id__in=classrooms),
            Q(student__isnull=True) | Q(student__is_active=True),
        )
        .annotate(own_status=Coalesce(Subquery(own_status), Value(TaskStatus.Status.TODO)))
        .exclude(own_status=TaskStatus.Status.DONE)
        .order_by(*TASKS_DUE_FIRST)
        .only("id", "title", "subject", "instructions", "due_at")[: settings.LEARNING_RECORD_MAX_TASKS]
    )
    task_items = [
        TaskItem(
            id=t.pk,
            title=t.title,
            subject=t.subject,
            instructions=t.instructions,
            due_at=t.due_at,
            status=t.own_status,
            overdue=is_overdue(t.due_at, t.own_status, now),
        )
        for t in tasks
    ]
    rows = (
        SkillMastery.objects.filter(student_id=student_id, student__is_active=True, attempts__gt=0)
        .select_related("latest_quiz")
        .order_by("-estimated_at", "-id")[: settings.LEARNING_RECORD_SKILL_SCAN]
    )
    skills = [
        SkillItem(
            skill=row.skill,
            estimate=decayed(row.estimate, elapsed=now - row.estimated_at, params=params),
            trend=row.trend,
            attempts=row.attempts,
            correct=row.correct,
            last_topic=row.latest_quiz.topic if row.latest_quiz else "",
            last_correct=row.latest_correct,
            last_total=row.latest_total,
            last_at=row.estimated_at,
        )
        for row in rows
    ]
    weakest = sorted((s for s in skills if s.estimate < settings.LEARNING_MASTERED_ESTIMATE), key=lambda s: s.estimate)
    return LearningRecord(
        now=now,
        tasks=task_items,
        recent=skills[: settings.LEARNING_RECORD_MAX_SKILLS],
        weakest=weakest[: settings.LEARNING_RECORD_WEAKEST],
        reviews=reviews_due_for_record(student_id=student_id, now=now),
    )
