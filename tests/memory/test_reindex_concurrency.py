"""The re-index after a language change under concurrent changes (PostgreSQL's index,
memory.search.postings): re-indexes of one student run one at a time, beside new memories and
archives written meanwhile, and each finishes; the statistics end exact (as counted again from
the postings), the index holds every active memory once, in the student's last language."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection

from accounts.models import User
from memory.language import user_language_change
from memory.models import AIMemory
from memory.search.backend import search_backend
from memory.services.lifecycle import memory_archive, student_memories_reindex
from tests.memory.recall_helpers import note

pytestmark = [pytest.mark.postgresql_only, pytest.mark.django_db(transaction=True)]

TOPICS = ["fractions", "long division", "volcanoes", "photosynthesis", "the water cycle", "decimals", "poetry"]


def statistics(student_id: int) -> tuple[Any, list[Any]]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT n_docs, total_len FROM memory_student_stats WHERE student_id = %s", [student_id])
        student = cursor.fetchone()
        cursor.execute("SELECT term, df FROM memory_term_stats WHERE student_id = %s ORDER BY term", [student_id])
        return student, cursor.fetchall()


def in_threads(*jobs: Callable[[], None]) -> list[BaseException]:
    """Run the jobs at once, each in a thread with its own connection; the errors they raised."""
    errors: list[BaseException] = []
    start = threading.Barrier(len(jobs))

    def run(job: Callable[[], None]) -> None:
        try:
            start.wait()
            job()
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(job,)) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def test_concurrent_language_changes_reindexes_and_writes_all_finish_with_an_exact_index(
    school: dict[str, Any],
) -> None:
    alice, teacher = school["alice"], school["teacher_a"]
    memories = [
        note(alice, f"Lesson {i} about {TOPICS[i % len(TOPICS)]}", f"Worked on {TOPICS[(i * 3) % len(TOPICS)]} {i}.")
        for i in range(60)
    ]

    def change_and_reindex(language: str) -> Callable[[], None]:
        def job() -> None:
            for _ in range(3):
                user_language_change(user=User.objects.get(pk=alice.pk), language=language)
                student_memories_reindex(student_id=alice.pk, batch_size=7)

        return job

    def write() -> None:
        for i in range(10):
            note(alice, f"New lesson {i} about {TOPICS[i % len(TOPICS)]}", f"Practised {TOPICS[i % 3]} again.")

    def archive() -> None:
        for memory in memories[::6]:
            memory_archive(user=teacher, memory_id=memory.pk, reason="Written about another student.")

    errors = in_threads(
        change_and_reindex("fr"),
        change_and_reindex("en"),
        change_and_reindex("fr"),
        change_and_reindex("en"),
        write,
        archive,
    )
    assert errors == [], errors

    # The index holds each active memory once, and the statistics the writers kept are those
    # counted again from the postings.
    active = set(AIMemory.objects.filter(student=alice, status=AIMemory.Status.ACTIVE).values_list("pk", flat=True))
    assert len(active) == 60 + 10 - 10
    assert search_backend().indexed_ids(alice.pk) == active
    kept = statistics(alice.pk)
    search_backend().refresh_statistics(alice.pk)
    assert statistics(alice.pk) == kept


def test_the_reindex_task_retries_a_deadlock_or_a_duplicate_with_celerys_backoff(
    school: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What may still fail against a concurrent writer is retried by Celery (its own exponential
    backoff with jitter): the task ends with the re-index done."""
    from django.db import IntegrityError, OperationalError

    from memory import tasks

    alice = school["alice"]
    note(alice, "Fractions with unlike denominators", "Found common denominators.")
    failures = [OperationalError("deadlock detected"), IntegrityError("duplicate key value")]
    real = tasks.student_memories_reindex

    def flaky(**kwargs: Any) -> int:
        if failures:
            raise failures.pop(0)
        return real(**kwargs)

    monkeypatch.setattr(tasks, "student_memories_reindex", flaky)
    task: Any = tasks.student_reindex
    assert task.retry_backoff is True and task.retry_jitter is True
    assert tasks.student_reindex.apply(args=(alice.pk,)).get() == 1
    assert failures == []
