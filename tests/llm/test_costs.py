"""What model calls cost: prices on every usage row, spend budgets that refuse a new chat message
past them (never background work, which they do not count), and the usage report for teachers
and students."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import Enrollment
from conversations.models import Message
from conversations.services import conversation_close
from conversations.summaries import Outcome, conversation_summary_write
from llm import costs
from llm.models import LLMUsage
from tests.conversations.test_streaming import async_client, post_stream
from tests.conversations.test_turn import send, start

# Dear on purpose: one scripted turn (a few hundred tokens) costs more than the budgets below.
PRICES = {
    "scripted-tutor": (Decimal("1000"), Decimal("3000")),
    "scripted-summary": (Decimal("20"), Decimal("40")),
}


# A budget with room for one turn: the most a turn can cost with the `priced` fixture's window
# (1,536 tokens of prompt and 512 of reply, one model round) is 3.072 USD; one costs far less.
ONE_TURN = Decimal("3.10")


@pytest.fixture
def priced(settings: Any, llm: Any) -> Any:
    settings.LLM_PRICES = PRICES
    settings.LLM_CONTEXT_WINDOW = 2048
    settings.MAX_TOOL_ROUNDS = 0
    return llm


def expected_cost(model: str, prompt_tokens: int, completion_tokens: int) -> Decimal:
    prompt_price, completion_price = PRICES[model]
    cost = (prompt_tokens * prompt_price + completion_tokens * completion_price) / 1_000_000
    return cost.quantize(Decimal("0.00000001"))


def spend(student: Any, cost: str, when: datetime | None = None, purpose: str = "chat") -> LLMUsage:
    """A metered call of `student` that cost `cost` USD, made at `when` (default: now)."""
    usage = LLMUsage.objects.create(purpose=purpose, model="scripted-tutor", student=student, cost=Decimal(cost))
    if when is not None:
        LLMUsage.objects.filter(pk=usage.pk).update(created_at=when)
    return usage


# --- Prices -------------------------------------------------------------------------------------


def test_prices_by_model_name_snapshot_and_router_prefix(settings):
    """A priced model by its name, a dated snapshot or a router's provider/ prefix; any other
    model (a local one) costs 0."""
    settings.LLM_PRICES = {"gpt-4o-mini": (Decimal("0.15"), Decimal("0.60"))}
    for name in ("gpt-4o-mini", "gpt-4o-mini-2024-07-18", "openai/gpt-4o-mini"):
        assert costs.model_price(name) == (Decimal("0.15"), Decimal("0.60")), name
    assert costs.model_price("llama3.1") == (Decimal(0), Decimal(0))
    assert costs.usage_cost(model="gpt-4o-mini", prompt_tokens=1000, completion_tokens=500) == Decimal("0.00045")
    assert costs.usage_cost(model="llama3.1", prompt_tokens=10**6, completion_tokens=10**6) == 0


def test_default_prices_and_llm_prices_from_the_environment(monkeypatch):
    """The defaults price common hosted models; LLM_PRICES (JSON) adds or replaces models, and a
    malformed value stops the settings from loading."""
    from tutor.settings import base

    assert base.LLM_PRICE_DEFAULTS["gpt-4o-mini"] == (Decimal("0.15"), Decimal("0.60"))
    monkeypatch.setenv("LLM_PRICES", json.dumps({"qwen2.5": [0.1, "0.3"], "gpt-4o": [2, 8]}))
    assert base.env_prices("LLM_PRICES") == {
        "qwen2.5": (Decimal("0.1"), Decimal("0.3")),
        "gpt-4o": (Decimal(2), Decimal(8)),
    }
    for bad in ('{"m": [1]}', '{"m": 1}', '["m", 1, 2]', '{"m": [-1, 2]}', "not json"):
        monkeypatch.setenv("LLM_PRICES", bad)
        with pytest.raises(RuntimeError):
            base.env_prices("LLM_PRICES")
    monkeypatch.setenv("BUDGET_STUDENT_DAILY", "-1")
    with pytest.raises(RuntimeError):
        base.env_decimal("BUDGET_STUDENT_DAILY")


def test_a_chat_turns_usage_row_carries_its_cost(clients, priced):
    """The chat turn's row is priced from the tokens the model reported."""
    cid = start(clients["alice"])
    assert send(clients["alice"], cid).status_code == 201
    usage = LLMUsage.objects.get(purpose="chat")
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0
    assert usage.cost == expected_cost("scripted-tutor", usage.prompt_tokens, usage.completion_tokens) > 0


def test_a_summarys_usage_row_carries_its_cost(clients, priced):
    """Background calls are priced too, at their own model's price."""
    cid = start(clients["alice"])
    send(clients["alice"], cid)
    conversation_close(conversation_id=cid)
    assert conversation_summary_write(conversation_id=cid) is Outcome.STORED
    usage = LLMUsage.objects.get(purpose="summary")
    assert usage.model == "scripted-summary" and usage.completion_tokens > 0
    assert usage.cost == expected_cost("scripted-summary", usage.prompt_tokens, usage.completion_tokens) > 0


# --- Budgets ------------------------------------------------------------------------------------


def test_past_the_daily_budget_a_message_is_stored_and_refused(clients, priced, settings, school):
    """429 budget_exceeded, with which budget, the spend, the limit, when it resets and
    Retry-After; the message is stored (not lost) but not answered, and the model is not called,
    streamed or not."""
    settings.BUDGET_STUDENT_DAILY = ONE_TURN
    cid = start(clients["alice"])
    assert send(clients["alice"], cid, "What is 3/4 of 12?", "m1").status_code == 201
    spent = LLMUsage.objects.get().cost
    assert 0 < spent < ONE_TURN
    messages, calls = Message.objects.count(), len(priced.calls("chat"))

    before = timezone.now()
    resp = send(clients["alice"], cid, "And 2/3 of 12?", "m2")
    after = timezone.now()
    assert resp.status_code == 429, resp.content
    error = resp.json()["error"]
    assert error["code"] == "budget_exceeded" and error["retry_safe"] is True
    details = error["details"]
    assert details["budget"] == "student_daily" and details["classroom_id"] is None
    assert Decimal(details["spent_usd"]) == spent and Decimal(details["limit_usd"]) == ONE_TURN
    assert Decimal(details["needed_usd"]) == Decimal("3.072")  # the most the refused turn could cost
    resets_at = datetime.fromisoformat(details["resets_at"])
    assert resets_at in {costs.period_end(costs.DAILY, before), costs.period_end(costs.DAILY, after)}
    assert resets_at.tzinfo is not None and resets_at.utcoffset() == timedelta(0)
    assert (resets_at.hour, resets_at.minute, resets_at.second) == (0, 0, 0)
    wait = int(resp["Retry-After"])
    assert wait == details["retry_after_seconds"]
    assert 0 < wait <= 86400 and abs((before + timedelta(seconds=wait)) - resets_at) < timedelta(seconds=5)
    assert "daily budget" in error["message"] and resets_at.strftime("%Y-%m-%d 00:00 UTC") in error["message"]

    client = async_client(school["alice"])

    async def stream() -> Any:
        return await post_stream(client, cid, "And 2/3 of 12?", "m3")

    streamed = async_to_sync(stream)()
    assert streamed.status_code == 429 and streamed["Retry-After"]
    assert json.loads(streamed.content)["error"]["code"] == "budget_exceeded"

    stored = Message.objects.filter(client_message_id__in=["m2", "m3"])
    assert Message.objects.count() == messages + 2 and stored.count() == 2
    assert details["student_message_id"] == stored.get(client_message_id="m2").pk
    assert not Message.objects.filter(reply_to__in=stored).exists()
    assert len(priced.calls("chat")) == calls


def test_a_retry_of_an_answered_message_still_replays_past_the_budget(clients, priced, settings):
    """The budget refuses new messages only: the retry of one already answered gets its stored
    reply, and the model is not called."""
    settings.BUDGET_STUDENT_DAILY = ONE_TURN
    cid = start(clients["alice"])
    first = send(clients["alice"], cid, "What is 3/4 of 12?", "m1")
    assert first.status_code == 201
    calls = len(priced.calls("chat"))
    again = send(clients["alice"], cid, "What is 3/4 of 12?", "m1")
    assert again.status_code == 201, again.content
    assert again.json()["replayed"] is True
    assert again.json()["reply"]["id"] == first.json()["reply"]["id"]
    assert len(priced.calls("chat")) == calls


def test_a_message_refused_past_the_budget_is_answered_once_it_resets(clients, priced, settings, school):
    """The budget decides whether the model is called, not whether a message is kept: a message
    refused past the budget stays stored, its retry is refused the same way (no way around the
    budget), and once the budget allows it again the same message is answered, stored once."""
    settings.BUDGET_STUDENT_DAILY = Decimal("0.01")
    spend(school["alice"], "0.02")
    cid = start(clients["alice"])
    assert send(clients["alice"], cid, "What is 3/4 of 12?", "m1").status_code == 429
    assert send(clients["alice"], cid, "What is 3/4 of 12?", "m1").status_code == 429
    assert priced.calls("chat") == []
    settings.BUDGET_STUDENT_DAILY = Decimal("10.00")
    answered = send(clients["alice"], cid, "What is 3/4 of 12?", "m1")
    assert answered.status_code == 201, answered.content
    assert Message.objects.filter(conversation_id=cid, client_message_id="m1").count() == 1
    assert len(priced.calls("chat")) == 1


def test_a_classroom_override_applies_to_its_students(clients, priced, settings, school):
    """A class's override replaces the setting for its students, both ways: a limit where the
    setting has none, none (0) where the setting has one. Other classes keep the setting."""
    settings.BUDGET_STUDENT_DAILY = Decimal("5.00")
    school["class_a"].budget_student_daily = Decimal("0.05")
    school["class_a"].save()
    for name in ("alice", "carol"):
        spend(school[name], "0.10")
    refused = send(clients["alice"], start(clients["alice"]), "Hello", "m1")
    assert refused.status_code == 429
    assert refused.json()["error"]["details"]["budget"] == "student_daily"
    assert refused.json()["error"]["details"]["classroom_id"] == school["class_a"].pk
    assert refused.json()["error"]["details"]["limit_usd"] == "0.05"
    assert send(clients["carol"], start(clients["carol"]), "Hello", "m1").status_code == 201

    settings.BUDGET_STUDENT_DAILY = Decimal("0.01")
    school["class_a"].budget_student_daily = Decimal(0)
    school["class_a"].save()
    assert send(clients["alice"], start(clients["alice"]), "Hello", "m2").status_code == 201
    assert send(clients["carol"], start(clients["carol"]), "Hello", "m2").status_code == 429


def test_a_class_the_student_left_no_longer_limits_them(clients, priced, settings, school):
    """An ended enrolment (the roster dropped it) takes the class's budget off the student, and
    the student's spend off the class's: alice, moved out of 5A, is answered past 5A's limit, and
    bob, still in 5A, is not refused for her spend."""
    school["class_a"].budget_daily = Decimal("0.05") + ONE_TURN
    school["class_a"].save()
    spend(school["alice"], "0.10")
    assert send(clients["alice"], start(clients["alice"]), "Hello", "m1").status_code == 429
    Enrollment.objects.filter(student=school["alice"], classroom=school["class_a"]).update(active=False)
    assert send(clients["alice"], start(clients["alice"]), "Hello", "m2").status_code == 201
    answer = send(clients["bob"], start(clients["bob"]), "Hello", "m1")
    assert answer.status_code == 201, answer.content


def test_a_classroom_budget_counts_all_its_students(clients, priced, school):
    """A class's own budget is spent by all its students together: bob is refused for alice's
    spend; carol, in another class, is not."""
    school["class_a"].budget_daily = Decimal("0.03") + ONE_TURN
    school["class_a"].save()
    spend(school["alice"], "0.03")
    assert send(clients["bob"], start(clients["bob"]), "Hello", "m1").status_code == 201
    spend(school["alice"], "0.03")
    refused = send(clients["bob"], start(clients["bob"]), "Hello", "m2")
    assert refused.status_code == 429
    details = refused.json()["error"]["details"]
    assert (details["budget"], details["classroom_id"]) == ("classroom_daily", school["class_a"].pk)
    assert Decimal(details["spent_usd"]) >= Decimal("0.06")
    assert send(clients["carol"], start(clients["carol"]), "Hello", "m1").status_code == 201


def test_periods_are_utc_days_and_calendar_months(school, settings):
    """Earlier this month counts for the month, not the day; last month counts for neither. When
    both budgets are spent the monthly one is reported, since it resets last (on the first of
    next month: a year later in December); the daily reset alone lets nothing through."""
    settings.BUDGET_STUDENT_DAILY = Decimal("1")
    settings.BUDGET_STUDENT_MONTHLY = Decimal("5")
    now = datetime(2026, 12, 15, 23, 30, tzinfo=UTC)
    alice = school["alice"]
    spend(alice, "9", datetime(2026, 11, 30, 23, 59, tzinfo=UTC))
    spend(alice, "4", datetime(2026, 12, 14, 12, 0, tzinfo=UTC))
    costs.budget_check(student_id=alice.pk, now=now)
    spend(alice, "1", datetime(2026, 12, 15, 0, 0, tzinfo=UTC))
    for when in (now, datetime(2026, 12, 16, 0, 0, tzinfo=UTC)):
        with pytest.raises(costs.BudgetExceeded) as refused:
            costs.budget_check(student_id=alice.pk, now=when)
        details = refused.value.details
        assert (details["budget"], Decimal(details["spent_usd"]), details["resets_at"]) == (
            "student_monthly",
            Decimal(5),
            "2027-01-01T00:00:00Z",
        )
        assert refused.value.retry_after == (datetime(2027, 1, 1, tzinfo=UTC) - when).total_seconds()
    costs.budget_check(student_id=alice.pk, now=datetime(2027, 1, 1, 0, 0, tzinfo=UTC))
    assert costs.period_end(costs.DAILY, datetime(2026, 12, 31, 23, 59, tzinfo=UTC)) == datetime(2027, 1, 1, tzinfo=UTC)


def test_the_check_is_one_aggregate_query_after_the_classrooms(school, settings):
    """Without any budget only the student's classrooms are read; with budgets, one aggregate
    query more over the usage and one over the holds of turns in flight, whether or not classroom
    budgets apply."""
    alice = school["alice"]
    with CaptureQueriesContext(connection) as queries:
        costs.budget_check(student_id=alice.pk)
    assert len(queries) == 1
    settings.BUDGET_STUDENT_DAILY = Decimal("1")
    settings.BUDGET_CLASSROOM_MONTHLY = Decimal("10")
    with CaptureQueriesContext(connection) as queries:
        costs.budget_check(student_id=alice.pk)
    assert len(queries) == 3
    assert "llm_llmusage" in queries[1]["sql"] and "SUM" in queries[1]["sql"].upper()


@pytest.mark.postgresql_only
def test_the_spend_query_reads_the_index(school, settings):
    """On PostgreSQL the budget's aggregate is answered from the (student, created_at, cost) index
    of chat spend."""
    settings.BUDGET_STUDENT_DAILY = Decimal("1")
    settings.BUDGET_CLASSROOM_DAILY = Decimal("1")
    for student in ("alice", "bob", "carol"):
        spend(school[student], "0.01")
    with CaptureQueriesContext(connection) as queries:
        costs.budget_check(student_id=school["alice"].pk)
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        # The planner's choice between this index and the student foreign key's own one follows
        # the table's statistics, which the rest of the suite moves (autovacuum): without the
        # foreign key's index (dropped in the test's transaction, rolled back after), the
        # aggregate must still be answered from an index, and that index must be the spend one.
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'llm_llmusage' AND indexdef LIKE '%%(student_id)'"
        )
        dropped = [name for (name,) in cursor.fetchall()]
        assert dropped, "the student foreign key's index was not found"
        for name in dropped:
            cursor.execute(f'DROP INDEX "{name}"')
        cursor.execute("EXPLAIN " + next(q["sql"] for q in queries if "llm_llmusage" in q["sql"]))
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "llmusage_student_chat_spend" in plan, plan


def test_a_summary_still_runs_past_the_budget(clients, priced, settings, school):
    """Background work is never refused: the summary of a student past every budget is written
    and metered."""
    cid = start(clients["alice"])
    send(clients["alice"], cid)
    conversation_close(conversation_id=cid)
    settings.BUDGET_STUDENT_DAILY = settings.BUDGET_CLASSROOM_DAILY = Decimal("0.01")
    with pytest.raises(costs.BudgetExceeded):
        costs.budget_check(student_id=school["alice"].pk)
    assert conversation_summary_write(conversation_id=cid) is Outcome.STORED
    assert LLMUsage.objects.get(purpose="summary").cost > 0


def test_background_work_does_not_spend_the_chat_budgets(clients, priced, school):
    """A class's $4.00 daily budget and $7.60 of summaries, extraction, consolidation and
    grading for its students: its students still chat, and only chat spend refuses them."""
    school["class_a"].budget_daily = Decimal("4.00")
    school["class_a"].budget_student_daily = Decimal("10.00")
    school["class_a"].save()
    for purpose, cost in (("summary", "2.40"), ("extraction", "3.00"), ("consolidation", "1.20"), ("grading", "1")):
        spend(school["alice"], cost, purpose=purpose)
    with CaptureQueriesContext(connection) as queries:
        costs.budget_check(student_id=school["alice"].pk)
    assert any("llm_llmusage" in q["sql"] and "purpose" in q["sql"] for q in queries)
    assert send(clients["alice"], start(clients["alice"]), "Hello", "m1").status_code == 201
    spend(school["bob"], "3.00")
    refused = send(clients["alice"], start(clients["alice"]), "Hello", "m2")
    assert refused.status_code == 429
    assert refused.json()["error"]["details"]["budget"] == "classroom_daily"


# --- The usage report ---------------------------------------------------------------------------


@pytest.fixture
def usage_days(school: dict[str, Any]) -> dict[str, date]:
    """alice spends on two days, bob on one, carol (another class) on one; one row is older than
    the default 30 days."""
    today = timezone.now().astimezone(UTC).replace(hour=12, minute=0, second=0, microsecond=0)
    yesterday = today - timedelta(days=1)
    spend(school["alice"], "0.10", today)
    spend(school["alice"], "0.05", today, purpose="summary")
    spend(school["alice"], "0.20", yesterday)
    spend(school["bob"], "0.40", today)
    spend(school["carol"], "1.00", today)
    spend(school["alice"], "9.00", today - timedelta(days=40))
    return {"today": today.date(), "yesterday": yesterday.date()}


def test_a_teacher_gets_the_spend_per_student_and_per_day(clients, school, usage_days):
    """The students of the teacher's classes only, each with their days and total; all of them
    per day; the total; the last 30 days by default."""
    body = clients["teacher_a"].get("/api/v1/usage/").json()
    today, yesterday = usage_days["today"].isoformat(), usage_days["yesterday"].isoformat()
    assert body["until"] == today and body["since"] == (usage_days["today"] - timedelta(days=29)).isoformat()
    assert body["currency"] == "USD"
    assert Decimal(body["total"]["cost"]) == Decimal("0.75") and body["total"]["calls"] == 4
    assert [(d["date"], Decimal(d["cost"])) for d in body["days"]] == [
        (yesterday, Decimal("0.20")),
        (today, Decimal("0.55")),
    ]
    students = {s["username"]: s for s in body["students"]}
    assert set(students) == {"alice", "bob"}
    alice = students["alice"]
    assert alice["id"] == school["alice"].pk and Decimal(alice["cost"]) == Decimal("0.35") and alice["calls"] == 3
    assert [(d["date"], Decimal(d["cost"]), d["calls"]) for d in alice["days"]] == [
        (yesterday, Decimal("0.20"), 1),
        (today, Decimal("0.15"), 2),
    ]

    assert body["questions"] == {
        "cost": "0.00000000",
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "calls": 0,
        "days": [],
    }

    one = clients["teacher_a"].get(f"/api/v1/usage/?student={school['bob'].pk}&since={today}&until={today}").json()
    assert [s["username"] for s in one["students"]] == ["bob"] and Decimal(one["total"]["cost"]) == Decimal("0.40")
    since = usage_days["today"] - timedelta(days=60)
    older = clients["teacher_a"].get(f"/api/v1/usage/?student={school['alice'].pk}&since={since}").json()
    assert Decimal(older["total"]["cost"]) == Decimal("9.35")


def test_a_teachers_questions_are_their_own_spend(clients, school, usage_days):
    """A question metered to teacher_a is in their `questions`, not in any student's spend nor
    in the total; teacher_b's report does not show it."""
    LLMUsage.objects.create(
        purpose="ask", model="m", asker=school["teacher_a"], classroom=school["class_a"], cost=Decimal("0.25")
    )
    body = clients["teacher_a"].get("/api/v1/usage/").json()
    assert Decimal(body["total"]["cost"]) == Decimal("0.75")
    assert Decimal(body["questions"]["cost"]) == Decimal("0.25") and body["questions"]["calls"] == 1
    assert [(d["date"], Decimal(d["cost"])) for d in body["questions"]["days"]] == [
        (timezone.now().date().isoformat(), Decimal("0.25"))
    ]
    assert clients["teacher_b"].get("/api/v1/usage/").json()["questions"]["calls"] == 0


def test_a_student_gets_their_own_spend_only(clients, school, usage_days):
    """A student's report is theirs alone; naming another student, even a classmate, is a 404."""
    body = clients["alice"].get("/api/v1/usage/").json()
    assert [s["username"] for s in body["students"]] == ["alice"]
    assert Decimal(body["total"]["cost"]) == Decimal("0.35")
    own = clients["alice"].get(f"/api/v1/usage/?student={school['alice'].pk}")
    assert own.status_code == 200
    resp = clients["alice"].get(f"/api/v1/usage/?student={school['bob'].pk}")
    assert resp.status_code == 404 and resp.json()["error"]["code"] == "not_found"


def test_another_classs_student_is_a_404_to_a_teacher(clients, school, usage_days):
    """teacher_b does not learn that alice exists; an idle student of their own is listed with zeros."""
    resp = clients["teacher_b"].get(f"/api/v1/usage/?student={school['alice'].pk}")
    assert resp.status_code == 404
    listed = clients["teacher_b"].get("/api/v1/usage/").json()["students"]
    assert [s["username"] for s in listed] == ["carol"]
    school["class_b"].enrollments.create(student=school["bob"])
    LLMUsage.objects.filter(student=school["bob"]).delete()
    idle = {s["username"]: s for s in clients["teacher_b"].get("/api/v1/usage/").json()["students"]}["bob"]
    assert (Decimal(idle["cost"]), idle["calls"], idle["days"]) == (0, 0, [])


@pytest.mark.parametrize(
    "query",
    ["since=2026-02-01&until=2026-01-01", "since=2020-01-01&until=2026-01-01", "since=yesterday", "student=0"],
)
def test_a_bad_range_is_a_400(clients, query):
    resp = clients["teacher_a"].get(f"/api/v1/usage/?{query}")
    assert resp.status_code == 400 and resp.json()["error"]["code"] == "invalid"


def test_the_refusal_speaks_the_students_language(clients, priced, settings, school):
    """A French student reads the refusal in French, amounts written the French way."""
    school["alice"].language = "fr"
    school["alice"].save()
    settings.BUDGET_STUDENT_MONTHLY = Decimal("0.5")
    spend(school["alice"], "0.75")
    resp = send(clients["alice"], start(clients["alice"]), "Bonjour", "m1")
    assert resp.status_code == 429
    message = resp.json()["error"]["message"]
    assert message.startswith("Le budget mensuel d'utilisation du tuteur est épuisé (0,75 sur 0,50 USD).")
    assert resp.json()["error"]["details"]["spent_usd"] == "0.75000000"
    since = clients["alice"].get("/api/v1/usage/?since=2026-02-01&until=2026-01-01")
    assert since.json()["error"]["details"]["since"] == ["Le premier jour ne doit pas être postérieur au dernier."]


@pytest.mark.parametrize(
    "query",
    [
        "until=9999-12-31",
        "since=9999-12-31&until=9999-12-31",
        "until=0001-01-01",
        "until=0001-01-05",
        "since=0001-01-01&until=0001-01-01",
        "since=0001-01-01",
        "since=1999-12-31&until=2000-01-01",
    ],
)
def test_dates_outside_the_usage_range_are_a_400(clients, query):
    """The report covers UTC days from USAGE_FIRST_DAY to USAGE_LAST_DAY: a day outside them
    (the calendar's own ends included, where a day after `until` or 29 days before it does not
    exist) is a 400 `invalid` naming the field, never a server error."""
    resp = clients["teacher_a"].get(f"/api/v1/usage/?{query}")
    assert resp.status_code == 400, resp.content
    body = resp.json()["error"]
    assert body["code"] == "invalid" and set(body["details"]) <= {"since", "until"} and body["details"]


def test_the_ends_of_the_usage_range_are_accepted(clients, school):
    """The first and the last day of the range are valid report bounds."""
    from llm.apis import USAGE_FIRST_DAY, USAGE_LAST_DAY

    for since, until in ((USAGE_FIRST_DAY, USAGE_FIRST_DAY), (USAGE_LAST_DAY, USAGE_LAST_DAY)):
        resp = clients["teacher_a"].get(f"/api/v1/usage/?since={since}&until={until}")
        assert resp.status_code == 200, resp.content
        assert (resp.json()["since"], resp.json()["until"]) == (since.isoformat(), until.isoformat())
