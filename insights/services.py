"""A question about a student or a class, in synchronous steps (insights.asking awaits the model
between them, holding no database connection):

1. `ask_target`: who asks about whom (insights.selectors, 404 outside the scope) and the budget
   check (llm.costs: the same 429 `budget_exceeded` a chat message gets, for the asker's budget);
2. `ask_prepare`: the evidence within the token budget (insights.evidence, insights.classroom)
   and the prompt (insights.prompts);
3. `ask_store`: the answer checked (insights.citations) and stored in one transaction with its
   access log (AskMemory), its metering (LLMUsage) and the students' access log (audit: the
   student asked about, or each student a class's answer cites); `usage_save` stores the metering of a
   call that failed.

Metering: a question is metered to whoever asks it. A student's question about themself is
theirs, like their chat (their budgets and their classes' count it). A teacher's or staff
member's question, about a student or a class, is metered to them (`LLMUsage.asker`, with the
class it was about), never to a student: it counts in their asker budgets only, so that no
question can spend a student's or a class's chat budget. With no evidence shown, no model is
called.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from accounts.models import Classroom, User
from accounts.selectors import student_get_overseen
from audit.services import Kind, Surface, access_record
from insights import classroom as classroom_evidence
from insights import evidence, prompts
from insights.citations import check_answer, citations, named_students, says_insufficient
from insights.items import Item
from insights.models import AskLog, AskMemory
from insights.selectors import ask_classroom_get, memories_for
from llm import costs
from llm.gateway import MODEL_NAME_CHARS, storable
from llm.models import LLMUsage
from llm.untrusted import quoted

# The most tokens of evidence a prompt holds, whatever the model's window.
EVIDENCE_MAX_TOKENS = 6000
# The longest answer asked of the model (less on a small window: its reply reserve).
ANSWER_MAX_TOKENS = 700


@dataclass(frozen=True)
class Target:
    """What step 1 resolved: the asker, one student or one class (and its students), the question."""

    asker: User
    question: str
    student: User | None = None
    classroom: Classroom | None = None
    students: tuple[User, ...] = ()

    @property
    def language(self) -> str:
        return self.asker.language or "en"


@dataclass(frozen=True)
class Limits:
    """The prompt's room (the window less the reply's reserve) and the answer's cap."""

    input_tokens: int
    answer_tokens: int


@dataclass
class Prepared:
    target: Target
    messages: list[dict[str, str]]
    blocks: list[prompts.Block]
    shown: dict[str, Item] = field(default_factory=dict)


def ask_target(*, user: Any, question: str, student_id: Any = None, classroom_id: Any = None) -> Target:
    """Step 1 (see the module docstring). Raises NotFound, or BudgetExceeded (429) when the
    asker's budget is spent: a student's own, or a teacher's or staff member's asker budget."""
    if student_id is not None:
        student = student_get_overseen(user=user, student_id=student_id)
        if student.pk == user.pk:
            costs.budget_check(student_id=student.pk)
        else:
            costs.asker_budget_check(asker_id=user.pk)
        return Target(asker=user, question=question, student=student)
    classroom = ask_classroom_get(user=user, classroom_id=classroom_id)
    students = tuple(classroom_evidence.class_students(classroom))
    costs.asker_budget_check(asker_id=user.pk)
    return Target(asker=user, question=question, classroom=classroom, students=students)


# Who asks, as the instructions name them, by role, about a class and about a student: a class
# has several teachers (any of them may ask), and a school administrator sees what a teacher of
# every class of their school sees. Anyone else who may ask is staff.
ASKERS: dict[str, tuple[str, str]] = {
    User.Role.TEACHER: ("one of the class's teachers", "one of the student's teachers"),
    User.Role.ADMINISTRATOR: ("an administrator of the class's school", "an administrator of the student's school"),
}
STAFF_ASKER = "a staff member of the service"


def _framing(target: Target) -> tuple[str, str]:
    """(about, asker) for the instructions."""
    about_class, about_student = ASKERS.get(target.asker.role, (STAFF_ASKER, STAFF_ASKER))
    if target.classroom is not None:
        name = quoted(target.classroom.name)
        return f"the students of the class {name}; name each student you speak of", about_class
    assert target.student is not None
    if target.asker.pk == target.student.pk:
        return "themself (answer them as 'you')", "the student themself"
    return f"the student {target.student.username}", about_student


def ask_prepare(*, target: Target, limits: Limits, embedder: Any = True) -> Prepared:
    """Step 2: the evidence that fits, and the prompt. `embedder` is recall's (memory.blocks:
    vectors embedded before this step, None for lexical recall)."""
    about, asker = _framing(target)
    fixed = prompts.fixed_tokens(language=target.language, about=about, asker=asker, question=target.question)
    budget = max(0, min(EVIDENCE_MAX_TOKENS, limits.input_tokens - fixed))
    memories = memories_for(target.asker)
    if target.student is not None:
        candidates = evidence.student_evidence(
            memories=memories, student=target.student, question=target.question, embedder=embedder
        )
        room = budget - prompts.block_tokens(target.student.username)
        items, _left_out = evidence.fit(candidates, room) if room > 0 else ([], len(candidates))
        blocks = [prompts.Block(target.student.pk, target.student.username, items)]
    else:
        shortlist = classroom_evidence.shortlist(
            students=target.students,
            memories=memories,
            question=target.question,
            language=target.language,
            embedder=embedder,
        )
        blocks, _left_out = classroom_evidence.fit_round_robin(shortlist, budget)
    blocks = [b for b in blocks if b.items]
    messages = prompts.ask_messages(
        language=target.language, about=about, asker=asker, question=target.question, blocks=blocks
    )
    shown = {item.ref: item for block in blocks for item in block.items}
    return Prepared(target=target, messages=messages, blocks=blocks, shown=shown)


def usage_save(*, prepared: Prepared, usage: list[LLMUsage]) -> None:
    """Store the metering of the question's model calls, each row the asker's (see the module
    docstring): the student's only when they ask about themself."""
    target = prepared.target
    own = target.student is not None and target.student.pk == target.asker.pk
    for row in usage:
        row.asker_id = target.asker.pk
        row.student_id = target.asker.pk if own else None
        row.classroom_id = target.classroom.pk if target.classroom is not None else None
    LLMUsage.objects.bulk_create(usage)


def ask_store(*, prepared: Prepared, content: str, model: str, usage: list[LLMUsage]) -> AskLog:
    """Step 3: check the answer's citations and store it, its access log and its metering, in
    one transaction."""
    target = prepared.target
    checked = check_answer(storable(content), prepared.shown)
    insufficient = not prepared.shown or says_insufficient(checked.answer, prompts.INSUFFICIENT_PHRASES)
    students: list[dict[str, Any]] = []
    if target.classroom is not None:
        shortlisted = [(b.student_id, b.username) for b in prepared.blocks]
        students = named_students(checked.answer, checked.cited, prepared.shown, shortlisted)
    cited = set(checked.cited)
    with transaction.atomic():
        log = AskLog.objects.create(
            asker=target.asker,
            student=target.student,
            classroom=target.classroom,
            question=target.question,
            answer=checked.answer,
            language=target.language,
            claims=checked.claims,
            citations=citations(checked.cited, prepared.shown),
            dropped=checked.dropped,
            students=students,
            insufficient=insufficient,
            evidence_count=len(prepared.shown),
            model=model[:MODEL_NAME_CHARS],
            prompt_tokens=sum(u.prompt_tokens for u in usage),
            completion_tokens=sum(u.completion_tokens for u in usage),
        )
        log.subjects.set([b.student_id for b in prepared.blocks] or ([target.student.pk] if target.student else []))
        memory_ids = [(item.memory_id, item) for item in prepared.shown.values() if item.memory_id is not None]
        AskMemory.objects.bulk_create(
            AskMemory(ask=log, memory_id=pk, rank=rank, signals={**item.signals, "cited": item.ref in cited})
            for rank, (pk, item) in enumerate(memory_ids, start=1)
        )
        usage_save(prepared=prepared, usage=usage)
        # The students' access log: the student asked about, or each student a class's answer cites.
        if target.student is not None:
            about = [target.student.pk]
        else:
            about = [prepared.shown[ref].student_id for ref in checked.cited if ref in prepared.shown]
        access_record(
            actor=target.asker, kind=Kind.INSIGHTS, surface=Surface.INSIGHTS, reads=[(pk, log.pk) for pk in about]
        )
    return log
