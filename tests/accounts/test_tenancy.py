"""Tenancy: every endpoint scoped to its owner, across two schools and the three levels (school,
class, enrolment). Another student, a teacher of another class, the other school's administrator,
teacher and student, and a teacher whose enrolment, class or teaching is inactive get 404 on
every detail endpoint; a teacher of the class (primary or not) and the school's administrator
get the same answers. A teacher reads their class's students and writes nothing for them except
teacher notes. The admin's half of the matrix (every admin page and action, for the same
intruders) is tests/accounts/test_admin_tenancy.py."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from django.utils import timezone

from accounts.models import (
    Classroom,
    Enrollment,
    GuardianLink,
    RosterImport,
    SignInCode,
    TeacherEnrollment,
    User,
)
from conversations.models import Conversation, ConversationFile, Message
from conversations.services import conversation_create
from insights.models import AskLog
from learning.models import Quiz, SkillMastery, Task, TaskStatus
from learning.services import quiz_create_from_tool
from lti.models import RosterSync
from memory.card import card_propose
from memory.models import AIMemory, CardChange, StudentCard, SupersessionReview
from memory.services.notes import teacher_note_create
from privacy.models import ConsentChange, ErasureRequest
from retention.models import RetentionPolicy
from safety.models import Flag, FlagAction
from tests.conftest import ModuleRows, build_school, build_schools, client_for, make_user
from tests.learning.conftest import QUIZ_ARGS

# Whose rows a case reads: each student (of the `schools` fixture) with their teacher and class.
OWNERS = {"alice": ("teacher_a", "class_a"), "dave": ("teacher_c", "class_c")}


def student_rows(people: dict[str, Any], owner: str) -> dict[str, int]:
    """One of everything of `owner`'s, by the ids the endpoints' URLs name: a conversation with a
    message and its reply, two teacher notes and a review between them, a quiz, a task, a flag, a card and a
    proposed change to it."""
    student = people[owner]
    teacher_key, class_key = OWNERS[owner]
    teacher = people[teacher_key]
    conversation = conversation_create(user=student, subject="Fractions")
    cid = conversation.pk
    asked = Message.objects.create(
        conversation=conversation, seq=1, role="student", content="hi", client_message_id="a1"
    )
    Message.objects.create(conversation=conversation, seq=2, role="tutor", content="Hello!", reply_to=asked)
    note = teacher_note_create(
        teacher=teacher, student_id=student.pk, title="Needs help with long division", content="x"
    )
    quiz = quiz_create_from_tool(student_id=student.pk, conversation_id=cid, arguments=QUIZ_ARGS)
    task = Task.objects.create(teacher=teacher, student=student, title="Exercise 4 p. 12")
    newer = teacher_note_create(teacher=teacher, student_id=student.pk, title="Long division is fine now", content="y")
    review = SupersessionReview.objects.create(
        student=student, older=note, newer=newer, confidence=0.5, reason="Maybe an update"
    )
    reply = Message.objects.get(conversation_id=cid, role="tutor")
    flag = Flag.objects.create(
        student=student,
        conversation_id=cid,
        message=reply.reply_to,
        source=Flag.Source.MESSAGE,
        category="distress",
        severity="concern",
        excerpt="hi",
    )
    StudentCard.objects.create(student=student, interests=["chess"], student_editable=["interests"])
    RetentionPolicy.objects.create(classroom=people[class_key], transcript_days=400)
    change = card_propose(
        student_id=student.pk, field="accommodations", op="add", value="Dyslexia", confidence=0.9, memory_id=None
    )
    assert change is not None
    # An import by the student's school administrator: no one else's business.
    administrator = make_user(f"admin_{owner}", User.Role.ADMINISTRATOR, school=student.school)
    roster_import = RosterImport.objects.create(created_by=administrator, school=student.school, file="roster/a.zip")
    erasure_request = ErasureRequest.objects.create(
        student=student,
        school=student.school,
        requested_by=people[f"guardian_{owner}"],
        requested_at=timezone.now(),
        reason="Moving abroad",
    )
    return {
        "erasure_request": erasure_request.pk,
        "roster_import": roster_import.pk,
        "change": change.pk,
        "flag": flag.pk,
        "newer": newer.pk,
        "review": review.pk,
        "message": reply.pk,
        "conversation": cid,
        "memory": note.pk,
        "student": student.pk,
        "quiz": quiz.pk,
        "task": task.pk,
        "classroom": people[class_key].pk,
        "guardian": people[f"guardian_{owner}"].pk,
    }


@pytest.fixture(scope="module")
def matrix_rows(module_rows: ModuleRows) -> tuple[dict[str, Any], dict[str, dict[str, int]]]:
    """The two schools' people (`build_schools`) and every row of alice's and of dave's
    (`student_rows`), made once for the module: each case of the matrices reads them, and
    whatever a case changes is rolled back after it (tests/conftest.py, `module_rows`)."""
    with module_rows.build():
        people = build_schools(build_school())
        people.update(build_guardians(people))
        return people, {owner: student_rows(people, owner) for owner in OWNERS}


def build_guardians(people: dict[str, Any]) -> dict[str, User]:
    """A guardian of alice, of carol (alice's school), of dave (the other school), one linked to
    no one, and one whose link to alice has ended."""
    guardians: dict[str, User] = {}
    for name, child, active in [
        ("guardian_alice", "alice", True),
        ("guardian_carol", "carol", True),
        ("guardian_dave", "dave", True),
        ("guardian_none", None, True),
        ("guardian_ended", "alice", False),
    ]:
        school = people[child].school if child else people["school"]
        guardian = make_user(name, User.Role.GUARDIAN, school=school)
        if child:
            GuardianLink.objects.create(guardian=guardian, student=people[child], active=active)
        guardians[name] = guardian
    return guardians


@pytest.fixture
def school(db: None, matrix_rows: tuple[dict[str, Any], Any]) -> dict[str, Any]:
    """The module's people (both schools: `schools` is the same), for this test: copies, so that
    what a test sets on them stays in that test."""
    return copy.deepcopy(matrix_rows[0])


@pytest.fixture
def schools(school: dict[str, Any]) -> dict[str, Any]:
    return school


@pytest.fixture
def alice_data(db: None, matrix_rows: tuple[Any, dict[str, dict[str, int]]]) -> dict[str, int]:
    return matrix_rows[1]["alice"]


def learning_state():
    """What an intruder must not change on alice's learning rows."""
    return (
        list(Quiz.objects.values_list("pk", "status")),
        list(SkillMastery.objects.values_list("pk", "attempts")),
        Task.objects.count(),
        list(TaskStatus.objects.values_list("pk", "status")),
    )


# (method, url template, body) for every endpoint that names one of alice's rows.
DETAIL_ENDPOINTS = [
    ("get", "/api/v1/roster/imports/{roster_import}/", None),
    ("get", "/api/v1/conversations/{conversation}/", None),
    ("get", "/api/v1/conversations/{conversation}/messages/", None),
    ("post", "/api/v1/conversations/{conversation}/messages/", {"content": "hello", "client_message_id": "x1"}),
    ("post", "/api/v1/conversations/{conversation}/end/", None),
    ("get", "/api/v1/conversations/{conversation}/files/", None),
    ("post", "/api/v1/conversations/{conversation}/files/", None),
    ("get", "/api/v1/memories/{memory}/", None),
    ("get", "/api/v1/memories/?student={student}", None),
    ("get", "/api/v1/conversations/?student={student}", None),
    ("get", "/api/v1/students/{student}/", None),
    ("get", "/api/v1/usage/?student={student}", None),
    ("post", "/api/v1/memories/", {"student": "{student}", "title": "A note from another teacher", "content": "x"}),
    ("patch", "/api/v1/memories/{memory}/", {"title": "Rewritten by someone else"}),
    ("post", "/api/v1/memories/{memory}/archive/", {"reason": "Archived by someone else"}),
    ("get", "/api/v1/quizzes/{quiz}/", None),
    ("get", "/api/v1/quizzes/?student={student}", None),
    (
        "post",
        "/api/v1/quizzes/{quiz}/answers/",
        {"client_attempt_id": "x1", "answers": [{"question": 1, "answer": "x"}]},
    ),
    ("get", "/api/v1/students/{student}/skills/", None),
    # bob is in alice's class, but the class's figures are its teacher's.
    ("get", "/api/v1/classrooms/{classroom}/skills/", None),
    # reviews: the student's own and their teachers'; a class's are its teachers' (a student: 403).
    ("get", "/api/v1/students/{student}/reviews/", None),
    ("get", "/api/v1/classrooms/{classroom}/reviews/", None),
    # questions about a student (their teachers, staff, themself) and a class (its teachers, staff)
    ("post", "/api/v1/students/{student}/ask/", {"question": "What does she struggle with?"}),
    ("get", "/api/v1/students/{student}/asks/", None),
    ("post", "/api/v1/classrooms/{classroom}/ask/", {"question": "Who struggles with fractions?"}),
    # sign-in cards: a class's are its teachers' (and its school's administrators', staff's)
    ("post", "/api/v1/classrooms/{classroom}/sign-in-codes/", {"days": 7}),
    # the class overview's roster: its teachers' and its school's administrators'
    ("get", "/api/v1/classrooms/{classroom}/roster/", None),
    # LTI: a class's roster sync from its LMS courses and the quiz scores sent to them
    ("post", "/api/v1/classrooms/{classroom}/lti-sync/", None),
    ("get", "/api/v1/classrooms/{classroom}/lti-sync/", None),
    ("get", "/api/v1/classrooms/{classroom}/lti-scores/", None),
    ("post", "/api/v1/tasks/", {"student": "{student}", "title": "A task from another teacher"}),
    ("post", "/api/v1/tasks/{task}/status/", {"status": "done"}),
    # the memory lifecycle: the chain, a teacher's supersession, the review queue, the access log
    ("get", "/api/v1/memories/{memory}/chain/", None),
    ("post", "/api/v1/memories/{memory}/supersede/", {"by": "{newer}", "reason": "Superseded by someone else"}),
    ("get", "/api/v1/memory-reviews/?student={student}", None),
    ("post", "/api/v1/memory-reviews/{review}/apply/", None),
    ("post", "/api/v1/memory-reviews/{review}/dismiss/", None),
    ("get", "/api/v1/conversations/{conversation}/messages/{message}/memories/", None),
    # the student card: the student's own and their teachers'; proposals are decided by teachers
    ("get", "/api/v1/students/{student}/card/", None),
    ("patch", "/api/v1/students/{student}/card/", {"interests": ["Rewritten by someone else"]}),
    ("get", "/api/v1/students/{student}/card/changes/", None),
    ("post", "/api/v1/card-changes/{change}/accept/", None),
    ("post", "/api/v1/card-changes/{change}/reject/", None),
    # privacy: the export is the class's teacher's, staff's and the student's own; erasure is
    # staff's alone (404 to anyone else, the class's teacher included: tests/privacy).
    ("get", "/api/v1/students/{student}/export/", None),
    ("post", "/api/v1/students/{student}/erase/", {"confirm": "{student}", "reason": "Erased by someone else"}),
    ("get", "/api/v1/students/{student}/consent/", None),
    ("put", "/api/v1/students/{student}/consent/", {"memory_consent": False, "reason": "Set by someone else"}),
    # guardians: linked and unlinked by the school's administrators and staff (a teacher: 403)
    ("get", "/api/v1/students/{student}/guardians/", None),
    ("post", "/api/v1/students/{student}/guardians/", {"guardian": "{guardian}"}),
    ("delete", "/api/v1/students/{student}/guardians/{guardian}/", None),
    # the access log: the school's administrators' and staff's (a teacher of the class: 403)
    ("get", "/api/v1/students/{student}/access-log/", None),
    # erasure requests: filed by a guardian, decided by the school's administrators and staff
    ("post", "/api/v1/students/{student}/erasure-requests/", {"reason": "Filed by someone else"}),
    ("post", "/api/v1/erasure-requests/{erasure_request}/approve/", None),
    ("post", "/api/v1/erasure-requests/{erasure_request}/refuse/", {"reason": "Refused by someone else"}),
    # safety: a flag is its student's teachers' and staff's; students never see one (the list
    # is a 403 to them, their own flags included: tests/safety/test_flags_api.py).
    ("get", "/api/v1/safety/flags/{flag}/", None),
    ("get", "/api/v1/safety/flags/?student={student}", None),
    ("post", "/api/v1/safety/flags/{flag}/acknowledge/", {"note": "Acknowledged by someone else"}),
    ("post", "/api/v1/safety/flags/{flag}/resolve/", {"note": "Resolved by someone else", "outcome": "resolved"}),
    # retention: a class's own policy is its school's administrators' and staff's (its teachers: 403)
    ("get", "/api/v1/classrooms/{classroom}/retention/", None),
    ("put", "/api/v1/classrooms/{classroom}/retention/", {"transcript_days": 1}),
    ("delete", "/api/v1/classrooms/{classroom}/retention/", None),
]


def _enrolment_inactive(people: dict[str, Any]) -> None:
    Enrollment.objects.filter(student=people["alice"], classroom=people["class_a"]).update(active=False)


def _class_inactive(people: dict[str, Any]) -> None:
    Classroom.objects.filter(pk=people["class_a"].pk).update(active=False)


def _teaching_inactive(people: dict[str, Any]) -> None:
    TeacherEnrollment.objects.filter(teacher=people["teacher_a"], classroom=people["class_a"]).update(active=False)


# (owner of the rows, intruder, what changes once the rows exist). School A: alice and bob in
# 5A (teacher_a), carol in 5B (teacher_b), admin_a; school B: dave in 6C (teacher_c), admin_b.
INTRUDERS: list[tuple[str, str, Callable[[dict[str, Any]], None] | None]] = [
    ("alice", "bob", None),  # a student of her class
    ("alice", "carol", None),  # a student of another class
    ("alice", "teacher_b", None),  # a teacher of another class of her school
    ("alice", "admin_b", None),  # the other school's administrator
    ("alice", "teacher_c", None),  # the other school's teacher
    ("alice", "dave", None),  # the other school's student
    ("alice", "teacher_a", _enrolment_inactive),  # her teacher, once her enrolment is inactive
    ("alice", "teacher_a", _class_inactive),  # her teacher, once her class is inactive
    ("alice", "teacher_a", _teaching_inactive),  # her teacher, once they no longer teach 5A
    ("dave", "admin_a", None),  # the administrator of school A, on school B's student
    ("dave", "teacher_a", None),  # a teacher of school A
    ("dave", "alice", None),  # a student of school A
    ("alice", "guardian_carol", None),  # a guardian of another child of her school
    ("alice", "guardian_dave", None),  # a guardian of the other school's student
    ("alice", "guardian_none", None),  # a guardian linked to no one
    ("alice", "guardian_ended", None),  # her guardian, once the link has ended
    ("dave", "guardian_alice", None),  # a guardian of school A, on school B's student
]


def _case_id(case: tuple[str, str, Any]) -> str:
    owner, intruder, change = case
    return f"{owner}-by-{intruder}" + (f"{change.__name__}" if change else "")


# Every case on every endpoint, but a class's own endpoints once only alice's enrolment is
# inactive: the class is still its teacher's, and leaves her out (tests/accounts/
# test_tenancy_levels.py, tests/insights/test_class_ask.py).
INTRUDER_MATRIX = [
    pytest.param(case, method, url, body, id=f"{method}-{url}-{_case_id(case)}")
    for method, url, body in DETAIL_ENDPOINTS
    for case in INTRUDERS
    if not (case[2] is _enrolment_inactive and url.startswith("/api/v1/classrooms/"))
]


@pytest.mark.parametrize(("case", "method", "url", "body"), INTRUDER_MATRIX)
def test_intruders_get_404(schools, matrix_rows, case, method, url, body):
    """Another student (same class or not, same school or not), a teacher of another class or
    school, the other school's administrator, and a teacher whose student's enrolment, class or
    own teaching is inactive get 404, and nothing changes.

    The exceptions: a student calling the teacher-note or task endpoints, listing safety flags,
    or reading a class's reviews, is refused with 403 up front.
    """
    owner, intruder, change = case
    rows = matrix_rows[1][owner]
    if change is not None:
        change(schools)
    target = url.format(**rows)
    payload = None
    if body is not None:
        payload = {k: (v.format(**rows) if isinstance(v, str) else v) for k, v in body.items()}

    def state():
        memory = AIMemory.objects.get(pk=rows["memory"])
        conversation = Conversation.objects.get(pk=rows["conversation"])
        return (
            conversation.status,
            AIMemory.objects.count(),
            memory.title,
            memory.status,
            memory.updated_at,
            ConversationFile.objects.count(),
            list(SupersessionReview.objects.values_list("pk", "status")),
            list(Flag.objects.values_list("pk", "status", "outcome", "escalate_at")),
            FlagAction.objects.count(),
            list(StudentCard.objects.values_list("pk", "interests", "accommodations", "updated_at")),
            list(CardChange.objects.values_list("pk", "status")),
            AskLog.objects.count(),
            SignInCode.objects.count(),
            RosterSync.objects.count(),
            ConsentChange.objects.count(),
            list(User.objects.filter(memory_consent=False).values_list("pk", flat=True)),
            list(RetentionPolicy.objects.order_by("pk").values_list("pk", "transcript_days")),
            list(GuardianLink.objects.order_by("pk").values_list("pk", "active")),
            list(ErasureRequest.objects.order_by("pk").values_list("pk", "status", "student")),
        )

    before = state(), learning_state()
    resp = getattr(client_for(schools[intruder]), method)(target, payload, format="json")
    student = schools[intruder].role == User.Role.STUDENT
    not_educator = student or schools[intruder].role == User.Role.GUARDIAN
    if not_educator and method == "post" and url in ("/api/v1/memories/", "/api/v1/tasks/"):
        # A student or a guardian may not write teacher notes or assign tasks at all: 403 before
        # any lookup.
        assert resp.status_code == 403, resp.content
    elif student and url.startswith("/api/v1/safety/flags/?"):
        # Students never see flags: the list is refused before any filter is read.
        assert resp.status_code == 403, resp.content
    elif student and url == "/api/v1/classrooms/{classroom}/reviews/":
        # A class's reviews are never a student's: refused before the class is looked up.
        assert resp.status_code == 403, resp.content
    else:
        assert resp.status_code == 404, resp.content
    assert resp.json()["error"]["code"] in ("not_found", "forbidden")
    assert (state(), learning_state()) == before


def _coteacher(people: dict[str, Any]) -> User:
    teacher = make_user("teacher_d", User.Role.TEACHER, school=people["school"])
    TeacherEnrollment.objects.create(classroom=people["class_a"], teacher=teacher, primary=False)
    return teacher


# Who reads alice's rows as her teacher does: 5A's primary teacher, a second teacher of 5A (not
# primary), and the administrator of her school, who acts as a teacher of every class there.
EDUCATORS: dict[str, Callable[[dict[str, Any]], User]] = {
    "teacher_a": lambda people: people["teacher_a"],
    "coteacher": _coteacher,
    "admin_a": lambda people: people["admin_a"],
}

# What a teacher of alice's class gets from each endpoint of DETAIL_ENDPOINTS: her rows are
# theirs to read and to act on as a teacher; 403 for what only the student does (send, end,
# upload, answer a quiz, set a task's status); 404 for erasure, which is staff's alone.
EDUCATOR_ANSWERS: dict[tuple[str, str], int] = {
    ("get", "/api/v1/conversations/{conversation}/"): 200,
    ("get", "/api/v1/conversations/{conversation}/messages/"): 200,
    ("post", "/api/v1/conversations/{conversation}/messages/"): 403,
    ("post", "/api/v1/conversations/{conversation}/end/"): 403,
    ("get", "/api/v1/conversations/{conversation}/files/"): 200,
    ("post", "/api/v1/conversations/{conversation}/files/"): 403,
    ("get", "/api/v1/memories/{memory}/"): 200,
    ("get", "/api/v1/memories/?student={student}"): 200,
    ("get", "/api/v1/conversations/?student={student}"): 200,
    ("get", "/api/v1/students/{student}/"): 200,
    ("get", "/api/v1/usage/?student={student}"): 200,
    ("post", "/api/v1/memories/"): 201,
    ("patch", "/api/v1/memories/{memory}/"): 200,
    ("post", "/api/v1/memories/{memory}/archive/"): 200,
    ("get", "/api/v1/quizzes/{quiz}/"): 200,
    ("get", "/api/v1/quizzes/?student={student}"): 200,
    ("post", "/api/v1/quizzes/{quiz}/answers/"): 403,
    ("get", "/api/v1/students/{student}/skills/"): 200,
    ("get", "/api/v1/classrooms/{classroom}/skills/"): 200,
    ("get", "/api/v1/students/{student}/reviews/"): 200,
    ("get", "/api/v1/classrooms/{classroom}/reviews/"): 200,
    ("post", "/api/v1/students/{student}/ask/"): 200,
    ("get", "/api/v1/students/{student}/asks/"): 200,
    ("post", "/api/v1/classrooms/{classroom}/ask/"): 200,
    ("post", "/api/v1/classrooms/{classroom}/sign-in-codes/"): 201,
    ("get", "/api/v1/classrooms/{classroom}/roster/"): 200,
    # 5A is linked to no LMS course here (tests/lti_services: a linked class's 202)
    ("post", "/api/v1/classrooms/{classroom}/lti-sync/"): 409,
    ("get", "/api/v1/classrooms/{classroom}/lti-sync/"): 200,
    ("get", "/api/v1/classrooms/{classroom}/lti-scores/"): 200,
    ("post", "/api/v1/tasks/"): 201,
    ("post", "/api/v1/tasks/{task}/status/"): 403,
    ("get", "/api/v1/memories/{memory}/chain/"): 200,
    ("post", "/api/v1/memories/{memory}/supersede/"): 200,
    ("get", "/api/v1/memory-reviews/?student={student}"): 200,
    ("post", "/api/v1/memory-reviews/{review}/apply/"): 200,
    ("post", "/api/v1/memory-reviews/{review}/dismiss/"): 200,
    ("get", "/api/v1/conversations/{conversation}/messages/{message}/memories/"): 200,
    ("get", "/api/v1/students/{student}/card/"): 200,
    ("patch", "/api/v1/students/{student}/card/"): 200,
    ("get", "/api/v1/students/{student}/card/changes/"): 200,
    ("post", "/api/v1/card-changes/{change}/accept/"): 200,
    ("post", "/api/v1/card-changes/{change}/reject/"): 200,
    ("get", "/api/v1/students/{student}/export/"): 200,
    ("post", "/api/v1/students/{student}/erase/"): 404,
    # Consent to memory is the school's administrator's (ADMINISTRATOR_ANSWERS), not a teacher's.
    ("get", "/api/v1/students/{student}/consent/"): 403,
    ("put", "/api/v1/students/{student}/consent/"): 403,
    # Her guardians are linked by her school's administrators (ADMINISTRATOR_ANSWERS) and staff.
    ("get", "/api/v1/students/{student}/guardians/"): 403,
    ("post", "/api/v1/students/{student}/guardians/"): 403,
    ("delete", "/api/v1/students/{student}/guardians/{guardian}/"): 403,
    # Who read her records: her school's administrator's (ADMINISTRATOR_ANSWERS), not her teachers'.
    ("get", "/api/v1/students/{student}/access-log/"): 403,
    # Only her guardian files an erasure request; her school's administrators decide it.
    ("post", "/api/v1/students/{student}/erasure-requests/"): 403,
    ("post", "/api/v1/erasure-requests/{erasure_request}/approve/"): 404,
    ("post", "/api/v1/erasure-requests/{erasure_request}/refuse/"): 404,
    ("get", "/api/v1/safety/flags/{flag}/"): 200,
    ("get", "/api/v1/safety/flags/?student={student}"): 200,
    ("post", "/api/v1/safety/flags/{flag}/acknowledge/"): 200,
    ("post", "/api/v1/safety/flags/{flag}/resolve/"): 200,
    # An import is its uploader's (a school administrator) and staff's: not the class's teachers'
    # nor another administrator's.
    ("get", "/api/v1/roster/imports/{roster_import}/"): 404,
    # A class's retention policy is its school's administrators' (ADMINISTRATOR_ANSWERS) and staff's.
    ("get", "/api/v1/classrooms/{classroom}/retention/"): 403,
    ("put", "/api/v1/classrooms/{classroom}/retention/"): 403,
    ("delete", "/api/v1/classrooms/{classroom}/retention/"): 403,
}


# Where the school's administrator gets more than the class's teachers.
ADMINISTRATOR_ANSWERS: dict[tuple[str, str], int] = {
    ("get", "/api/v1/students/{student}/consent/"): 200,
    ("put", "/api/v1/students/{student}/consent/"): 200,
    ("get", "/api/v1/students/{student}/access-log/"): 200,
    ("get", "/api/v1/students/{student}/guardians/"): 200,
    ("post", "/api/v1/students/{student}/guardians/"): 200,  # guardian_alice is linked already
    ("delete", "/api/v1/students/{student}/guardians/{guardian}/"): 204,
    ("post", "/api/v1/erasure-requests/{erasure_request}/approve/"): 200,  # she is erased
    ("post", "/api/v1/erasure-requests/{erasure_request}/refuse/"): 200,
    ("get", "/api/v1/classrooms/{classroom}/retention/"): 200,
    ("put", "/api/v1/classrooms/{classroom}/retention/"): 200,
    ("delete", "/api/v1/classrooms/{classroom}/retention/"): 200,
}


@pytest.mark.parametrize("educator", EDUCATORS)
@pytest.mark.parametrize(("method", "url", "body"), DETAIL_ENDPOINTS)
def test_every_educator_of_the_student_gets_the_teachers_answer(schools, matrix_rows, llm, educator, method, url, body):
    """5A's primary teacher, its second teacher and the administrator of alice's school get the
    same answer from every endpoint that names one of alice's rows: no 404 but erasure's and
    another administrator's roster import; the administrator alone sets her consent to memory
    and her class's retention policy, and reads her access log."""
    rows = matrix_rows[1]["alice"]
    user = EDUCATORS[educator](schools)
    payload = None
    if body is not None:
        payload = {k: (v.format(**rows) if isinstance(v, str) else v) for k, v in body.items()}
    resp = getattr(client_for(user), method)(url.format(**rows), payload, format="json")
    answers = {**EDUCATOR_ANSWERS, **ADMINISTRATOR_ANSWERS} if educator == "admin_a" else EDUCATOR_ANSWERS
    assert resp.status_code == answers[(method, url)], resp.content


def test_every_endpoint_has_the_teachers_answer():
    """EDUCATOR_ANSWERS names each endpoint of DETAIL_ENDPOINTS once."""
    assert sorted(EDUCATOR_ANSWERS) == sorted((method, url) for method, url, _ in DETAIL_ENDPOINTS)


# What alice's guardian gets (docs/privacy.md#guardians): her memories but teacher-only notes,
# her learning record (skills, quizzes), her usage and her export; 404 on everything else, her
# conversations' messages and her safety flags included, as for a stranger.
GUARDIAN_READS: dict[tuple[str, str], int] = {
    ("get", "/api/v1/memories/{memory}/"): 200,
    ("get", "/api/v1/memories/?student={student}"): 200,
    ("get", "/api/v1/usage/?student={student}"): 200,
    ("get", "/api/v1/quizzes/{quiz}/"): 200,
    ("get", "/api/v1/quizzes/?student={student}"): 200,
    ("get", "/api/v1/students/{student}/skills/"): 200,
    ("get", "/api/v1/students/{student}/export/"): 200,
    # She reads her consent to memory; her school (by default) does not let guardians set it.
    ("get", "/api/v1/students/{student}/consent/"): 200,
    ("put", "/api/v1/students/{student}/consent/"): 403,
    # Only a teacher writes a teacher note or sets a task: refused up front, as for a student.
    ("post", "/api/v1/memories/"): 403,
    ("post", "/api/v1/tasks/"): 403,
    # She answers her quiz, not her guardian.
    ("post", "/api/v1/quizzes/{quiz}/answers/"): 403,
    # Her guardian's request is waiting already (tests/privacy/test_erasure_requests.py files
    # one); the school decides it, not the guardian.
    ("post", "/api/v1/students/{student}/erasure-requests/"): 409,
    ("post", "/api/v1/erasure-requests/{erasure_request}/approve/"): 403,
    ("post", "/api/v1/erasure-requests/{erasure_request}/refuse/"): 403,
}
GUARDIAN_ANSWERS: dict[tuple[str, str], int] = {
    **{(method, url): 404 for method, url, _ in DETAIL_ENDPOINTS},
    **GUARDIAN_READS,
}


@pytest.mark.parametrize(("method", "url", "body"), DETAIL_ENDPOINTS)
def test_her_guardian_gets_the_guardians_answer(schools, matrix_rows, method, url, body):
    """alice's guardian reads what GUARDIAN_ANSWERS says of her rows and changes nothing; every
    other endpoint is a 404 (or a 403 up front), as for a stranger."""
    rows = matrix_rows[1]["alice"]
    payload = None
    if body is not None:
        payload = {k: (v.format(**rows) if isinstance(v, str) else v) for k, v in body.items()}
    before = learning_state(), AIMemory.objects.count(), Task.objects.count()
    resp = getattr(client_for(schools["guardian_alice"]), method)(url.format(**rows), payload, format="json")
    assert resp.status_code == GUARDIAN_ANSWERS[(method, url)], resp.content
    assert (learning_state(), AIMemory.objects.count(), Task.objects.count()) == before


# Endpoints that name no one's row: each user gets only their own (tests below and in tests/tutor).
OWN_ENDPOINTS = {
    "/api/v1/roster/imports/",  # an upload makes the uploader's own import
    "/api/v1/webhooks/",  # the requester's schools' webhooks (tests/webhooks/test_api.py)
    "/api/v1/auth/token/",
    "/api/v1/auth/csrf/",
    "/api/v1/auth/login/",
    "/api/v1/auth/logout/",
    "/api/v1/auth/code/",
    "/api/v1/auth/code/login/",
    "/api/v1/auth/providers/",  # public: the providers a sign-in page offers (tests/sso/test_api.py)
    "/api/v1/auth/oidc/token/",  # an app's one-time code for its own token (tests/sso/test_app_sign_in.py)
    "/api/v1/identity-providers/",  # the requester's schools' providers (tests/sso/test_api.py)
    "/api/v1/me/",
    "/api/v1/erasure-requests/",  # a guardian's own, a school administrator's schools'
    "/api/v1/students/",
    "/api/v1/classrooms/",
    "/api/v1/conversations/",
    "/api/v1/memories/",
    "/api/v1/memory-reviews/",
    # provisioning: each lists and creates within the requester's scope
    "/api/v1/users/",
    "/api/v1/schools/",
    "/api/v1/lti/platforms/",  # the requester's schools' LMS platforms (tests/lti/test_api.py)
    "/api/v1/lti/token/",  # a launch's one-time code gives its own person's token
}

# The provisioning API's rows (a person, a class, its enrolments): their matrix, every
# school's administrator, teacher and student against the other's, is
# tests/accounts/test_provisioning_api.py::test_another_school_is_404.
PROVISIONING_ENDPOINTS = {
    "/api/v1/users/{user_id}/",
    "/api/v1/classrooms/{classroom}/",
    "/api/v1/classrooms/{classroom}/enrollments/",
    "/api/v1/classrooms/{classroom}/enrollments/{user_id}/",
}

# A school's webhooks: their matrix (another school's administrator, a teacher, a student) is
# tests/webhooks/test_api.py.
WEBHOOK_ENDPOINTS = {
    "/api/v1/webhooks/{webhook_id}/",
    "/api/v1/webhooks/{webhook_id}/deliveries/",
}


# A school's identity providers: their matrix (another school's administrator, a teacher, a
# student) is tests/sso/test_api.py.
IDENTITY_PROVIDER_ENDPOINTS = {"/api/v1/identity-providers/{provider_id}/"}
# A school's LMS platforms: their matrix (another school's administrator, a teacher, a student)
# is tests/lti/test_api.py::test_the_tenancy_matrix.
LTI_ENDPOINTS = {
    "/api/v1/lti/platforms/{platform_id}/",
}
# A school's retention policy: its matrix (another school's administrator, a teacher, a student)
# is tests/retention/test_api.py::test_the_tenancy_matrix.
RETENTION_ENDPOINTS = {"/api/v1/schools/{school_id}/retention/"}


def test_every_endpoint_is_in_the_matrix():
    """Each API URL is either in DETAIL_ENDPOINTS (with its path parameters) or names no row."""
    from tests import schema

    covered = {url.split("?")[0] for _, url, _ in DETAIL_ENDPOINTS}
    for path in schema.published_schema()["paths"]:
        if "{" in path:
            template = path.replace("{conversation_id}", "{conversation}").replace("{memory_id}", "{memory}")
            template = template.replace("{student_id}", "{student}").replace("{quiz_id}", "{quiz}")
            template = template.replace("{task_id}", "{task}").replace("{classroom_id}", "{classroom}")
            template = template.replace("{review_id}", "{review}").replace("{message_id}", "{message}")
            template = template.replace("{flag_id}", "{flag}").replace("{request_id}", "{erasure_request}")
            template = template.replace("/guardians/{user_id}/", "/guardians/{guardian}/")
            template = template.replace("{change_id}", "{change}").replace("{import_id}", "{roster_import}")
            named = (
                PROVISIONING_ENDPOINTS
                | WEBHOOK_ENDPOINTS
                | IDENTITY_PROVIDER_ENDPOINTS
                | LTI_ENDPOINTS
                | RETENTION_ENDPOINTS
            )
            assert template in covered | named, f"{path} is not in the tenancy matrix"
        else:
            assert path in OWN_ENDPOINTS or path in covered, f"{path} is not in the tenancy matrix"


@pytest.mark.parametrize("intruder", ["alice", "bob", "teacher_b"])
@pytest.mark.parametrize(
    ("method", "url", "body"),
    [
        ("get", "/api/v1/memories/{memory}/", None),
        ("patch", "/api/v1/memories/{memory}/", {"title": "Rewritten by the student"}),
        ("post", "/api/v1/memories/{memory}/archive/", {"reason": "Archived by the student"}),
    ],
)
def test_teacher_only_note_is_404_to_its_student_too(clients, school, intruder, method, url, body):
    """A teacher-only note is a 404 to the student it describes, as to anyone outside the class."""
    note = teacher_note_create(
        teacher=school["teacher_a"],
        student_id=school["alice"].pk,
        title="Loses focus after long paragraphs",
        content="x",
        visibility=AIMemory.Visibility.TEACHER_ONLY,
    )
    resp = getattr(clients[intruder], method)(url.format(memory=note.pk), body, format="json")
    assert resp.status_code == 404, resp.content
    note.refresh_from_db()
    assert (note.title, note.status) == ("Loses focus after long paragraphs", "active")


def test_lists_show_only_own_rows(clients, alice_data):
    """Lists are scoped: bob and teacher_b see none of alice's conversations or memories."""
    for who in ("bob", "carol", "teacher_b"):
        assert clients[who].get("/api/v1/conversations/").json()["count"] == 0
        assert clients[who].get("/api/v1/memories/").json()["count"] == 0
    assert clients["alice"].get("/api/v1/conversations/").json()["count"] == 1
    assert clients["alice"].get("/api/v1/memories/").json()["count"] == 2


def test_teacher_reads_class_students_data(clients, alice_data):
    """A teacher reads the conversations and memories of the students in their class."""
    t = clients["teacher_a"]
    assert t.get(f"/api/v1/conversations/{alice_data['conversation']}/").status_code == 200
    convs = t.get(f"/api/v1/conversations/?student={alice_data['student']}").json()
    assert [c["id"] for c in convs["results"]] == [alice_data["conversation"]]
    mems = t.get(f"/api/v1/memories/?student={alice_data['student']}").json()
    assert [m["id"] for m in mems["results"]] == [alice_data["newer"], alice_data["memory"]]
    students = t.get("/api/v1/students/").json()
    assert {s["username"] for s in students["results"]} == {"alice", "bob"}


def test_teacher_cannot_write_for_a_student(clients, alice_data):
    """A teacher of the class can read but not send messages, end conversations or start them."""
    t = clients["teacher_a"]
    cid = alice_data["conversation"]
    resp = t.post(f"/api/v1/conversations/{cid}/messages/", {"content": "x", "client_message_id": "t1"}, format="json")
    assert resp.status_code == 403
    assert t.post(f"/api/v1/conversations/{cid}/end/").status_code == 403
    assert t.post("/api/v1/conversations/", {}, format="json").status_code == 403
    assert Conversation.objects.get(pk=cid).status == "active"


def test_teacher_adds_note_to_class_student(clients, school):
    """A teacher adds a teacher note to their student's memory; it is listed for the student."""
    resp = clients["teacher_a"].post(
        "/api/v1/memories/",
        {"student": school["bob"].pk, "title": "Strong at geometry, weak at algebra", "content": "Try visual proofs."},
        format="json",
    )
    assert resp.status_code == 201, resp.content
    body = resp.json()
    assert body["kind"] == "teacher_note" and body["source"] == "teacher" and body["author"] == school["teacher_a"].pk
    listed = clients["bob"].get("/api/v1/memories/").json()["results"]
    assert [m["id"] for m in listed] == [body["id"]]


def test_anonymous_requests_are_refused(db):
    """No token, no data: 401 with the error envelope."""
    from rest_framework.test import APIClient

    resp = APIClient().get("/api/v1/conversations/")
    assert resp.status_code == 401
    assert resp.json()["error"]["code"] == "not_authenticated"


def test_token_login(school):
    """POST /auth/token/ with username and password returns a token that authenticates."""
    from rest_framework.test import APIClient

    client = APIClient()
    resp = client.post("/api/v1/auth/token/", {"username": "alice", "password": "pw-alice"}, format="json")
    assert resp.status_code == 200
    client.credentials(HTTP_AUTHORIZATION=f"Token {resp.json()['token']}")
    assert client.get("/api/v1/me/").json()["username"] == "alice"
    bad = APIClient().post("/api/v1/auth/token/", {"username": "alice", "password": "nope"}, format="json")
    assert bad.status_code == 400
    assert "message" in bad.json()["error"]
