"""Tenancy in the Django admin: the admin shows each user what the API shows them.

The admin's half of the tenancy matrix (tests/accounts/test_tenancy.py is the API's). Superusers see
every row. A teacher, a school administrator or a student, given `is_staff` and every permission
on the tutor models, sees only their scope: alice's rows are a 404 on the change, history and
delete URLs of another student, of a teacher of another class, of the other school's
administrator, teacher and student, and of her teacher once her enrolment, her class or their
teaching is inactive; missing from their changelists, their searches, the raw-id lookups and the
autocomplete, and untouched by every action even when alice's id is posted; a form that names a
row outside the scope is refused, and offers none as a choice. The administrator of her school
sees what her teacher sees, and nothing of the other school's.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from django.apps import apps
from django.contrib import admin
from django.contrib.admin import RelatedOnlyFieldListFilter
from django.contrib.admin.utils import get_fields_from_path
from django.contrib.auth.models import Group, Permission
from django.core.management import call_command
from django.test import Client, RequestFactory
from django.utils import timezone
from lti_tool.models import LtiRegistration
from rest_framework.authtoken.models import Token

from accounts.admin_tenancy import NO_TENANT_DATA, TenantScoped
from accounts.models import TUTOR_STAFF_GROUP, Classroom, Enrollment, TeacherEnrollment, User
from audit.models import AccessEntry
from conversations.models import Conversation, Message
from conversations.services import conversation_create
from llm.models import LLMUsage
from lti.models import Platform
from memory.models import AIMemory, StudentCard
from memory.services.notes import teacher_note_create
from privacy.models import ConsentChange, Erasure
from retention.models import RetentionPolicy, RetentionRun
from safety.models import ClassroomSafety, Flag, FlagAction, SafetyContact
from sso.models import IdentityProvider
from tests.conftest import ModuleRows, build_school, build_schools
from webhooks.models import Webhook

STUDENTS = ("alice", "bob", "carol", "dave")
# Everyone who uses the admin in these tests (the `schools` fixture): the superuser, alice's
# teacher, the administrator of her school, alice herself, and the intruders (bob in alice's
# class, carol in another class, teacher_b teaching carol's class; school B's administrator,
# teacher and student).
USERS = ("root", "teacher_a", "admin_a", "alice", "bob", "carol", "teacher_b", "admin_b", "teacher_c", "dave")


def _enrolment_inactive(people: dict[str, Any]) -> None:
    Enrollment.objects.filter(student=people["alice"], classroom=people["class_a"]).update(active=False)


def _class_inactive(people: dict[str, Any]) -> None:
    Classroom.objects.filter(pk=people["class_a"].pk).update(active=False)


def _teaching_inactive(people: dict[str, Any]) -> None:
    TeacherEnrollment.objects.filter(teacher=people["teacher_a"], classroom=people["class_a"]).update(active=False)


# alice's teacher once a level below them is inactive: "<user>/<what changed>".
LEVELS = {"enrolment": _enrolment_inactive, "class": _class_inactive, "teaching": _teaching_inactive}
VIEWERS = (*USERS, *(f"teacher_a/{level}" for level in LEVELS))
# Who sees alice's rows: her teacher, the administrator of her school, and her teacher still sees
# 5A once her enrolment is inactive.
EDUCATORS = {"teacher_a", "admin_a"}


def viewer_client(viewers: dict[str, Client], viewer: str, people: dict[str, Any]) -> Client:
    """The admin client of `viewer`, after the change its name says (`LEVELS`)."""
    user, _, level = viewer.partition("/")
    if level:
        LEVELS[level](people)
    return viewers[user]


def _rows_of(student: User, teacher: User) -> dict[str, Any]:
    """One row of each kind the admin shows for `student` (whose teacher is `teacher`), each with
    a word of its own to search for."""
    name = student.username
    conversation = conversation_create(user=student, subject=f"subject-{name}")
    message = Message.objects.create(
        conversation=conversation, seq=1, role=Message.Role.STUDENT, content=f"message-{name}", client_message_id="m1"
    )
    memory = teacher_note_create(
        teacher=teacher, student_id=student.pk, title=f"memory-{name} shown to the student", content="x"
    )
    note = teacher_note_create(
        teacher=teacher,
        student_id=student.pk,
        title=f"secret-{name} for the teachers only",
        content="x",
        visibility=AIMemory.Visibility.TEACHER_ONLY,
    )
    usage = LLMUsage.objects.create(purpose=LLMUsage.Purpose.CHAT, model=f"model-{name}", student=student)
    flag = Flag.objects.create(
        student=student,
        conversation=conversation,
        message=message,
        source=Flag.Source.MESSAGE,
        category="distress",
        severity="concern",
        excerpt=f"message-{name}",
    )
    FlagAction.objects.create(flag=flag, kind=FlagAction.Kind.CREATED)
    Token.objects.get_or_create(user=student)
    card = StudentCard.objects.create(student=student, interests=[f"card-{name}"])
    consent = ConsentChange.objects.create(
        student=student, memory_consent=True, reason=f"consent-{name}", changed_at=timezone.now()
    )
    return {
        "consent_change": consent,
        "user": student,
        "token": student,  # the token admin names a token by its user's id
        "conversation": conversation,
        "message": message,
        "memory": memory,
        "teacher_note": note,
        "usage": usage,
        "flag": flag,
        "card": card,
    }


@pytest.fixture(scope="module")
def shared(module_rows: ModuleRows) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The two schools' people and every row the admin shows (`_admin_rows`), with the
    superuser root, made once for the module (tests/conftest.py, `module_rows`): each case's
    changes are rolled back after it."""
    with module_rows.build(), pytest.MonkeyPatch.context() as patch:
        people = build_schools(build_school())
        rows = _admin_rows(people)
        patch.setenv("DJANGO_SUPERUSER_PASSWORD", "root-password-1")
        call_command("createsuperuser", "--noinput", username="root", email="root@example.com", verbosity=0)
    return people, rows


@pytest.fixture
def schools(db: None, shared: tuple[dict[str, Any], Any]) -> dict[str, Any]:
    """The module's people (both schools: `school` is the same), for this test: copies, so that
    what a test sets on them stays in that test."""
    return copy.deepcopy(shared[0])


@pytest.fixture
def school(schools: dict[str, Any]) -> dict[str, Any]:
    return schools


@pytest.fixture
def admin_rows(db: None, shared: tuple[Any, dict[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    return copy.deepcopy(shared[1])


def _admin_rows(schools: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each student's rows (alice's are the target; dave's, of school B, the other school's),
    the classrooms, and an erasure record."""
    school = schools
    teacher_of = {"alice": "teacher_a", "bob": "teacher_a", "carol": "teacher_b", "dave": "teacher_c"}
    rows = {name: _rows_of(school[name], school[teacher_of[name]]) for name in STUDENTS}
    rows["alice"]["classroom"] = school["class_a"]
    rows["carol"]["classroom"] = school["class_b"]
    rows["dave"]["classroom"] = school["class_c"]
    rows["alice"]["school"] = school["school"]
    rows["dave"]["school"] = school["school_b"]
    rows["alice"]["erasure"] = Erasure.objects.create(
        erased_at=timezone.now(), via=Erasure.Via.COMMAND, reason="A request from the school"
    )
    rows["alice"]["access_entry"] = AccessEntry.objects.create(
        actor=school["teacher_a"], student=school["alice"], kind=AccessEntry.Kind.MEMORIES, surface="api"
    )
    rows["alice"]["contact"] = SafetyContact.objects.create(
        name="Safeguarding lead of 5A", email="lead@school.test", classroom=school["class_a"]
    )
    rows["alice"]["identity_provider"] = IdentityProvider.objects.create(
        school=school["school"], name="Workspace of A", issuer="https://accounts.google.com", client_id="a"
    )
    rows["dave"]["identity_provider"] = IdentityProvider.objects.create(
        school=school["school_b"], name="Workspace of B", issuer="https://accounts.google.com", client_id="b"
    )
    rows["alice"]["classroom_safety"] = ClassroomSafety.objects.create(
        classroom=school["class_a"], resources={"en": [{"name": "School nurse", "phone": "12"}]}
    )
    rows["alice"]["webhook"] = Webhook.objects.create(
        school=school["school"],
        url="https://hooks-alice.example/events",
        secret="whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        events=["memory.created"],
        active=False,
        disabled_reason="disabled after 10 failed deliveries in a row",
        consecutive_failures=10,
    )
    rows["dave"]["webhook"] = Webhook.objects.create(
        school=school["school_b"], url="https://hooks-dave.example/events", secret="", events=["quiz.graded"]
    )
    for name, its_school, its_class in (
        ("alice", school["school"], school["class_a"]),
        ("dave", school["school_b"], school["class_c"]),
    ):
        rows[name]["retention_policy"] = RetentionPolicy.objects.create(classroom=its_class, transcript_days=30)
        rows[name]["retention_run"] = RetentionRun.objects.create(
            school=its_school, started_at=timezone.now(), finished_at=timezone.now(), counts={"messages": 3}
        )
    for name, its_school in (("alice", school["school"]), ("dave", school["school_b"])):
        registration = LtiRegistration.objects.create(
            name=f"LMS-{name}",
            issuer=f"https://lms-{name}.example",
            client_id="tutor",
            auth_url=f"https://lms-{name}.example/auth",
            token_url=f"https://lms-{name}.example/token",
            keyset_url=f"https://lms-{name}.example/jwks",
        )
        rows[name]["platform"] = Platform.objects.create(registration=registration, school=its_school)
    return rows


def _grant_every_tutor_permission(user: User) -> None:
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    user.user_permissions.add(
        *Permission.objects.filter(
            content_type__app_label__in=(
                "accounts",
                "audit",
                "authtoken",
                "conversations",
                "memory",
                "llm",
                "privacy",
                "safety",
                "webhooks",
                "sso",
                "lti",
                "retention",
            )
        )
    )


class AdminClients(dict[str, Client]):
    """An admin client per user, made when a test first asks for it (a test uses one or two of
    the ten): every user but root is made staff with every permission on the tutor models, so
    that what they miss is the scope's doing, not a permission's."""

    def __init__(self, people: dict[str, Any]) -> None:
        super().__init__()
        self.people = people

    def __missing__(self, name: str) -> Client:
        if name not in USERS:
            raise KeyError(name)
        if name == "root":
            user = User.objects.get(username="root")
        else:
            user = User.objects.get(pk=self.people[name].pk)
            _grant_every_tutor_permission(user)
        client = Client()
        client.force_login(user)
        self[name] = client
        return client


@pytest.fixture
def viewers(schools: dict[str, Any], admin_rows: dict[str, Any]) -> dict[str, Client]:
    """An admin client for each user (AdminClients), and the superuser root."""
    return AdminClients(schools)


# Every admin with tenant data: (URL prefix, key of alice's row, a search that finds it, the
# viewers besides root who may see alice's row, as through the API).
ADMIN_MATRIX = [
    ("accounts/user", "user", "alice", {*EDUCATORS, "alice"}),
    # A class is its teachers' and its school administrator's, whoever is enrolled.
    ("accounts/classroom", "classroom", None, {*EDUCATORS, "teacher_a/enrolment"}),
    # A school is its administrators' (and staff's): a teacher sees none.
    ("accounts/school", "school", "Test school", {"admin_a"}),
    ("authtoken/tokenproxy", "token", "alice", set()),
    ("conversations/conversation", "conversation", "subject-alice", {*EDUCATORS, "alice"}),
    ("conversations/message", "message", None, {*EDUCATORS, "alice"}),
    ("memory/aimemory", "memory", "memory-alice", {*EDUCATORS, "alice"}),
    # The API's rule for teacher-only notes: the class's teachers (and the school's
    # administrator) only, not the student.
    ("memory/aimemory", "teacher_note", "secret-alice", EDUCATORS),
    ("llm/llmusage", "usage", "model-alice", {*EDUCATORS, "alice"}),
    # The student card: the student's and their teachers', as through the API.
    ("memory/studentcard", "card", "alice", {*EDUCATORS, "alice"}),
    # Consent to memory is the school's administrators' (and staff's), as through the API.
    ("privacy/consentchange", "consent_change", "consent-alice", {"admin_a"}),
    # Erasures name no student and are staff's alone.
    ("privacy/erasure", "erasure", "{reference}", set()),
    # The access log is staff's alone in the admin (a school's administrators read it through the API).
    ("audit/accessentry", "access_entry", "alice", set()),
    # A flag is its student's teachers' (never the student's: students never see flags); the
    # school's safety contacts and class resources are staff's alone.
    ("safety/flag", "flag", "alice", EDUCATORS),
    ("safety/safetycontact", "contact", "Safeguarding", set()),
    ("safety/classroomsafety", "classroom_safety", None, set()),
    # A school's webhook is its administrators' (and staff's), as through the API.
    ("webhooks/webhook", "webhook", "hooks-alice", {"admin_a"}),
    # A school's identity providers are its administrators' (and staff's), as through the API.
    ("sso/identityprovider", "identity_provider", "Workspace", {"admin_a"}),
    # An LMS platform is its school's administrators' (and staff's), as through the API.
    ("lti/platform", "platform", "LMS-alice", {"admin_a"}),
    # A school's retention policies (its own, its classes') and runs are its administrators' (and staff's).
    ("retention/retentionpolicy", "retention_policy", None, {"admin_a"}),
    ("retention/retentionrun", "retention_run", None, {"admin_a"}),
]
MATRIX_IDS = [f"{prefix}:{key}" for prefix, key, _q, _seen in ADMIN_MATRIX]

# Every action of each admin (as a superuser has them), and the row of alice's to post it with.
ACTION_MATRIX = [
    ("accounts/user", "delete_selected", "user"),
    ("accounts/classroom", "delete_selected", "classroom"),
    ("accounts/school", "delete_selected", "school"),
    ("memory/aimemory", "archive_selected", "memory"),
    ("memory/aimemory", "archive_selected", "teacher_note"),
    ("safety/safetycontact", "delete_selected", "contact"),
    ("safety/classroomsafety", "delete_selected", "classroom_safety"),
    ("webhooks/webhook", "turn_on", "webhook"),
    ("webhooks/webhook", "delete_selected", "webhook"),
    ("sso/identityprovider", "delete_selected", "identity_provider"),
    ("lti/platform", "delete_selected", "platform"),
    ("retention/retentionpolicy", "delete_selected", "retention_policy"),
]


def _pk(row: Any) -> int:
    return int(row.pk)


def _change_url(prefix: str, row: Any) -> str:
    return f"/admin/{prefix}/{_pk(row)}/change/"


def state() -> tuple[Any, ...]:
    """What no intruder may change: every tenant row, memories' status, users and classrooms."""
    return (
        list(User.objects.order_by("pk").values_list("pk", "username", "role", "is_active", "is_superuser")),
        list(Classroom.objects.order_by("pk").values_list("pk", "name", "school_id", "active")),
        list(Enrollment.objects.order_by("pk").values_list("pk", "classroom_id", "student_id", "active")),
        list(Token.objects.order_by("pk").values_list("pk", "user_id")),
        list(Conversation.objects.order_by("pk").values_list("pk", "subject", "status")),
        list(Message.objects.order_by("pk").values_list("pk", "content")),
        list(AIMemory.objects.order_by("pk").values_list("pk", "title", "status", "archived_reason")),
        list(LLMUsage.objects.order_by("pk").values_list("pk", "student_id", "model")),
        list(StudentCard.objects.order_by("pk").values_list("pk", "student_id", "interests")),
        list(Erasure.objects.order_by("pk").values_list("pk", "reference")),
        list(Flag.objects.order_by("pk").values_list("pk", "status", "excerpt", "student_id")),
        list(FlagAction.objects.order_by("pk").values_list("pk", "kind", "note")),
        list(SafetyContact.objects.order_by("pk").values_list("pk", "name", "email", "classroom_id")),
        list(ClassroomSafety.objects.order_by("pk").values_list("pk", "classroom_id", "resources")),
        list(Webhook.objects.order_by("pk").values_list("pk", "url", "active", "consecutive_failures", "description")),
        list(IdentityProvider.objects.order_by("pk").values_list("pk", "school_id", "name", "client_secret")),
        list(Platform.objects.order_by("pk").values_list("pk", "school_id", "registration_id")),
        list(RetentionPolicy.objects.order_by("pk").values_list("pk", "classroom_id", "transcript_days")),
        list(RetentionRun.objects.order_by("pk").values_list("pk", "school_id", "counts")),
    )


@pytest.mark.parametrize("viewer", VIEWERS)
@pytest.mark.parametrize(("prefix", "key", "search", "seen_by"), ADMIN_MATRIX, ids=MATRIX_IDS)
def test_admin_shows_each_viewer_only_their_scope(viewers, admin_rows, schools, viewer, prefix, key, search, seen_by):
    """Alice's row is in the changelist, the raw-id lookup and the search results, and its change
    and history pages open, for root and for whoever sees it through the API. For anyone else it
    is in none of them, and its change, history and delete URLs (GET and POST) are 404, as for a
    row that does not exist; nothing changes."""
    client = viewer_client(viewers, viewer, schools)
    row = admin_rows["alice"][key]
    link = _change_url(prefix, row).encode()
    visible = viewer == "root" or viewer in seen_by
    pk_name = apps.get_model(*prefix.split("/"))._meta.pk.name
    pages = [f"/admin/{prefix}/", f"/admin/{prefix}/?_popup=1&_to_field={pk_name}"]
    if search is not None:
        term = search.format(reference=getattr(row, "reference", ""))
        pages.append(f"/admin/{prefix}/?q={term}")
    for page in pages:
        resp = client.get(page)
        assert resp.status_code == 200, page
        assert (link in resp.content) is visible, page
    before = state()
    if visible:
        assert client.get(_change_url(prefix, row)).status_code == 200
        assert client.get(f"/admin/{prefix}/{_pk(row)}/history/").status_code == 200
        return
    for method, url, body in [
        ("get", _change_url(prefix, row), None),
        ("post", _change_url(prefix, row), {"title": "forged", "name": "forged", "username": "forged"}),
        ("get", f"/admin/{prefix}/{_pk(row)}/history/", None),
        ("get", f"/admin/{prefix}/{_pk(row)}/delete/", None),
        ("post", f"/admin/{prefix}/{_pk(row)}/delete/", {"post": "yes"}),
        ("get", f"/admin/{prefix}/{_pk(row)}/password/", None),
    ]:
        if url.endswith("/password/") and prefix != "accounts/user":
            continue
        resp = getattr(client, method)(url, body)
        assert resp.status_code == 404, (method, url, resp.status_code)
        # The same answer as for a row that does not exist.
        missing = getattr(client, method)(url.replace(f"/{_pk(row)}/", "/999999/"), body)
        assert missing.status_code == 404, (method, url)
    assert state() == before


# The rows of ADMIN_MATRIX that belong to a student's school (not the service's erasures,
# access log, contacts and class resources, staff's alone).
SCHOOL_ROWS = [row for row in ADMIN_MATRIX if row[1] not in ("erasure", "access_entry", "contact", "classroom_safety")]


@pytest.mark.parametrize("viewer", ["admin_a", "teacher_a", "alice"])
@pytest.mark.parametrize(
    ("prefix", "key", "search", "seen_by"), SCHOOL_ROWS, ids=[f"{p}:{k}" for p, k, *_ in SCHOOL_ROWS]
)
def test_school_a_sees_nothing_of_school_b(viewers, admin_rows, viewer, prefix, key, search, seen_by):
    """dave's rows (school B), which B's administrator sees as admin_a sees alice's, are missing
    from the changelists of school A's administrator, teacher and student, and a 404 on their
    change URL."""
    row = admin_rows["dave"][key]
    link = _change_url(prefix, row).encode()
    assert (link in viewers["admin_b"].get(f"/admin/{prefix}/").content) is ("admin_a" in seen_by)
    assert link not in viewers[viewer].get(f"/admin/{prefix}/").content
    assert viewers[viewer].get(_change_url(prefix, row)).status_code == 404


def alice_state(school: dict[str, Any]) -> tuple[Any, ...]:
    """Alice's rows, her class and its enrollments, as `state` sees them."""
    alice = school["alice"].pk
    return (
        list(User.objects.filter(pk=alice).values_list("pk", "username", "is_active")),
        list(Classroom.objects.filter(pk=school["class_a"].pk).values_list("pk", "name", "school_id", "active")),
        list(Enrollment.objects.filter(classroom=school["class_a"]).order_by("pk").values_list("pk", "student_id")),
        list(Token.objects.filter(user_id=alice).values_list("pk")),
        list(Conversation.objects.filter(student_id=alice).values_list("pk", "subject", "status")),
        list(Message.objects.filter(conversation__student_id=alice).values_list("pk", "content")),
        list(AIMemory.objects.filter(student_id=alice).order_by("pk").values_list("pk", "title", "status")),
        list(LLMUsage.objects.filter(student_id=alice).values_list("pk", "model")),
        list(Flag.objects.filter(student_id=alice).values_list("pk", "status")),
        list(SafetyContact.objects.filter(classroom=school["class_a"]).values_list("pk", "name")),
        list(ClassroomSafety.objects.filter(classroom=school["class_a"]).values_list("pk", "resources")),
    )


@pytest.mark.parametrize("viewer", ["bob", "carol", "teacher_b", "admin_b", "teacher_c", "teacher_a/teaching"])
@pytest.mark.parametrize("select_across", [False, True], ids=["selected", "across"])
@pytest.mark.parametrize(("prefix", "action", "key"), ACTION_MATRIX)
def test_actions_never_act_outside_the_scope(viewers, admin_rows, schools, viewer, select_across, prefix, action, key):
    """An action posted with the id of alice's row, alone or across the whole changelist, leaves
    alice's rows as they were: the rows an action gets are taken from the scoped changelist. With
    the id alone, nothing at all changes."""
    school = schools
    client = viewer_client(viewers, viewer, schools)
    row = admin_rows["alice"][key]
    before, before_alice = state(), alice_state(school)
    body: dict[str, Any] = {"action": action, "_selected_action": [_pk(row)], "reason": "Done by an intruder"}
    body["post"] = "yes"  # delete_selected's confirmation
    if select_across:
        body["select_across"] = "1"
    resp = client.post(f"/admin/{prefix}/", body)
    # 403: deleting the viewer's own rows "across" would delete rows they may not delete (a
    # class's retention policy, read-only to them): Django refuses the whole deletion.
    assert resp.status_code in (200, 302) or (select_across and resp.status_code == 403)
    assert alice_state(school) == before_alice
    if not select_across or resp.status_code == 403:
        assert state() == before


def test_action_across_the_changelist_acts_on_the_scope_only(viewers, admin_rows):
    """teacher_b archiving every memory of the changelist archives carol's, and no one else's."""
    resp = viewers["teacher_b"].post(
        "/admin/memory/aimemory/",
        {
            "action": "archive_selected",
            "_selected_action": [admin_rows["alice"]["memory"].pk],
            "select_across": "1",
            "reason": "Cleaning up",
        },
    )
    assert resp.status_code == 302
    archived = set(AIMemory.objects.filter(status=AIMemory.Status.ARCHIVED).values_list("student__username", flat=True))
    assert archived == {"carol"}


@pytest.mark.parametrize("viewer", VIEWERS)
@pytest.mark.parametrize(
    ("source", "target_key"),
    [
        ("memory/aimemory/student", "user"),
        ("memory/aimemory/source_conversation", "conversation"),
        ("memory/aimemory/superseded_by", "memory"),
        ("memory/aimemory/superseded_by", "teacher_note"),
        ("llm/llmusage/student", "user"),
    ],
)
def test_autocomplete_offers_only_the_scope(viewers, admin_rows, schools, viewer, source, target_key):
    """The autocomplete endpoint answers from the related model's scoped changelist: alice's row
    for those who see it, never for anyone else."""
    app_label, model_name, field_name = source.split("/")
    resp = viewer_client(viewers, viewer, schools).get(
        "/admin/autocomplete/",
        {"app_label": app_label, "model_name": model_name, "field_name": field_name, "term": ""},
    )
    assert resp.status_code == 200, resp.content
    ids = {int(r["id"]) for r in resp.json()["results"]}
    seen_by = {key: seen for _prefix, key, _q, seen in ADMIN_MATRIX}[target_key]
    assert (admin_rows["alice"][target_key].pk in ids) is (viewer == "root" or viewer in seen_by)


def _form_choices(user: User) -> dict[str, set[int]]:
    """For every foreign key and many-to-many field of every admin's model, the ids its form
    field offers `user`."""
    request = RequestFactory().get("/admin/")
    request.user = user
    offered: dict[str, set[int]] = {}
    for model, model_admin in admin.site._registry.items():
        inlines = [inline(model, admin.site) for inline in model_admin.inlines]
        for each in [model_admin, *inlines]:
            for field in each.model._meta.get_fields():
                if not (field.is_relation and field.concrete and field.editable) or field.auto_created:
                    continue
                formfield = each.formfield_for_dbfield(field, request)
                queryset = getattr(formfield, "queryset", None)
                if queryset is not None:
                    offered[f"{each.model._meta.label}.{field.name}"] = set(queryset.values_list("pk", flat=True))
    return offered


def test_form_choices_offer_only_the_scope(viewers, admin_rows, school):
    """No form field of any admin (foreign key or many-to-many, inlines included) offers teacher_b
    a row of alice's, nor alice's classmates or teacher; root's forms offer them."""
    viewers["teacher_b"]  # made staff with every permission
    root_offered = _form_choices(User.objects.get(username="root"))
    assert school["alice"].pk in root_offered["memory.AIMemory.student"]
    assert admin_rows["alice"]["conversation"].pk in root_offered["memory.AIMemory.source_conversation"]
    offered = _form_choices(User.objects.get(username="teacher_b"))
    assert offered.keys() == root_offered.keys()
    assert offered["memory.AIMemory.student"] == {school["carol"].pk}
    for label, ids in offered.items():
        assert not (ids & _alice_ids_of(label, admin_rows, school)), label


def _alice_ids_of(label: str, admin_rows: dict[str, Any], school: dict[str, Any]) -> set[int]:
    model_label, field_name = label.rsplit(".", 1)
    target = apps.get_model(model_label)._meta.get_field(field_name).related_model
    ids = {_pk(r) for k, r in admin_rows["alice"].items() if k != "token" and isinstance(r, target)}
    if target is User:
        ids |= {school["alice"].pk, school["bob"].pk, school["teacher_a"].pk}
    return ids


def test_classroom_form_refuses_a_teacher_or_student_outside_the_scope(viewers, admin_rows, school):
    """teacher_b cannot make a class (classes come from the roster, the provisioning API or
    staff), nor enrol alice in theirs, and the form does not name her back; renaming their own
    class is accepted."""
    client = viewers["teacher_b"]
    before = state()
    resp = client.post("/admin/accounts/classroom/add/", {"name": "Forged class", **_inline_management(0)})
    assert resp.status_code == 403
    carol_enrollment = Enrollment.objects.get(student=school["carol"])
    forged = {
        "name": "5B",
        **_inline_management(1, teachers=1),
        "teacher_enrollments-0-id": school["class_b"].teacher_enrollments.get().pk,
        "teacher_enrollments-0-classroom": school["class_b"].pk,
        "enrollments-0-id": carol_enrollment.pk,
        "enrollments-0-classroom": school["class_b"].pk,
        "enrollments-0-student": school["carol"].pk,
        "enrollments-0-active": "on",
    }
    resp = client.post(
        _change_url("accounts/classroom", school["class_b"]),
        {**forged, "enrollments-1-classroom": school["class_b"].pk, "enrollments-1-student": school["alice"].pk},
    )
    assert resp.status_code == 200
    assert b"alice" not in resp.content
    assert state() == before
    renamed = {**forged, "name": "5B bis", **_inline_management(1, teachers=1, extra=0)}
    resp = client.post(_change_url("accounts/classroom", school["class_b"]), renamed)
    assert resp.status_code == 302
    assert Classroom.objects.get(pk=school["class_b"].pk).name == "5B bis"
    assert school["class_b"].teachers.get() == school["teacher_b"]


def _inline_management(initial: int, teachers: int = 0, extra: int = 1) -> dict[str, Any]:
    return {
        "enrollments-TOTAL_FORMS": initial + extra,
        "enrollments-INITIAL_FORMS": initial,
        "enrollments-MIN_NUM_FORMS": 0,
        "enrollments-MAX_NUM_FORMS": 1000,
        "teacher_enrollments-TOTAL_FORMS": teachers,
        "teacher_enrollments-INITIAL_FORMS": teachers,
        "teacher_enrollments-MIN_NUM_FORMS": 0,
        "teacher_enrollments-MAX_NUM_FORMS": 1000,
    }


def test_tutor_staff_teacher_of_another_class_sees_none_of_alice(school, admin_rows):
    """The reported case: a teacher of another class with the staff flag and the Tutor staff group
    (seed_demo's teacher) cannot open alice's teacher-only note, find alice's conversation with
    ?q=, or archive alice's memory; alice's own teacher, the same way, can."""
    for name in ("teacher_a", "teacher_b"):
        school[name].is_staff = True
        school[name].save(update_fields=["is_staff"])
        school[name].groups.add(Group.objects.get(name=TUTOR_STAFF_GROUP))
    alice = admin_rows["alice"]
    for name, allowed in (("teacher_b", False), ("teacher_a", True)):
        client = Client()
        client.force_login(school[name])
        note = client.get(_change_url("memory/aimemory", alice["teacher_note"]))
        assert note.status_code == (200 if allowed else 404)
        found = client.get("/admin/conversations/conversation/?q=alice")
        assert (_change_url("conversations/conversation", alice["conversation"]).encode() in found.content) is allowed
        client.post(
            "/admin/memory/aimemory/",
            {"action": "archive_selected", "_selected_action": [alice["memory"].pk], "reason": f"By {name}"},
        )
        archived = AIMemory.objects.get(pk=alice["memory"].pk).status == AIMemory.Status.ARCHIVED
        assert archived is allowed


def test_every_admin_is_scoped_and_in_the_matrix():
    """Every registered admin (and each of its inlines) uses the scoping mixin, but those of
    models without tenant data; every admin with tenant data is in ADMIN_MATRIX, with every one
    of its actions in ACTION_MATRIX, and filters by a relation to tenant data only through the
    rows it shows (RelatedOnlyFieldListFilter)."""
    covered = {prefix for prefix, *_ in ADMIN_MATRIX}
    request = RequestFactory().get("/admin/")
    request.user = User(is_superuser=True, is_staff=True, is_active=True, role=User.Role.STAFF)
    for model, model_admin in admin.site._registry.items():
        prefix = f"{model._meta.app_label}/{model._meta.model_name}"
        if issubclass(model, NO_TENANT_DATA):
            continue
        assert isinstance(model_admin, TenantScoped), prefix
        for inline in model_admin.inlines:
            assert issubclass(inline, TenantScoped), (prefix, inline)
        assert prefix in covered, f"{prefix} is not in the admin's tenancy matrix"
        for list_filter in model_admin.get_list_filter(request):
            # A relation's filter lists the related rows unscoped, unless it is "related only".
            name, kind = list_filter if isinstance(list_filter, tuple) else (list_filter, None)
            if isinstance(name, str):
                field = get_fields_from_path(model, name)[-1]
                if field.is_relation and not issubclass(field.related_model, NO_TENANT_DATA):
                    assert kind is RelatedOnlyFieldListFilter, (prefix, name)
        actions = set(model_admin.get_actions(request))
        assert actions == {action for p, action, _key in ACTION_MATRIX if p == prefix}, prefix


def test_a_staff_student_never_sees_their_own_teacher_only_note(viewers, admin_rows):
    """As through the API, a teacher-only note is hidden from the student it describes, while
    their other memories are listed."""
    resp = viewers["alice"].get("/admin/memory/aimemory/")
    assert _change_url("memory/aimemory", admin_rows["alice"]["memory"]).encode() in resp.content
    assert _change_url("memory/aimemory", admin_rows["alice"]["teacher_note"]).encode() not in resp.content


@pytest.mark.parametrize(
    "query",
    [
        "_to_field=content",  # a field no relation points at
        "conversation__student__password__startswith=p",  # a lookup outside list_filter
    ],
)
def test_a_disallowed_admin_parameter_is_a_400(viewers, query):
    """The admin's refusal of a lookup or a `_to_field` it does not allow is a 400, not a 500."""
    resp = viewers["root"].get(f"/admin/conversations/message/?{query}")
    assert resp.status_code == 400


def test_a_scoped_teacher_cannot_raise_anyone_privileges(viewers, school):
    """A teacher allowed to change users changes their student's name, but not the role, the staff
    and superuser flags, the groups or the permissions; nor adds an account."""
    alice = school["alice"]
    viewers["alice"]  # made staff, as every viewer: the teacher's post leaves that as it is
    resp = viewers["teacher_a"].post(
        f"/admin/accounts/user/{alice.pk}/change/",
        {
            "username": "alice",
            "first_name": "Alicia",
            "last_name": "",
            "email": "",
            "is_active": "on",
            "is_staff": "on",
            "is_superuser": "on",
            "role": User.Role.STAFF,
            "groups": [Group.objects.get(name=TUTOR_STAFF_GROUP).pk],
            "user_permissions": list(Permission.objects.values_list("pk", flat=True)[:3]),
            "language": "en",
            "date_joined_0": "2026-01-01",
            "date_joined_1": "00:00:00",
        },
    )
    assert resp.status_code == 302, resp.content
    alice.refresh_from_db()
    assert alice.first_name == "Alicia"
    assert (alice.role, alice.is_staff, alice.is_superuser) == (User.Role.STUDENT, True, False)
    assert not alice.groups.exists()
    assert viewers["teacher_a"].get("/admin/accounts/user/add/").status_code == 403
    assert viewers["root"].get("/admin/accounts/user/add/").status_code == 200


def test_a_flag_and_its_log_are_read_only_in_the_admin(viewers, admin_rows):
    """Flags are acted on through the API, which keeps their log: in the admin, root (and
    alice's teacher) read a flag and its log, and can change, delete or add neither; the log
    has no page of its own."""
    flag = admin_rows["alice"]["flag"]
    for viewer in ("root", "teacher_a"):
        client = viewers[viewer]
        page = client.get(_change_url("safety/flag", flag))
        assert page.status_code == 200
        assert b"created" in page.content and b"message-alice" in page.content
        before = state()
        assert client.post(_change_url("safety/flag", flag), {"status": "resolved"}).status_code == 403
        assert client.post(f"/admin/safety/flag/{flag.pk}/delete/", {"post": "yes"}).status_code == 403
        assert client.get("/admin/safety/flag/add/").status_code == 403
        assert client.get("/admin/safety/flagaction/").status_code == 404
        assert state() == before
