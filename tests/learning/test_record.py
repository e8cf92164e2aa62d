"""The learning record the chat turn puts in the prompt: what it holds, in a constant number of
queries, and the article's story (Monday a quiz at 3/5, Wednesday the tutor knows)."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from learning.models import SkillMastery, Task, TaskStatus
from learning.prompts import learning_record_block
from learning.selectors import learning_record_for
from learning.services import quiz_answers_submit, task_update_from_tool
from tests.learning.conftest import ALL_RIGHT, SKILL, THREE_OF_FIVE, answers_body, make_quiz


def answered(student, given, **changes):
    quiz = make_quiz(student, **changes)
    body = answers_body(quiz, given, attempt=f"q{quiz.pk}")
    quiz_answers_submit(
        user=student, quiz_id=quiz.pk, client_attempt_id=body["client_attempt_id"], answers=body["answers"]
    )
    return quiz


def test_the_record_holds_open_tasks_due_first_and_results_per_skill(school):
    """Open tasks only (done ones left out; their own status, not a classmate's), due first; skills
    by latest result; the weakest by today's estimate, mastered ones left out."""
    alice, teacher, now = school["alice"], school["teacher_a"], timezone.now()
    soon = Task.objects.create(teacher=teacher, classroom=school["class_a"], title="Soon", due_at=now + timedelta(1))
    late = Task.objects.create(teacher=teacher, student=alice, title="Late", due_at=now - timedelta(2))
    undated = Task.objects.create(teacher=teacher, classroom=school["class_a"], title="Undated")
    done = Task.objects.create(teacher=teacher, student=alice, title="Done", due_at=now)
    TaskStatus.objects.create(task=done, student=alice, status="done", source="student", updated_by=alice)
    TaskStatus.objects.create(
        task=soon, student=school["bob"], status="done", source="student", updated_by=school["bob"]
    )
    Task.objects.create(teacher=school["teacher_b"], classroom=school["class_b"], title="Not hers")
    answered(alice, THREE_OF_FIVE)
    answered(alice, ALL_RIGHT, skill="comparing fractions")

    record = learning_record_for(student_id=alice.pk)
    assert [(t.id, t.overdue) for t in record.tasks] == [(late.pk, True), (soon.pk, False), (undated.pk, False)]
    assert [s.skill for s in record.recent] == ["comparing fractions", SKILL]
    # 5/5 puts the estimate above LEARNING_MASTERED_ESTIMATE: not among the weakest.
    assert [s.skill for s in record.weakest] == [SKILL]
    SkillMastery.objects.filter(skill="comparing fractions").update(estimate=0.2)
    assert [s.skill for s in learning_record_for(student_id=alice.pk).weakest] == ["comparing fractions", SKILL]


def test_the_record_takes_three_queries_whatever_the_history(school, django_assert_num_queries):
    """A student with many tasks and results: still three queries (tasks, skills, due reviews),
    and the lists are bounded."""
    alice = school["alice"]
    for i in range(3):
        answered(alice, THREE_OF_FIVE, skill=f"skill {i}")
    with django_assert_num_queries(3):
        small = learning_record_for(student_id=alice.pk)
    for i in range(3, 12):
        answered(alice, ALL_RIGHT, skill=f"skill {i}")
    for i in range(15):
        Task.objects.create(teacher=school["teacher_a"], student=alice, title=f"Task {i}")
    with django_assert_num_queries(3):
        large = learning_record_for(student_id=alice.pk)
    assert len(small.recent) == 3
    assert len(large.tasks) == settings.LEARNING_RECORD_MAX_TASKS
    assert len(large.recent) == settings.LEARNING_RECORD_MAX_SKILLS
    assert len(large.weakest) <= settings.LEARNING_RECORD_WEAKEST


def test_the_articles_story(school):
    """Monday: alice struggles with fractions, the tutor gives a quiz, she gets 3 of 5, and her
    teacher has set an exercise. Wednesday: the record for her new conversation says 3/5, names
    the weak skill and the open task, with the task's id for update_task."""
    alice = school["alice"]
    monday = timezone.now() - timedelta(days=2)
    task = Task.objects.create(
        teacher=school["teacher_a"],
        classroom=school["class_a"],
        title="Fractions worksheet, exercises 1-10",
        subject="Maths",
        due_at=timezone.now() + timedelta(days=1),
    )
    answered(alice, THREE_OF_FIVE, topic="Multiplying fractions", skill="multiplying fractions")
    SkillMastery.objects.filter(student=alice).update(estimated_at=monday)

    block = learning_record_block(
        learning_record_for(student_id=alice.pk), budget_tokens=settings.LEARNING_RECORD_TOKEN_BUDGET
    )
    assert f"- task {task.pk} [Maths]: Fractions worksheet, exercises 1-10" in block
    assert f"multiplying fractions: last quiz 3/5 on {monday.date().isoformat()} (Multiplying fractions)" in block
    assert block.index("Weakest skills:") < block.index("multiplying fractions")

    # She tells the tutor she finished it: the tutor records it, and it leaves the record.
    task_update_from_tool(
        student_id=alice.pk, arguments={"task": task.pk, "status": "done", "reason": "Finished all ten"}
    )
    assert f"task {task.pk}" not in learning_record_block(learning_record_for(student_id=alice.pk), budget_tokens=600)
