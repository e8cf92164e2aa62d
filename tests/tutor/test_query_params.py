"""Query parameters are validated like a body: on every list endpoint, a parameter given empty
(`?status=`) or unparsable (`?page_size=null`) is a 400 in the envelope naming it, never taken
as absent (which would answer another page, another filter, or everything)."""

from __future__ import annotations

import pytest
from django.utils import timezone

from conversations.models import Conversation

PAGINATED = [
    "/api/v1/students/",
    "/api/v1/conversations/",
    "/api/v1/memories/",
    "/api/v1/memory-reviews/",
    "/api/v1/quizzes/",
    "/api/v1/tasks/",
]
PAGE_PARAMS = [
    "page_size=null",
    "page_size=",
    "page_size=0",
    "page_size=-3",
    "page_size=101",
    "page=",
    "page=abc",
    "page=0",
]
FILTERS = [
    ("/api/v1/conversations/", "student="),
    ("/api/v1/conversations/", "student=abc"),
    ("/api/v1/conversations/", "student=0"),
    ("/api/v1/memories/", "status="),
    ("/api/v1/memories/", "kind="),
    ("/api/v1/memories/", "student="),
    ("/api/v1/memory-reviews/", "status="),
    ("/api/v1/memory-reviews/", "student="),
    ("/api/v1/quizzes/", "student="),
    ("/api/v1/quizzes/", "conversation="),
    ("/api/v1/usage/", "until="),
    ("/api/v1/usage/", "until=null"),
    ("/api/v1/usage/", "since="),
    ("/api/v1/usage/", "student="),
    ("/api/v1/conversations/{cid}/", "limit="),
    ("/api/v1/conversations/{cid}/", "before="),
    ("/api/v1/conversations/{cid}/messages/", "limit="),
    ("/api/v1/conversations/{cid}/messages/", "limit=null"),
    ("/api/v1/conversations/{cid}/messages/", "before="),
]
CASES = [(url, param) for url in PAGINATED for param in PAGE_PARAMS] + FILTERS


@pytest.mark.parametrize(("url", "param"), CASES)
def test_an_empty_or_invalid_query_parameter_is_a_400_naming_it(clients, school, url, param) -> None:
    """The envelope's `invalid`, with the parameter in `details` (the schema allows the 400)."""
    conversation = Conversation.objects.create(
        student=school["alice"], subject="Maths", last_activity_at=timezone.now()
    )
    resp = clients["teacher_a"].get(f"{url.format(cid=conversation.pk)}?{param}")
    assert resp.status_code == 400, (resp.status_code, resp.content)
    error = resp.json()["error"]
    assert error["code"] == "invalid"
    assert list(error["details"]) == [param.split("=")[0]], error


@pytest.mark.parametrize("url", PAGINATED)
def test_valid_pages_still_answer(clients, url) -> None:
    """A page size from 1 to 100 and page 1 answer 200; a page past the last is still a 404."""
    for param in ("page_size=1", "page_size=100", "page=1", "page=1&page_size=20"):
        assert clients["teacher_a"].get(f"{url}?{param}").status_code == 200, (url, param)
    assert clients["teacher_a"].get(f"{url}?page=999").status_code == 404


def test_an_empty_search_is_no_search(clients, school) -> None:
    """`?q=` (empty) is allowed on /memories/: the list, as without q (documented)."""
    assert clients["alice"].get("/api/v1/memories/?q=").status_code == 200
