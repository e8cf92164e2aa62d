"""What a chat turn costs the database: how many statements, and which reads it skips."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from conversations.models import Conversation, Message, ReplyMemory
from learning.models import SkillMastery, Task
from llm.models import LLMUsage
from memory.models import AIMemory
from tests.conversations.test_memory_in_prompt import add_memories
from tests.conversations.test_turn import send, start

# On PostgreSQL, production's database; SQLite's finish takes five statements (no data-modifying
# WITH), its claim three. Both include the student card's read (memory.card_block).
MAX_QUERIES_PER_TURN = {"postgresql": 8, "sqlite": 14}


def statements(captured: CaptureQueriesContext) -> list[str]:
    """The statements a production request runs: the test's own savepoints left out."""
    return [q["sql"] for q in captured.captured_queries if not q["sql"].startswith(("SAVEPOINT", "RELEASE SAVEPOINT"))]


def steady_turn(clients, llm, content="And what about 1/4 and 2/3 fractions?"):
    """A conversation's second turn (the first one warms the window), its statements recorded."""
    llm.script("chat", {"content": "First."}, {"content": "Second."})
    cid = start(clients["alice"])
    assert send(clients["alice"], cid, cmid="first").status_code == 201
    with CaptureQueriesContext(connection) as captured:
        resp = send(clients["alice"], cid, content=content, cmid="second")
    assert resp.status_code == 201, resp.content
    return cid, resp.json(), statements(captured)


def test_a_turn_runs_few_queries_with_memories_shown(clients, llm, school):
    """Authentication, claim, memories, history, reply, usage and access log: at most 8
    statements on PostgreSQL, where the claim and the finish are one statement each."""
    add_memories(school["alice"], 5)
    cid, body, sql = steady_turn(clients, llm)
    assert len(sql) <= MAX_QUERIES_PER_TURN[connection.vendor], "\n".join(sql)
    reply = Message.objects.get(pk=body["reply"]["id"])
    assert ReplyMemory.objects.filter(message=reply).count() == 5
    assert set(AIMemory.objects.values_list("recall_count", flat=True)) == {2}
    assert LLMUsage.objects.filter(conversation_id=cid, purpose="chat").count() == 2
    conversation = Conversation.objects.get(pk=cid)
    assert (conversation.message_count, conversation.turn_token, conversation.turn_message_id) == (4, "", None)
    assert reply.seq == 4 and reply.reply_to_id == body["student_message"]["id"]
    if connection.vendor == "postgresql":
        writes = [s for s in sql if not s.lstrip().startswith("SELECT")]
        assert [s.split(" AS ")[0] for s in writes] == ["WITH claimed", "WITH counted"], "\n".join(writes)


def test_a_student_without_learning_data_files_or_checkpoint_costs_no_read_of_them(clients, llm, school):
    """No task, skill, file or checkpoint: the claim's existence checks skip their queries."""
    _, _, sql = steady_turn(clients, llm)
    skipped = ("learning_task", "learning_skillmastery", "conversations_conversationfile", "conversations_contextcheck")
    for statement in sql:
        assert not statement.startswith(tuple(f'SELECT "{table}' for table in skipped)), statement


def test_a_student_with_learning_data_gets_the_record(clients, llm, school):
    """A skill with a graded attempt and a task of the class: the record is read and shown."""
    now = timezone.now()
    SkillMastery.objects.create(
        student=school["alice"],
        skill="Adding fractions",
        skill_key="adding fractions",
        attempts=3,
        correct=1,
        estimate=0.3,
        estimated_at=now,
    )
    Task.objects.create(
        teacher=school["teacher_a"],
        classroom=school["class_a"],
        title="Practise common denominators",
        due_at=now + timedelta(days=2),
    )
    _, _, sql = steady_turn(clients, llm)
    assert any(s.startswith('SELECT "learning_task"') for s in sql)
    prompt = "\n".join(str(m.get("content")) for m in llm.calls("chat")[-1]["messages"])
    assert "Adding fractions" in prompt and "Practise common denominators" in prompt


def test_a_class_budget_is_still_enforced(clients, llm, school):
    """A classroom's budget override makes the claim check the budget: a spent budget is a 429;
    the message is stored (never lost) but not answered, and the model is not called."""
    school["class_a"].budget_student_daily = Decimal("0.01")
    school["class_a"].save()
    llm.script("chat", {"content": "First."})
    cid = start(clients["alice"])
    LLMUsage.objects.create(purpose="chat", model="m", student=school["alice"], cost=Decimal("1"))
    resp = send(clients["alice"], cid, cmid="over")
    assert resp.status_code == 429, resp.content
    [stored] = Message.objects.filter(conversation_id=cid)
    assert resp.json()["error"]["details"]["student_message_id"] == stored.pk
    assert llm.calls("chat") == []


def test_the_claim_of_another_users_conversation_is_404_or_403(clients, llm, school):
    """Bob's send to Alice's conversation is a 404; her teacher's is a 403; nothing stored."""
    cid = start(clients["alice"])
    assert send(clients["bob"], cid).status_code == 404
    assert send(clients["teacher_a"], cid).status_code == 403
    assert send(clients["alice"], "not-a-number").status_code == 404
    assert not Message.objects.filter(conversation_id=cid).exists()


def test_a_retry_replays_and_a_busy_conversation_waits(clients, llm, school, settings):
    """The same client_message_id again replays the stored reply (no model call); a lease held
    by another turn makes the claim statement claim nothing and the send wait, then 503."""
    settings.TURN_WAIT_SECONDS = 0.3
    llm.script("chat", {"content": "Once."})
    cid = start(clients["alice"])
    first = send(clients["alice"], cid, cmid="same")
    again = send(clients["alice"], cid, cmid="same")
    assert again.json()["reply"]["id"] == first.json()["reply"]["id"] and again.json()["replayed"]
    assert len(llm.calls("chat")) == 1
    Conversation.objects.filter(pk=cid).update(turn_token="x" * 32, turn_expires_at=timezone.now() + timedelta(hours=1))
    assert send(clients["alice"], cid, cmid="other").status_code == 503
    assert Message.objects.filter(conversation_id=cid).count() == 2


@pytest.mark.postgresql_only
def test_on_postgresql_the_turns_hot_statements_are_prepared_once_per_connection(clients, llm, school):
    """The token's lookup, the claim, the finish and the compiled reads go through
    core.db.server_cursor: after two turns on one connection, PostgreSQL holds them prepared,
    each once, and the second turn prepared nothing new."""
    add_memories(school["alice"], 3)
    steady_turn(clients, llm)
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        prepared = [row[0] for row in cursor.fetchall()]
    firsts = [s.lstrip().split(" ")[0] for s in prepared]
    assert "WITH" in firsts and sum(s.lstrip().startswith("WITH claimed") for s in prepared) == 1, prepared
    assert sum(s.lstrip().startswith("WITH counted") for s in prepared) == 1, prepared
    assert any('JOIN "authtoken_token" t' in s for s in prepared), prepared
    assert len(prepared) == len(set(prepared)), prepared
    before = len(prepared)
    llm.script("chat", {"content": "Third."})
    cid = Conversation.objects.filter(student=school["alice"]).latest("pk").pk
    assert send(clients["alice"], cid, content="One more question about fractions", cmid="third").status_code == 201
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_prepared_statements")
        assert cursor.fetchone()[0] == before
