"""Budgets under concurrency: a turn holds the most it can cost before the model is called and
gives the hold back once its usage is stored, so that turns running at once never spend past a
budget. Through the production server (two processes, PostgreSQL), and on the holds themselves."""

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal

import httpx2
import pytest
from django.utils import timezone

from accounts.models import Enrollment
from llm import costs
from llm.models import CHAT_PURPOSES, BudgetHold, LLMUsage
from tests.conftest import headers, make_user, new_conversation
from tests.tutor.test_rates_concurrent import BURST, IN_FLIGHT, burst

# USD per million tokens, in and out: a scripted turn (under 200 tokens) costs about a twelfth of
# the class's budget, and the most a turn can cost (a 1,024-token window) about half of it.
PRICE = "480"
BUDGET = Decimal("1.00")


@pytest.fixture
def priced_env(worker_env: dict[str, str]) -> dict[str, str]:
    """The server's environment (the `server` fixture then starts one of its own): the scripted
    tutor priced, a small window, no tool rounds, no send throttle."""
    worker_env["LLM_PRICES"] = json.dumps({"scripted-tutor": [PRICE, PRICE]})
    worker_env["LLM_CONTEXT_WINDOW"] = "1024"
    worker_env["MAX_TOOL_ROUNDS"] = "0"
    worker_env["THROTTLE_SEND_RATE"] = ""
    return worker_env


def test_turns_in_flight_never_spend_past_the_class_budget(priced_env, server, school):
    """A class's $1.00 daily budget, ten students sending 50 messages, 10 in flight: some are
    answered, the rest refused with 429 `budget_exceeded`, and the class's spend never passes
    $1.00; no hold is left once every turn has ended."""
    classroom = school["class_a"]
    classroom.budget_daily = BUDGET
    classroom.save(update_fields=["budget_daily"])
    students = [school["alice"], school["bob"]]
    for n in range(IN_FLIGHT - 2):
        student = make_user(f"pupil{n}")
        Enrollment.objects.create(classroom=classroom, student=student)
        students.append(student)
    auth = {s.pk: headers(s) for s in students}  # read here: the threads hold no connection
    conversations = [(s.pk, new_conversation(server, s)) for s in students]

    def send(i: int) -> int:
        student, cid = conversations[i % len(conversations)]
        resp = httpx2.post(
            f"{server}/api/v1/conversations/{cid}/messages/",
            json={"content": f"What is {i} times 3?", "client_message_id": f"m{i}"},
            headers=auth[student],
            timeout=120,
        )
        assert resp.status_code in (201, 429), resp.text
        if resp.status_code == 429:
            assert resp.json()["error"]["code"] == "budget_exceeded", resp.text
        return resp.status_code

    statuses = burst(send)
    assert len(statuses) == BURST and statuses.count(201) >= 2 and statuses.count(429) >= IN_FLIGHT
    chat = LLMUsage.objects.filter(student__in=students, purpose__in=CHAT_PURPOSES)
    spent = sum((row.cost for row in chat), Decimal(0))
    assert max(row.cost for row in chat) > BUDGET / 20  # each turn a real part of the budget
    assert spent <= BUDGET, spent
    assert not BudgetHold.objects.exists()


def test_a_hold_counts_until_released_or_expired(school, settings):
    """A hold is spend until it is released or expires; a turn is refused when the budget cannot
    hold the most it may cost, and told so (`needed_usd`)."""
    settings.BUDGET_STUDENT_DAILY = Decimal("1.00")
    alice = school["alice"]
    first = costs.budget_hold(student_id=alice.pk, estimate=Decimal("0.60"), seconds=60)
    assert first is not None
    with pytest.raises(costs.BudgetExceeded) as refused:
        costs.budget_hold(student_id=alice.pk, estimate=Decimal("0.60"), seconds=60)
    details = refused.value.details
    assert (Decimal(details["spent_usd"]), Decimal(details["needed_usd"])) == (Decimal("0.60"), Decimal("0.60"))
    LLMUsage.objects.create(purpose="chat", model="m", student=alice, cost=Decimal("0.10"))
    costs.budget_release(hold_id=first)
    assert costs.budget_hold(student_id=alice.pk, estimate=Decimal(0), seconds=60) is None
    second = costs.budget_hold(student_id=alice.pk, estimate=Decimal("0.60"), seconds=60)
    BudgetHold.objects.filter(pk=second).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert costs.budget_hold(student_id=alice.pk, estimate=Decimal("0.90"), seconds=60) is not None
    with pytest.raises(costs.BudgetExceeded):
        costs.budget_hold(student_id=alice.pk, estimate=Decimal(0), seconds=60)
