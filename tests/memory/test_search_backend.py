"""The search interface (memory.search.backend) and memory's background work by task name."""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest
from django.db import connection

from accounts.models import User
from memory.language import user_language_change
from memory.search import embeddings
from memory.search.backend import search_backend
from memory.search.postgres import PostgresSearch
from memory.search.sqlite import SqliteSearch
from memory.services.lifecycle import memory_archive
from memory.tasks import memory_embed
from tests.memory.recall_helpers import note

pytestmark = pytest.mark.django_db


def test_the_backend_is_the_database_vendors_one_instance():
    backend = search_backend()
    assert backend is search_backend()
    assert backend.vendor == connection.vendor
    expected = PostgresSearch if connection.vendor == "postgresql" else SqliteSearch
    assert isinstance(backend, expected)


def test_a_memory_is_indexed_found_and_dropped_through_the_backend(school):
    alice, bob, teacher = school["alice"], school["bob"], school["teacher_a"]
    kept = note(alice, "Long division with remainders today", "Practised dividing by two-digit numbers.")
    gone = note(alice, "Volcano project for the science fair", "Built a baking soda volcano.")
    note(bob, "Long division with remainders too", "Bob divided by one-digit numbers.")
    backend = search_backend()
    assert backend.indexed_ids(alice.pk) == {kept.pk, gone.pk}
    assert [pk for pk, _ in backend.lexical(student_id=alice.pk, query="dividing", language="en", limit=5)] == [kept.pk]
    n_docs, dfs = backend.document_frequencies(student_id=alice.pk, terms=["divis", "volcano", "absent"])
    assert (n_docs, dfs) == (2, {"divis": 1, "volcano": 1, "absent": 0})

    memory_archive(user=teacher, memory_id=gone.pk, reason="Written about another student.")
    assert backend.indexed_ids(alice.pk) == {kept.pk}
    assert backend.lexical(student_id=alice.pk, query="volcano", language="en", limit=5) == []


def test_a_write_enqueues_its_embedding_and_extraction_by_task_name(
    school, settings, django_capture_on_commit_callbacks
):
    """The services name memory's tasks (core.background.enqueue): none is imported by them."""
    settings.EMBEDDINGS_BACKEND = "openai"
    settings.EMBEDDINGS_BASE_URL = "http://127.0.0.1:9/v1"
    settings.MEMORY_EXTRACTION_ENABLED = True
    with mock.patch("core.background.send") as send, django_capture_on_commit_callbacks(execute=True):
        memory = note(school["alice"], "Fractions with unlike denominators", "Found common denominators.")
    assert send.call_args_list == [
        mock.call("memory.tasks.memory_embed", memory.pk),
        mock.call("memory.tasks.memory_facts_extract", memory.pk),
    ]


def test_a_language_change_enqueues_the_reindex_by_task_name(school, django_capture_on_commit_callbacks):
    alice: User = school["alice"]
    other = "fr" if alice.language != "fr" else "en"
    with mock.patch("core.background.send") as send, django_capture_on_commit_callbacks(execute=True):
        user_language_change(user=alice, language=other)
    assert send.call_args_list == [mock.call("memory.tasks.student_reindex", alice.pk)]


def test_memory_embed_is_retried_by_celery_then_gives_up(school, settings, monkeypatch):
    """An embedder down is retried (autoretry) up to EMBEDDINGS_MAX_RETRIES; the last try returns
    0 instead of failing, and the sweep picks the memory up later."""
    memory = note(school["alice"], "Fractions with unlike denominators", "Found common denominators.")
    settings.EMBEDDINGS_MAX_RETRIES = 2
    calls: list[Any] = []

    def down(**kwargs: Any) -> int:
        calls.append(kwargs)
        raise embeddings.EmbedderUnavailable("connection refused")

    monkeypatch.setattr("memory.tasks.memory_embeddings_write", down)
    monkeypatch.setattr("core.background.retry_countdown", lambda task: 0.0)
    result = memory_embed.apply(args=[memory.pk])
    assert result.successful() and result.get() == 0
    assert len(calls) == 3
