"""The chat turn's cheaper machinery keeps its behaviour: a message shown as MessageOutput shows
it, and a database step on the thread pool hands the language it chose back even when it raises."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from django.utils import translation

from conversations.models import Conversation, Message
from conversations.serializers import MessageOutput
from conversations.turn import feed
from core.db import db_step


def test_message_data_is_the_serializer_s(school):
    conversation = Conversation.objects.create(student=school["alice"], last_activity_at="2026-12-03T08:00:00Z")
    asked = Message.objects.create(
        conversation=conversation, seq=1, role="student", content="½ + ¼?", client_message_id="c1", token_count=3
    )
    reply = Message.objects.create(
        conversation=conversation, seq=2, role="tutor", content="¾.", reply_to=asked, prompt_tokens=9, model="m"
    )
    for message in (asked, reply, Message.objects.get(pk=reply.pk)):
        assert feed.message_data(message) == dict(MessageOutput(message).data)


class Refused(Exception):
    pass


def _choose_and_raise() -> None:
    translation.activate("fr")
    raise Refused("refused")


def _choose() -> str:
    translation.activate("fr")
    return "ok"


@pytest.mark.django_db  # a step takes its connection from the pool first (core.db.connection_borrow)
@pytest.mark.parametrize("threads", [0, 2])
def test_a_step_s_language_comes_back_also_when_it_raises(settings, threads):
    settings.DB_STEP_THREADS = threads

    async def run() -> tuple[str, str]:
        with translation.override("en"):
            assert await db_step(_choose) == "ok"
            after_return = translation.get_language()
            translation.activate("en")
            with pytest.raises(Refused):
                await db_step(_choose_and_raise)
            return after_return, translation.get_language()

    assert asyncio.run(run()) == ("fr", "fr")


def test_an_asynchronous_send_has_the_headers_of_the_middleware(school, clients, llm):
    """Under ASGI, with the request's checks moved into the claim's database step, the
    middleware still sets its headers: security, CSP, frame options, and the student's language (a French student's
    refusal is in French, Content-Language fr)."""
    from asgiref.sync import async_to_sync

    from tests.conversations.test_streaming import async_client
    from tests.conversations.test_turn import start

    llm.script("chat", {"content": "Bien."})
    school["alice"].language = "fr"
    school["alice"].save(update_fields=["language"])
    cid = start(clients["alice"])
    client = async_client(school["alice"])
    path = f"/api/v1/conversations/{cid}/messages/"

    async def post(content: str, cmid: str) -> Any:
        return await client.post(path, {"content": content, "client_message_id": cmid})

    sent = async_to_sync(post)("Bonjour", "h1")
    refused = async_to_sync(post)(" ", "h2")
    for response in (sent, refused):
        assert response["X-Frame-Options"] == "DENY"
        assert response["X-Content-Type-Options"] == "nosniff"
        assert "Content-Security-Policy" in response
        assert response["Content-Language"] == "fr"
    assert sent.status_code == 201, sent.content
    assert refused.status_code == 400
    assert "vide" in refused.json()["error"]["details"]["content"][0]
