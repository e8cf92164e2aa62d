"""Writes of learning: quizzes from the create_quiz tool, a student's answers and their grading,
mastery per skill, homework tasks and their statuses (over REST and from the update_task tool).

Grading settles a quiz in one transaction with the quiz row locked: the score, the quiz's status,
the mastery of its skill and its review schedule change together, exactly once, whichever grader
(the submission, or the model's task for the last pending answer) finishes it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import User
from accounts.selectors import is_educator, memory_consent_given, student_get_visible
from core import background, events
from core.errors import Conflict, Forbidden
from learning import grading, mastery
from learning.models import Answer, Question, Quiz, QuizAttempt, SkillMastery, Task, TaskStatus
from learning.review_cards import review_card_record
from learning.selectors import classroom_get_visible, quiz_get, task_get, tasks_visible_to
from learning.validation import (
    QuizSpec,
    skill_key,
    validate_quiz_arguments,
    validate_task_arguments,
    validate_task_text,
)
from memory.models import AIMemory
from memory.services.records import approaches_outcome_record, memory_record_save

# A quiz with at least this share of right answers counts as a success for the approaches used before it.
QUIZ_PASS_SHARE = 0.6

# --- Quizzes from the tool ----------------------------------------------------------------------


def _fingerprint(spec: QuizSpec) -> str:
    return hashlib.sha256(json.dumps(asdict(spec), sort_keys=True).encode()).hexdigest()


def quiz_create_from_tool(
    *, student_id: int, conversation_id: int | None, arguments: object, message_id: int | None = None
) -> Quiz:
    """Store a quiz from the create_quiz tool's (parsed JSON) arguments for the conversation's
    student, with its questions, linked to the student message of the turn (`message_id`).

    Raises django ValidationError with a message for the model on invalid arguments (see
    learning.validation) or when the conversation has QUIZ_MAX_PER_CONVERSATION quizzes already.
    The same quiz created twice in one conversation (a retried turn) is stored once: the first
    is returned. The caller passes the student who owns the conversation; the conversation's
    turns run one at a time (its lease), so the cap needs no lock.
    """
    spec = validate_quiz_arguments(arguments)
    fingerprint = _fingerprint(spec)
    if conversation_id is not None:
        existing = Quiz.objects.filter(conversation_id=conversation_id, fingerprint=fingerprint).first()
        if existing is not None:
            return existing
        if Quiz.objects.filter(conversation_id=conversation_id).count() >= settings.QUIZ_MAX_PER_CONVERSATION:
            raise ValidationError(
                f"Quiz limit reached: at most {settings.QUIZ_MAX_PER_CONVERSATION} quizzes per conversation. "
                "Go on with the lesson without a new quiz."
            )
    try:
        with transaction.atomic():
            quiz = Quiz.objects.create(
                student_id=student_id,
                conversation_id=conversation_id,
                message_id=message_id,
                topic=spec.topic,
                skill=spec.skill,
                question_count=len(spec.questions),
                fingerprint=fingerprint,
            )
            # A QuestionSpec's fields are the question's.
            Question.objects.bulk_create(
                Question(quiz=quiz, position=position, **asdict(q)) for position, q in enumerate(spec.questions, 1)
            )
    except IntegrityError:
        # The same quiz stored meanwhile (quiz_unique_per_conversation).
        if conversation_id is None:
            raise
        existing = Quiz.objects.filter(conversation_id=conversation_id, fingerprint=fingerprint).first()
        if existing is None:
            raise
        return existing
    return quiz


# --- Answers and grading ------------------------------------------------------------------------


def _answers_checked(questions: dict[int, Question], answers: list[dict[str, Any]]) -> dict[int, str]:
    """{question id: answer} once every question is answered exactly once, by an id of this
    quiz, a multiple-choice one with one of its choices (or left blank); else ValidationError."""
    given: dict[int, str] = {}
    for item in answers:
        question_id, text = int(item["question"]), str(item["answer"])
        if question_id not in questions:
            message = _("Question %(id)s is not a question of this quiz.") % {"id": question_id}
            raise ValidationError({"answers": [message]})
        if question_id in given:
            raise ValidationError({"answers": [_("Question %(id)s is answered twice.") % {"id": question_id}]})
        question = questions[question_id]
        if (
            question.kind == Question.Kind.MULTIPLE_CHOICE
            and text.strip()
            and grading.choice_index(question.choices, text) is None
        ):
            message = _("The answer to question %(id)s must be one of its choices.") % {"id": question_id}
            raise ValidationError({"answers": [message]})
        given[question_id] = text
    missing = [str(pk) for pk in questions if pk not in given]
    if missing:
        message = _("Answer every question (an empty answer skips one); missing: %(ids)s.")
        raise ValidationError({"answers": [message % {"ids": ", ".join(missing)}]})
    return given


def quiz_answers_submit(
    *, user: Any, quiz_id: int, client_attempt_id: str, answers: list[dict[str, Any]]
) -> tuple[Quiz, bool]:
    """The student answers their quiz; returns (the quiz with its results, replayed).

    Multiple-choice and numeric answers are graded at once, short texts by normalised match; a
    short text that does not match is left pending and graded by the model after commit
    (learning.tasks.quiz_attempt_grade). A quiz is answered once: the same `client_attempt_id`
    again returns the stored result (replayed), another one is a Conflict. Another student's
    quiz is NotFound; a teacher of the student gets Forbidden.
    """
    quiz = quiz_get(user=user, quiz_id=quiz_id)
    if quiz.student_id != getattr(user, "pk", None):
        raise Forbidden(_("Only the student can answer their quiz."))
    with transaction.atomic():
        # Two submissions of one quiz (a double tap, a retry racing the first) run one at a time.
        locked = Quiz.objects.select_for_update().get(pk=quiz.pk)
        attempt = QuizAttempt.objects.filter(quiz=locked).first()
        if attempt is not None:
            if attempt.client_attempt_id != client_attempt_id:
                raise Conflict(_("This quiz has already been answered."))
            replayed = True
        else:
            replayed = False
            _attempt_create(locked, client_attempt_id=client_attempt_id, answers=answers)
    return quiz_get(user=user, quiz_id=quiz_id), replayed


def _attempt_create(quiz: Quiz, *, client_attempt_id: str, answers: list[dict[str, Any]]) -> None:
    questions = {q.pk: q for q in quiz.questions.order_by("position")}
    given = _answers_checked(questions, answers)
    now = timezone.now()
    attempt = QuizAttempt.objects.create(
        quiz=quiz, client_attempt_id=client_attempt_id, submitted_at=now, total=quiz.question_count
    )
    rows = []
    for question_id, question in questions.items():
        result = grading.grade(question, given[question_id])
        rows.append(
            Answer(
                attempt=attempt,
                question=question,
                given=given[question_id],
                result=result,
                graded_at=None if result == Answer.Result.PENDING else now,
            )
        )
    Answer.objects.bulk_create(rows)
    if any(row.result == Answer.Result.PENDING for row in rows):
        quiz.status = Quiz.Status.GRADING
        quiz.save(update_fields=["status"])
        # The answers are committed as pending: a broker that is down leaves them to `grading_sweep`.
        background.enqueue("learning.tasks.quiz_attempt_grade", attempt.pk)
    else:
        _quiz_settle(quiz, attempt, now)


def _quiz_settle(quiz: Quiz, attempt: QuizAttempt, now: datetime) -> None:
    """Score a fully graded attempt and record it in the skill's mastery (`quiz.graded` and
    `mastery.changed` emitted after commit). The caller holds the quiz row's lock and has checked
    that no answer is pending."""
    answers = list(attempt.answers.select_related("question").order_by("question__position"))
    graded = [a for a in answers if a.result in (Answer.Result.CORRECT, Answer.Result.INCORRECT)]
    results = [a.result == Answer.Result.CORRECT for a in graded]
    attempt.correct = sum(results)
    attempt.graded_at = now
    attempt.save(update_fields=["correct", "graded_at"])
    quiz.status = Quiz.Status.GRADED
    quiz.save(update_fields=["status"])
    events.emit(
        events.QUIZ_GRADED,
        student_id=quiz.student_id,
        data={
            "quiz_id": quiz.pk,
            "attempt_id": attempt.pk,
            "student_id": quiz.student_id,
            "correct": attempt.correct,
            "graded": len(graded),
            "total": attempt.total,
        },
    )
    if results:
        row = _mastery_record(quiz=quiz, results=results, now=now)
        # Under the same lock as the mastery row: the skill's review schedule (learning.review_cards).
        review_card_record(mastery=row, quiz=quiz, attempt=attempt, correct=sum(results), graded=len(results))
    # The quiz's memory (and its outcome for the approaches shown) only with consent to memory;
    # the quiz, its mastery and its review schedule are the learning record, kept either way.
    if results and memory_consent_given(quiz.student_id):
        previous = (
            AIMemory.objects.filter(student_id=quiz.student_id, kind=AIMemory.Kind.QUIZ_RESULT)
            .order_by("-created_at")
            .values_list("created_at", flat=True)
            .first()
        )
        _, created = memory_record_save(
            student_id=quiz.student_id,
            kind=AIMemory.Kind.QUIZ_RESULT,
            source_ref=f"quiz:{quiz.pk}",
            conversation_id=quiz.conversation_id,
            **quiz_result_text(quiz, graded, now),
        )
        if created:
            # The approaches the tutor was shown since the previous quiz: this one's outcome is theirs.
            approaches_outcome_record(
                student_id=quiz.student_id, passed=sum(results) >= QUIZ_PASS_SHARE * len(results), since=previous
            )


def quiz_result_text(quiz: Quiz, graded: list[Answer], now: datetime) -> dict[str, str]:
    """The title and content of a graded quiz's memory: the score, and each missed question with
    the student's answer and the expected one, so that recall can bring back what went wrong."""
    correct = sum(a.result == Answer.Result.CORRECT for a in graded)
    missed = [a for a in graded if a.result == Answer.Result.INCORRECT]
    lines = [
        f"Quiz on {quiz.topic} (skill: {quiz.skill}), {now.date().isoformat()}: "
        f"{correct} of {len(graded)} answers right."
    ]
    for answer in missed:
        lines.append(
            f"Missed question {answer.question.position}: {answer.question.prompt} "
            f"The student answered {answer.given or '(nothing)'!r}; expected {answer.question.expected_answer!r}."
        )
    return {"title": f"Quiz result {correct}/{len(graded)}: {quiz.topic}", "content": " ".join(lines)}


def _mastery_record(*, quiz: Quiz, results: list[bool], now: datetime) -> SkillMastery:
    """Add a quiz's results, in question order, to the mastery of its skill (created at the
    prior if new), with the row locked: two quizzes of one skill graded at once both count."""
    params = mastery.BktParams.from_settings()
    key = skill_key(quiz.skill)
    SkillMastery.objects.bulk_create(
        [
            SkillMastery(
                student_id=quiz.student_id, skill=quiz.skill, skill_key=key, estimate=params.p_init, estimated_at=now
            )
        ],
        ignore_conflicts=True,
    )
    row = SkillMastery.objects.select_for_update().get(student_id=quiz.student_id, skill_key=key)
    previous = row.estimate if row.attempts else None
    updated = mastery.record(
        estimate=row.estimate if row.attempts else None,
        history=row.history,
        elapsed=now - row.estimated_at,
        results=results,
        params=params,
    )
    row.skill = quiz.skill
    row.attempts += len(results)
    row.correct += sum(results)
    row.estimate = updated.estimate
    row.estimated_at = now
    row.history = updated.history
    row.trend = updated.trend
    row.latest_quiz = quiz
    row.latest_correct = sum(results)
    row.latest_total = len(results)
    row.save()
    events.emit(
        events.MASTERY_CHANGED,
        student_id=quiz.student_id,
        data={
            "mastery_id": row.pk,
            "student_id": quiz.student_id,
            "skill_key": key,
            "estimate": row.estimate,
            "previous_estimate": previous,
            "quiz_id": quiz.pk,
        },
    )
    return row


def answer_grade_store(*, answer_id: int, result: str, feedback: str = "") -> bool:
    """Store the grading model's verdict (`correct`, `incorrect`), or `ungraded` when it could
    not give one, on a pending answer; settle the quiz when it was the last pending answer.

    Returns False, changing nothing, when the answer is no longer pending (a redelivered task):
    the status guard under the quiz's lock makes a second delivery harmless.
    """
    quiz_id = Answer.objects.filter(pk=answer_id).values_list("attempt__quiz_id", flat=True).first()
    if quiz_id is None:
        return False
    with transaction.atomic():
        quiz = Quiz.objects.select_for_update().get(pk=quiz_id)
        answer = Answer.objects.select_related("attempt").get(pk=answer_id)
        if answer.result != Answer.Result.PENDING:
            return False
        now = timezone.now()
        answer.result = result
        answer.model_graded = result != Answer.Result.UNGRADED
        answer.feedback = feedback[:500]
        answer.graded_at = now
        answer.save(update_fields=["result", "model_graded", "feedback", "graded_at"])
        if not answer.attempt.answers.filter(result=Answer.Result.PENDING).exists():
            _quiz_settle(quiz, answer.attempt, now)
    return True


# --- Homework tasks -----------------------------------------------------------------------------


def task_create(
    *,
    teacher: Any,
    classroom_id: int | None,
    student_id: int | None,
    title: str,
    instructions: str = "",
    subject: str = "",
    due_at: datetime | None = None,
) -> Task:
    """A teacher assigns a task to a class they teach or to one of their students (exactly one).
    Another teacher's class or student is NotFound; a student is refused (Forbidden); a text
    over its limit or not storable is a ValidationError (learning.validation.validate_task_text)."""
    if not is_educator(teacher):
        raise Forbidden(_("Only a teacher can assign a task."))
    if (classroom_id is None) == (student_id is None):
        raise ValidationError({"classroom": [_("Give either a classroom or a student.")]})
    title, instructions, subject = validate_task_text(title=title, instructions=instructions, subject=subject)
    classroom = classroom_get_visible(user=teacher, classroom_id=classroom_id) if classroom_id is not None else None
    student = student_get_visible(user=teacher, student_id=student_id) if student_id is not None else None
    return Task.objects.create(
        teacher=teacher,
        classroom=classroom,
        student=student,
        title=title,
        instructions=instructions,
        subject=subject,
        due_at=due_at,
    )


def _status_save(*, task: Task, student_id: int, status: str, source: str, updated_by: Any, reason: str) -> TaskStatus:
    row, _created = TaskStatus.objects.update_or_create(
        task=task,
        student_id=student_id,
        defaults={"status": status, "source": source, "updated_by": updated_by, "reason": reason},
    )
    return row


def task_status_set(*, user: Any, task_id: int, status: str) -> Task:
    """The student sets their status on one of their tasks. A task they do not have is NotFound;
    a teacher (who reads statuses but does not set them) gets Forbidden."""
    task = task_get(user=user, task_id=task_id)
    if getattr(user, "role", None) != User.Role.STUDENT:
        raise Forbidden(_("Only the student sets the status of their task."))
    _status_save(
        task=task, student_id=user.pk, status=status, source=TaskStatus.Source.STUDENT, updated_by=user, reason=""
    )
    return task


def task_update_from_tool(*, student_id: int, arguments: object) -> TaskStatus:
    """Set the student's status on one of their tasks from the update_task tool's (parsed JSON)
    arguments {task, status, reason}. Raises django ValidationError with a message for the model
    on invalid arguments or a task that is not the student's. Setting the same status again just
    records the new reason."""
    spec = validate_task_arguments(arguments)
    student = User.objects.filter(pk=student_id, role=User.Role.STUDENT, is_active=True).first()
    task = tasks_visible_to(student).filter(pk=spec.task_id).first() if student is not None else None
    if task is None:
        raise ValidationError(
            {"task": [f"Task {spec.task_id} is not one of the student's tasks; use an id from the learning record."]}
        )
    return _status_save(
        task=task,
        student_id=student_id,
        status=spec.status,
        source=TaskStatus.Source.TUTOR,
        updated_by=None,
        reason=spec.reason,
    )
