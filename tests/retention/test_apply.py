"""Applying the retention policies: what each period lets go goes, and nothing else; an open flag
keeps what it cites; a dry run counts what the real run then does, and changes nothing; a class's
own policy replaces its school's, and another school's is never applied."""

from __future__ import annotations

import uuid
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.utils import timezone

from accounts.models import User
from accounts.services import users_set_active
from conversations.files import file_storage
from conversations.models import ContextCheckpoint, Conversation, ConversationFile, Message
from conversations.services import conversation_close, conversation_create
from memory.models import AIMemory, ConsolidationDecision, MemoryEmbedding, SupersessionReview
from memory.search import fts
from memory.search.backend import search_backend
from memory.services.embedding import memory_embeddings_write
from memory.services.notes import teacher_note_create
from memory.services.records import memory_summary_store
from privacy.models import Erasure
from retention import tasks
from retention.models import ArchivedMemory, RetentionPolicy, RetentionRun
from retention.policies import Periods
from retention.services import plan_apply, student_plan
from safety.models import Flag, FlagAction
from tests.conftest import client_for
from tests.conversations.test_files import upload
from tests.privacy.conftest import superseded_pair
from tests.privacy.test_erasure import rows_containing


def ended_conversation(student: User, days_ago: float, *, word: str = "fractions", with_file: bool = False) -> int:
    """A conversation of `student` ended `days_ago` days ago: a question and its reply, a
    checkpoint, a summary memory, and (`with_file`) an uploaded file in the storage."""
    conversation = conversation_create(user=student, subject="Maths")
    asked = Message.objects.create(
        conversation=conversation, seq=1, role="student", content=f"What are {word}?", client_message_id="q1"
    )
    Message.objects.create(conversation=conversation, seq=2, role="tutor", content=f"{word} are parts.", reply_to=asked)
    ContextCheckpoint.objects.create(
        conversation=conversation,
        covers_through_seq=2,
        covered_messages=2,
        covered_tokens=20,
        summary=f"Earlier: {word}.",
        summary_tokens=4,
    )
    if with_file:
        resp = upload(client_for(student), conversation.pk, "notes.txt", f"{word} notes\n".encode())
        assert resp.status_code == 201, resp.content
    conversation_close(conversation_id=conversation.pk)
    memory_summary_store(
        student_id=student.pk,
        conversation_id=conversation.pk,
        title="Fractions practice with worked examples",
        content="The student practised fractions. They did well with drawings.",
    )
    at = timezone.now() - timedelta(days=days_ago)
    Conversation.objects.filter(pk=conversation.pk).update(ended_at=at, last_activity_at=at, message_count=2)
    return conversation.pk


def flag_on(conversation_id: int, *, status: str = Flag.Status.OPEN, resolved_days_ago: float | None = None) -> Flag:
    """A flag on the conversation's first message; a resolved one logged `resolved_days_ago` ago."""
    conversation = Conversation.objects.get(pk=conversation_id)
    message = Message.objects.filter(conversation=conversation).order_by("seq").first()
    flag = Flag.objects.create(
        student=conversation.student,
        conversation=conversation,
        message=message,
        source=Flag.Source.MESSAGE,
        category="distress",
        severity="concern",
        excerpt="flagged excerpt",
        status=status,
    )
    if resolved_days_ago is not None:
        action = FlagAction.objects.create(flag=flag, kind=FlagAction.Kind.RESOLVED, note="Spoke with them.")
        FlagAction.objects.filter(pk=action.pk).update(at=timezone.now() - timedelta(days=resolved_days_ago))
    return flag


def transcript(conversation_id: int) -> tuple[int, int, int]:
    """(messages, files, checkpoints) of the conversation."""
    return (
        Message.objects.filter(conversation_id=conversation_id).count(),
        ConversationFile.objects.filter(conversation_id=conversation_id).count(),
        ContextCheckpoint.objects.filter(conversation_id=conversation_id).count(),
    )


def snapshot() -> tuple[Any, ...]:
    """Every row a run may change."""
    return (
        list(Message.objects.order_by("pk").values_list("pk", "conversation_id")),
        list(ConversationFile.objects.order_by("pk").values_list("pk")),
        list(ContextCheckpoint.objects.order_by("pk").values_list("pk")),
        list(AIMemory.objects.order_by("pk").values_list("pk", "status", "archived_reason")),
        list(ArchivedMemory.objects.order_by("pk").values_list("pk")),
        list(Flag.objects.order_by("pk").values_list("pk", "message_id", "file_id")),
        list(User.objects.order_by("pk").values_list("pk")),
        sorted(MemoryEmbedding.objects.values_list("memory_id", flat=True)),
    )


def run(*args: str) -> str:
    out = StringIO()
    call_command("retention_apply", *args, stdout=out)
    return out.getvalue()


def latest_counts(school: Any, *, dry_run: bool) -> dict[str, int]:
    found = RetentionRun.objects.filter(school=school, dry_run=dry_run).order_by("-started_at", "-pk").first()
    assert found is not None and found.finished_at is not None
    return found.counts


def test_transcripts_past_the_period_lose_messages_and_files_and_keep_their_summary(
    school, django_capture_on_commit_callbacks
):
    """With transcript_days=30: a conversation ended 31 days ago loses its messages, checkpoint and
    file (gone from the storage too) and keeps its row, counts and summary memory; one ended 29
    days ago keeps everything; one an open flag cites keeps its messages until the flag is
    resolved; a resolved flag on an erased message stays, with its excerpt. The dry run before
    reports exactly what the real run does, and changes nothing."""
    RetentionPolicy.objects.create(school=school["school"], transcript_days=30)
    alice = school["alice"]
    old = ended_conversation(alice, 31, with_file=True)
    recent = ended_conversation(alice, 29)
    flagged = ended_conversation(alice, 40)
    open_flag = flag_on(flagged)
    closed = ended_conversation(alice, 40)
    closed_flag = flag_on(closed, status=Flag.Status.RESOLVED, resolved_days_ago=35)
    storage_name = ConversationFile.objects.get(conversation_id=old).storage_name
    assert file_storage().exists(storage_name)
    before = snapshot()

    out = run("--dry-run")
    assert snapshot() == before
    assert "would go" in out and "Dry run: nothing was changed." in out
    dry = latest_counts(school["school"], dry_run=True)
    assert (dry["conversations"], dry["messages"], dry["files"]) == (2, 4, 1)

    with django_capture_on_commit_callbacks(execute=True):
        run()
    assert latest_counts(school["school"], dry_run=False) == dry
    assert transcript(old) == (0, 0, 0)
    assert not file_storage().exists(storage_name)
    assert Conversation.objects.get(pk=old).message_count == 2
    assert AIMemory.objects.filter(source_conversation_id=old, kind=AIMemory.Kind.SUMMARY, status="active").exists()
    assert transcript(recent) == (2, 0, 1)
    assert transcript(flagged) == (2, 0, 1)
    assert transcript(closed) == (0, 0, 0)
    closed_flag.refresh_from_db()
    assert (closed_flag.message_id, closed_flag.excerpt) == (None, "flagged excerpt")

    Flag.objects.filter(pk=open_flag.pk).update(status=Flag.Status.RESOLVED)
    run()
    assert transcript(flagged) == (0, 0, 0)
    assert transcript(recent) == (2, 0, 1)
    assert latest_counts(school["school"], dry_run=False)["conversations"] == 1


@pytest.fixture
def forgotten(school: dict[str, Any], openai_embedder: Any) -> dict[str, Any]:
    """bob, inactive for 400 days, whose memories (a summary, a teacher note, a superseded fact
    and its successor, with their vectors, index rows, a review and a consolidation decision)
    all hold one unique word; and a memory of his an open flag cites."""
    bob = school["bob"]
    word = "quibbix" + uuid.uuid4().hex[:8]
    cid = ended_conversation(bob, 400)
    summary = AIMemory.objects.get(source_conversation_id=cid)
    AIMemory.objects.filter(pk=summary.pk).update(content=f"The student practised {word} fractions.")
    note = teacher_note_create(
        teacher=school["teacher_a"],
        student_id=bob.pk,
        title=f"Likes {word} puzzles more than anything",
        content=f"{word} games work.",
    )
    _older, newer = superseded_pair(bob, word, evidence=[note.pk])
    SupersessionReview.objects.create(student=bob, older=note, newer=newer, confidence=0.4, reason=f"{word}?")
    ConsolidationDecision.objects.create(
        student=bob, key=uuid.uuid4().hex, members=[note.pk, newer.pk], outcome="skipped", reason=f"{word} differs"
    )
    cited = teacher_note_create(
        teacher=school["teacher_a"], student_id=bob.pk, title="Seemed upset on Monday", content="Talked about home."
    )
    pattern = Flag.objects.create(
        student=bob, source=Flag.Source.PATTERN, category="distress", severity="concern", excerpt="upset"
    )
    pattern.cited_memories.set([cited])
    memory_embeddings_write(memory_ids=list(AIMemory.objects.filter(student=bob).values_list("pk", flat=True)))
    long_ago = timezone.now() - timedelta(days=400)
    User.objects.filter(pk=bob.pk).update(date_joined=long_ago, last_login=long_ago)
    return {"bob": bob, "word": word, "cited": cited.pk, "flag": pattern.pk}


def test_memories_of_an_inactive_student_are_archived_then_nothing_is_left_after_the_grace(school, forgotten):
    """With memory_days=365 and memory_grace_days=30: a student inactive for 400 days has every
    memory archived ("Retention period.", out of the index, vectors dropped); 30 days later no
    table holds anything of them. A memory an open flag cites stays active; an active student
    keeps hers."""
    RetentionPolicy.objects.create(school=school["school"], memory_days=365, memory_grace_days=30)
    bob, word = forgotten["bob"], forgotten["word"]
    ended_conversation(school["alice"], 2)
    alice_memories = list(AIMemory.objects.filter(student=school["alice"]).values_list("pk", "status"))
    needles = [word, *fts.analyse(word, "en")]
    assert rows_containing(needles)
    memories = AIMemory.objects.filter(student=bob).exclude(pk=forgotten["cited"])
    count = memories.count()
    assert search_backend().indexed_ids(bob.pk)

    run()
    assert latest_counts(school["school"], dry_run=False)["memories_archived"] == count
    assert not memories.filter(status=AIMemory.Status.ACTIVE).exists()
    assert (
        memories.filter(archived_reason="Retention period.").count() == count - 1
    )  # the superseded one keeps its reason
    assert ArchivedMemory.objects.filter(memory__in=memories).count() == count
    assert search_backend().indexed_ids(bob.pk) == {forgotten["cited"]}
    assert not MemoryEmbedding.objects.filter(memory__in=memories).exists()

    run()  # within the grace: nothing more
    counts = latest_counts(school["school"], dry_run=False)
    assert (counts["memories_archived"], counts["memories_erased"]) == (0, 0)
    assert AIMemory.objects.filter(student=bob).count() == count + 1

    ArchivedMemory.objects.update(archived_at=timezone.now() - timedelta(days=31))
    before = snapshot()
    run("--dry-run")
    assert snapshot() == before
    run()
    assert latest_counts(school["school"], dry_run=False) == latest_counts(school["school"], dry_run=True)
    assert latest_counts(school["school"], dry_run=False)["memories_erased"] == count
    assert rows_containing(needles) == {}
    assert list(AIMemory.objects.filter(student=bob).values_list("pk", "status")) == [(forgotten["cited"], "active")]
    assert list(AIMemory.objects.filter(student=school["alice"]).values_list("pk", "status")) == alice_memories


def test_a_class_policy_replaces_its_schools_and_another_schools_is_never_applied(schools):
    """School A keeps transcripts 30 days and 5B keeps them (its own policy, all null); school B
    keeps them 1 day. alice's (5A) old conversation goes, carol's (5B) stays, and alice's 5-day-old
    one stays (school B's day is not hers); `--school A` leaves dave's (school B) alone, a run for
    school B takes it."""
    RetentionPolicy.objects.create(school=schools["school"], transcript_days=30)
    RetentionPolicy.objects.create(classroom=schools["class_b"])
    RetentionPolicy.objects.create(school=schools["school_b"], transcript_days=1)
    alice_old = ended_conversation(schools["alice"], 40)
    alice_recent = ended_conversation(schools["alice"], 5)
    carol_old = ended_conversation(schools["carol"], 40)
    dave_old = ended_conversation(schools["dave"], 40)

    out = run("--school", str(schools["school"].pk))
    assert f"school {schools['school'].pk} (Test school), gone: conversations 1" in out
    assert transcript(alice_old)[0] == 0
    assert transcript(alice_recent)[0] == 2 and transcript(carol_old)[0] == 2 and transcript(dave_old)[0] == 2
    assert not RetentionRun.objects.filter(school=schools["school_b"]).exists()

    run("--school", str(schools["school_b"].pk))
    assert transcript(dave_old)[0] == 0
    assert transcript(alice_recent)[0] == 2 and transcript(carol_old)[0] == 2


def test_a_student_in_several_classes_follows_the_shortest_period(schools):
    """carol, in 5B (its own 60 days) and 5A (its school's 30 days), follows 30 days."""
    RetentionPolicy.objects.create(school=schools["school"], transcript_days=30)
    RetentionPolicy.objects.create(classroom=schools["class_b"], transcript_days=60)
    schools["class_a"].enrollments.create(student=schools["carol"])
    old = ended_conversation(schools["carol"], 40)
    run()
    assert transcript(old)[0] == 0


def test_deactivated_students_are_erased_after_the_period_unless_a_flag_is_open(school):
    """With inactive_days=30: carol, deactivated 31 days ago, is erased (an erasure record made
    by the retention policy); bob, deactivated as long ago but with an open flag, is kept; alice,
    deactivated yesterday, is kept."""
    RetentionPolicy.objects.create(school=school["school"], inactive_days=30)
    carol, bob, alice = school["carol"], school["bob"], school["alice"]
    ended_conversation(carol, 40)
    flag_on(ended_conversation(bob, 40))
    users_set_active(user_ids=[carol.pk, bob.pk, alice.pk], active=False)
    assert User.objects.get(pk=alice.pk).deactivated_at is not None
    User.objects.filter(pk__in=[carol.pk, bob.pk]).update(deactivated_at=timezone.now() - timedelta(days=31))

    run()
    assert latest_counts(school["school"], dry_run=False)["students_erased"] == 1
    assert not User.objects.filter(pk=carol.pk).exists()
    assert User.objects.filter(pk__in=[bob.pk, alice.pk]).count() == 2
    erasure = Erasure.objects.get()
    assert erasure.via == Erasure.Via.RETENTION and erasure.erased_by is None
    assert erasure.counts["deleted"]["accounts.User"] == 1


def test_resolved_flags_are_erased_after_the_period_and_open_ones_never(school):
    """With flag_days=90: a flag resolved 91 days ago is erased with its log; one resolved 10 days
    ago and an open one are kept."""
    RetentionPolicy.objects.create(school=school["school"], flag_days=90)
    conversation = ended_conversation(school["alice"], 100)
    old = flag_on(conversation, status=Flag.Status.RESOLVED, resolved_days_ago=91)
    recent = flag_on(ended_conversation(school["alice"], 100), status=Flag.Status.FALSE_POSITIVE, resolved_days_ago=10)
    still_open = flag_on(ended_conversation(school["alice"], 100))
    tasks.retention_apply()
    assert set(Flag.objects.values_list("pk", flat=True)) == {recent.pk, still_open.pk}
    assert not FlagAction.objects.filter(flag_id=old.pk).exists()
    assert transcript(conversation)[0] == 2
    assert latest_counts(school["school"], dry_run=False)["flags"] == 1


def test_no_policy_keeps_everything(school):
    """Without a policy (or with every period null) nothing is touched; the run is recorded."""
    RetentionPolicy.objects.create(classroom=school["class_a"])
    ended_conversation(school["alice"], 4000)
    User.objects.filter(pk=school["bob"].pk).update(
        is_active=False, deactivated_at=timezone.now() - timedelta(days=4000)
    )
    before = snapshot()
    run()
    assert snapshot() == before
    assert set(latest_counts(school["school"], dry_run=False).values()) == {0}


def test_a_flag_opened_between_the_plan_and_its_application_keeps_what_it_cites(school):
    """A plan is applied as it was found, but for what a flag opened since cites: that is kept,
    and the counts say so."""
    alice = school["alice"]
    first, second = ended_conversation(alice, 40), ended_conversation(alice, 40)
    plan = student_plan(alice, Periods(transcript_days=30), now=timezone.now())
    assert plan.conversations == [first, second]
    flag = flag_on(first)
    run_row = RetentionRun.objects.create(school=school["school"], started_at=timezone.now())
    plan_apply(plan, now=timezone.now(), run=run_row)
    assert (transcript(first), transcript(second)) == ((2, 0, 1), (0, 0, 0))
    assert (plan.counts["conversations"], plan.counts["messages"]) == (1, 2)
    assert Flag.objects.get(pk=flag.pk).message_id is not None
