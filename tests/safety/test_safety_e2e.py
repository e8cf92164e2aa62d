"""The whole path on real services: a student's crisis message to the production server (a real
ASGI process), its flag, and the email and the signed webhook a real Celery worker sends, within
5 s, in French and in English; the moderation endpoint down (refused, timing out, failing, a
closed port) changes nothing for the student; the pattern rule through the API; an uploaded
file screened by the worker."""

from __future__ import annotations

import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx2
import pytest

from conversations.models import Message
from llm.models import LLMUsage
from safety.models import Delivery, Flag, FlagAction, SafetyContact
from tests.conftest import Worker, free_port, headers, new_conversation, wait_for
from tests.conversations.test_turn import send, start
from tests.safety.test_alerts import SECRET, Receiver

CRISES = {
    "en": "honestly i want to kill myself tonight, i'm done",
    "fr": "je veux plus vivre, je vais en finir ce soir",
}


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver().start()
    yield r
    r.stop()


@pytest.fixture
def safety_env(worker_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """The worker's and the server's environment: email to files, quick delivery retries."""
    worker_env.update(
        {
            "EMAIL_BACKEND": "django.core.mail.backends.filebased.EmailBackend",
            "EMAIL_FILE_PATH": str(tmp_path / "mail"),
            "SAFETY_DELIVERY_BACKOFF_SECONDS": "0.2",
            "SAFETY_QUEUE_URL": "https://tutor.example/app/teacher/safety/",
        }
    )
    return worker_env


@pytest.fixture
def safety_worker(safety_env: dict[str, str], llm: Any) -> Iterator[Worker]:
    worker = Worker(llm, safety_env["CELERY_QUEUE"], safety_env).start()
    yield worker
    worker.stop()


def mails(env: dict[str, str]) -> list[str]:
    folder = Path(env["EMAIL_FILE_PATH"])
    return [p.read_text() for p in sorted(folder.glob("*.log"))] if folder.exists() else []


@pytest.mark.worker
@pytest.mark.parametrize("language", ["en", "fr"])
def test_a_crisis_reaches_the_teacher_and_the_safety_lead_within_5_seconds(
    safety_env, safety_worker, server, llm, school, receiver, language
):
    teacher = school["teacher_a"]
    teacher.email, teacher.language = "teacher.a@school.example", language
    teacher.save(update_fields=["email", "language"])
    SafetyContact.objects.create(name="Safeguarding lead", webhook_url=receiver.url, webhook_secret=SECRET, order=1)
    alice = school["alice"]
    alice.language = language
    alice.save(update_fields=["language"])
    cid = new_conversation(server, alice)

    sent_at = time.monotonic()
    resp = httpx2.post(
        f"{server}/api/v1/conversations/{cid}/messages/",
        json={"content": CRISES[language], "client_message_id": f"crisis-{language}"},
        headers=headers(alice),
        timeout=30,
    )
    assert resp.status_code == 201, resp.text
    body = resp.json()
    assert body["safety"] and body["safety"][0]["resources"]
    flag = wait_for(lambda: Flag.objects.filter(message_id=body["student_message"]["id"]).first())
    assert (flag.severity, flag.category) == ("crisis", "self_harm")

    wait_for(lambda: Delivery.objects.filter(flag=flag, status="sent").count() == 2)
    elapsed = time.monotonic() - sent_at
    assert elapsed < 5, elapsed
    [mail] = mails(safety_env)
    assert "teacher.a@school.example" in mail
    assert CRISES[language] not in mail  # no child's text in an alert
    [payload] = receiver.verified()
    assert payload["data"]["flag_id"] == flag.pk and payload["data"]["severity"] == "crisis"
    assert CRISES[language] not in str(payload)
    notified = set(FlagAction.objects.filter(flag=flag, kind="notified").values_list("recipient", flat=True))
    assert notified == {"email:teacher.a@school.example", f"webhook:{receiver.url}"}


@pytest.fixture
def moderation(llm: Any, settings: Any) -> Any:
    settings.SAFETY_BACKENDS = ["moderation"]
    settings.SAFETY_MODERATION_BASE_URL = llm.base_url
    settings.SAFETY_MODERATION_API_KEY = "test-key"
    settings.SAFETY_BACKEND_TIMEOUT_SECONDS = 0.5
    settings.SAFETY_TURN_WAIT_SECONDS = 0.3
    return settings


DOWN = {
    "refused": {"status": 401, "body": {"error": {"message": "bad key"}}},
    "failing": {"status": 500, "body": {"error": {"message": "boom"}}},
    "timing out": {"delay": 3.0},
    "dropping": {"drop": True},
}


@pytest.mark.parametrize("how", [*DOWN, "closed port"])
@pytest.mark.parametrize("language", ["en", "fr"])
def test_a_moderation_endpoint_down_changes_nothing_for_the_student(school, clients, llm, moderation, how, language):
    if how == "closed port":
        moderation.SAFETY_MODERATION_BASE_URL = f"http://127.0.0.1:{free_port()}/v1"
    else:
        llm.script("moderations", *[DOWN[how]] * 4)  # both messages and both replies
    # The reply to the crisis takes a second, as a real model's would: the endpoint's failure
    # (at most SAFETY_BACKEND_TIMEOUT_SECONDS) is recorded while the turn runs (the test client
    # ends the turn's event loop with the response; a server's loop lives on).
    llm.script("chat", {"content": "Let's look at it together."}, {"content": "I'm glad you told me.", "delay": 1.0})
    cid = start(clients["alice"])
    ordinary = send(clients["alice"], cid, content="Can you check my answer, 3/4 + 1/8 = 7/8?", cmid="o1")
    assert ordinary.status_code == 201, ordinary.content
    assert ordinary.json()["reply"]["content"] == "Let's look at it together."
    crisis = send(clients["alice"], cid, content=CRISES[language], cmid="c1")
    assert crisis.status_code == 201, crisis.content
    assert crisis.json()["safety"], "the offline line still ran"
    flag = wait_for(lambda: Flag.objects.filter(source="message").first())
    assert flag.severity == "crisis"
    # Which backends answered: the offline line did, the endpoint did not (and why).
    wait_for(lambda: "moderation" in Flag.objects.get(pk=flag.pk).scores)
    scores = Flag.objects.get(pk=flag.pk).scores
    assert scores["offline"]["answered"] is True
    assert scores["moderation"]["answered"] is False and scores["moderation"]["error"]
    assert Message.objects.filter(conversation_id=cid, role="tutor").count() == 2


def test_the_moderation_endpoint_adds_what_the_offline_line_missed(school, clients, llm, moderation):
    llm.script("moderations", {"scores": {"self-harm/intent": 0.93}})
    cid = start(clients["alice"])
    body = send(clients["alice"], cid, content="everything feels grey lately [quiet]").json()
    assert body["safety"], "the endpoint answered within the turn's wait: the turn changed"
    flag = Flag.objects.get(message_id=body["student_message"]["id"])
    assert flag.severity == "crisis"
    assert flag.scores["moderation"]["answered"] is True


DISTRESS = {
    "en": [
        "i feel so alone lately, nobody talks to me",
        "i cry every night and i don't know why",
        "i feel empty all the time",
    ],
    "fr": [
        "je me sens trop seule en ce moment, personne me parle",
        "je pleure tous les soirs sans savoir pourquoi",
        "je me sens vide tout le temps",
    ],
}


@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_pattern_rule_fires_on_the_third_distress_message_and_not_the_second(school, clients, llm, language):
    for number, text in enumerate(DISTRESS[language], start=1):
        cid = start(clients["alice"])
        assert send(clients["alice"], cid, content=text, cmid=f"d{number}").status_code == 201
        wait_for(lambda n=number: Flag.objects.filter(source="message").count() == n)
        patterns = Flag.objects.filter(source="pattern")
        if number < 3:
            assert not patterns.exists(), f"fired on message {number}"
    pattern = Flag.objects.get(source="pattern")
    assert (pattern.severity, pattern.category) == ("concern", "distress")
    assert pattern.cited_messages.count() == 3
    # The teacher sees it in their queue, citing the messages.
    listed = clients["teacher_a"].get("/api/v1/safety/flags/", {"severity": "concern"}).json()
    assert pattern.pk in [row["id"] for row in listed["results"]]


@pytest.mark.worker
@pytest.mark.parametrize("language", ["en", "fr"])
def test_an_uploaded_file_is_screened_by_the_worker(safety_env, safety_worker, school, clients, llm, language):
    from tests.conversations.test_files import upload

    teacher = school["teacher_a"]
    teacher.email = "teacher.a@school.example"
    teacher.save(update_fields=["email"])
    cid = start(clients["alice"])
    essay = f"My essay about my summer.\n\n{CRISES[language]}\n".encode()
    resp = upload(clients["alice"], cid, "essay.txt", essay, "text/plain")
    assert resp.status_code == 201, resp.content
    flag = wait_for(lambda: Flag.objects.filter(source="file").first(), timeout=10)
    assert (flag.file_id, flag.severity, flag.conversation_id) == (resp.json()["id"], "crisis", cid)
    assert flag.excerpt.startswith("essay.txt: ")
    wait_for(lambda: Delivery.objects.filter(flag=flag, status="sent").exists())
    harmless = upload(clients["alice"], cid, "notes.txt", b"Photosynthesis turns light into sugar.", "text/plain")
    assert harmless.status_code == 201
    safety_worker.wait_for_log("safety.tasks.file_screen", count=2, timeout=10)
    assert Flag.objects.count() == 1


@pytest.fixture
def budget_spent_env(safety_env: dict[str, str]) -> dict[str, str]:
    """The server's and the worker's environment with a daily student budget of one cent."""
    safety_env["BUDGET_STUDENT_DAILY"] = "0.01"
    return safety_env


@pytest.mark.worker
def test_a_student_past_the_budget_can_still_raise_a_crisis(budget_spent_env, safety_worker, server, llm, school):
    """With the student's daily budget spent, through the production server and a worker: a
    crisis message is stored, screened, answered with the crisis reply and the resources (no
    model call) and alerted; an ordinary message is stored, then refused 429 `budget_exceeded`
    (its retry too), and the model is never called."""
    teacher = school["teacher_a"]
    teacher.email = "teacher.a@school.example"
    teacher.save(update_fields=["email"])
    alice = school["alice"]
    cid = new_conversation(server, alice)
    LLMUsage.objects.create(purpose="chat", model="scripted-tutor", student=alice, cost=Decimal("0.02"))
    calls = len(llm.calls("chat"))

    resp = httpx2.post(
        f"{server}/api/v1/conversations/{cid}/messages/",
        json={"content": "I want to die tonight, I have pills", "client_message_id": "crisis"},
        headers=headers(alice),
        timeout=30,
    )
    assert resp.status_code == 201, resp.text
    body = resp.json()
    [notice] = body["safety"]
    assert notice["severity"] == "crisis" and notice["resources"]
    assert body["reply"]["content"].startswith(notice["message"])
    assert notice["resources"][0]["name"] in body["reply"]["content"]
    flag = wait_for(lambda: Flag.objects.filter(message_id=body["student_message"]["id"]).first(), timeout=10)
    assert flag.severity == "crisis"
    wait_for(lambda: Delivery.objects.filter(flag=flag, status="sent").exists(), timeout=10)
    assert "teacher.a@school.example" in "".join(mails(budget_spent_env))

    for _attempt in range(2):  # the retry of a refused message is refused the same way
        refused = httpx2.post(
            f"{server}/api/v1/conversations/{cid}/messages/",
            json={"content": "What is 3/4 of 12?", "client_message_id": "ordinary"},
            headers=headers(alice),
            timeout=30,
        )
        assert refused.status_code == 429, refused.text
        error = refused.json()["error"]
        assert error["code"] == "budget_exceeded" and error["retry_safe"] is True
        assert int(refused.headers["Retry-After"]) > 0
        stored = Message.objects.get(conversation_id=cid, client_message_id="ordinary")
        assert error["details"]["student_message_id"] == stored.pk
        assert not Message.objects.filter(reply_to=stored).exists()
    assert len(llm.calls("chat")) == calls
