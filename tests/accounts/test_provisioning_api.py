"""The provisioning API (docs/api.md#provisioning): people, schools, classes and enrolments made
by an ed-tech team's own app, idempotent by external_id; who may do what; a second school's
people and classes are a 404 to the first's, and the reverse; deactivation keeps the data."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from accounts.models import Classroom, Enrollment, School, User
from accounts.services import classroom_create
from memory.models import AIMemory
from memory.services.notes import teacher_note_create
from tests.conftest import client_for, make_user


@pytest.fixture
def world(school: dict[str, Any]) -> dict[str, Any]:
    """The `school` fixture plus its administrator (admin_a), a staff superuser, and a second
    school with its own administrator (admin_b), teacher (teacher_c), class 6A and student dave."""
    main = school["school"]
    other = School.objects.create(name="Other school", external_id="school-2")
    admin_a = make_user("admin_a", User.Role.ADMINISTRATOR, school=main)
    admin_b = make_user("admin_b", User.Role.ADMINISTRATOR, school=other)
    teacher_c = make_user("teacher_c", User.Role.TEACHER, school=other)
    dave = make_user("dave", school=other, external_id="sis-dave")
    class_c = classroom_create(name="6A", school=other, teachers=[teacher_c])
    Enrollment.objects.create(classroom=class_c, student=dave)
    staff = User.objects.create_superuser("root", "root@example.com", "root-pw")
    people = {"admin_a": admin_a, "admin_b": admin_b, "teacher_c": teacher_c, "dave": dave, "staff": staff}
    return {**school, **people, "other": other, "class_c": class_c}


@pytest.fixture
def api(world: dict[str, Any]) -> dict[str, APIClient]:
    return {name: client_for(user) for name, user in world.items() if isinstance(user, User)}


def student_body(school: School, **extra: Any) -> dict[str, Any]:
    return {"role": "student", "given_name": "Eve", "family_name": "Martin", "school": school.pk, **extra}


def test_a_post_creates_a_person_and_the_same_post_updates_them(api, world):
    """POST /users/ creates a person (201) with a username from their names and no usable
    password; the same external_id again updates them to the posted fields (200), no second row."""
    body = student_body(world["school"], external_id="sis-eve", email="eve@example.com", language="fr")
    created = api["admin_a"].post("/api/v1/users/", body, format="json")
    assert created.status_code == 201, created.content
    person = created.json()
    assert person | {"id": 0} == {
        "id": 0,
        "username": "eve.martin",
        "given_name": "Eve",
        "family_name": "Martin",
        "email": "eve@example.com",
        "role": "student",
        "language": "fr",
        "school": world["school"].pk,
        "external_id": "sis-eve",
        "active": True,
        "memory_consent": True,
    }
    assert not User.objects.get(pk=person["id"]).has_usable_password()

    again = api["admin_a"].post("/api/v1/users/", body | {"family_name": "Martin-Roy"}, format="json")
    assert again.status_code == 200, again.content
    assert again.json() == person | {"family_name": "Martin-Roy"}
    assert User.objects.filter(external_id="sis-eve").count() == 1
    same = api["admin_a"].post("/api/v1/users/", body | {"family_name": "Martin-Roy"}, format="json")
    assert same.status_code == 200 and same.json() == again.json()


def test_generated_usernames_are_unique_and_ascii(api, world):
    """Namesakes get eve.martin, eve.martin2, eve.martin3 (a username taken in another case
    counts); accents are dropped."""
    make_user("Eve.Martin2")
    names = [
        api["admin_a"].post("/api/v1/users/", student_body(world["school"]), format="json").json()["username"]
        for _ in range(2)
    ]
    assert names == ["eve.martin", "eve.martin3"]
    accented = student_body(world["school"], given_name="Élodie", family_name="Dupré")
    assert api["admin_a"].post("/api/v1/users/", accented, format="json").json()["username"] == "elodie.dupre"


def test_a_username_or_external_id_taken_by_someone_else_is_409(api, world):
    """A username of another person, or an external_id of a person outside the requester's
    school, is a 409 in the envelope; nothing is written."""
    before = User.objects.count()
    taken = api["admin_a"].post("/api/v1/users/", student_body(world["school"], username="alice"), format="json")
    assert taken.status_code == 409, taken.content
    assert taken.json()["error"]["code"] == "conflict"
    assert "username" in taken.json()["error"]["details"]
    theirs = api["admin_a"].post("/api/v1/users/", student_body(world["school"], external_id="sis-dave"), format="json")
    assert theirs.status_code == 409, theirs.content
    assert "external_id" in theirs.json()["error"]["details"]
    assert User.objects.count() == before
    assert User.objects.get(external_id="sis-dave").first_name == ""


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"school": 999_999}, "school"),
        ({"school": "other"}, "school"),  # replaced by the second school's id: outside the scope
        ({"school": "abc"}, "school"),
        ({"school": 2**70}, "school"),
        ({"role": "staff"}, "role"),
        ({"role": ["student"]}, "role"),
        ({"given_name": 123}, "given_name"),
        ({"given_name": "x" * 151}, "given_name"),
        ({"given_name": "   "}, "given_name"),
        ({"family_name": None}, "family_name"),
        ({"email": "not an address"}, "email"),
        ({"username": "no spaces allowed"}, "username"),
        ({"external_id": "x" * 256}, "external_id"),
        ({"language": "de"}, "language"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(api, world, change, field):
    """Unknown or foreign schools, wrong roles, wrong types and oversized text are a 400 with the
    field's error, never a 500; nothing is written."""
    if change.get("school") == "other":
        change = {"school": world["other"].pk}
    before = User.objects.count()
    resp = api["admin_a"].post("/api/v1/users/", student_body(world["school"]) | change, format="json")
    assert resp.status_code == 400, resp.content
    assert field in resp.json()["error"]["details"]
    assert User.objects.count() == before


def test_a_teacher_provisions_students_of_their_school_only(api, world):
    """A teacher creates and renames students of their school, and sees them until they are in
    another teacher's class; creating a teacher or an administrator, changing a role or a school
    or deactivating someone is a 403; another class's student is a 404."""
    teacher = api["teacher_a"]
    created = teacher.post("/api/v1/users/", student_body(world["school"]), format="json")
    assert created.status_code == 201, created.content
    for role in ("teacher", "administrator"):
        refused = teacher.post("/api/v1/users/", student_body(world["school"], role=role), format="json")
        assert refused.status_code == 403, refused.content
    assert teacher.post("/api/v1/users/", student_body(world["other"]), format="json").status_code == 400
    listed = {p["username"] for p in teacher.get("/api/v1/users/").json()["results"]}
    assert listed == {"alice", "bob", "eve.martin"}

    alice = f"/api/v1/users/{world['alice'].pk}/"
    renamed = teacher.patch(alice, {"given_name": "Alicia"}, format="json")
    assert renamed.status_code == 200 and renamed.json()["given_name"] == "Alicia"
    assert teacher.patch(alice, {"school": world["other"].pk}, format="json").status_code == 400
    assert teacher.patch(alice, {"active": False}, format="json").status_code == 403
    assert teacher.patch(alice, {"role": "teacher"}, format="json").status_code == 403
    assert User.objects.get(pk=world["alice"].pk).is_active
    for person in ("carol", "teacher_b", "admin_a"):
        assert teacher.get(f"/api/v1/users/{world[person].pk}/").status_code == 404
        assert (
            teacher.patch(f"/api/v1/users/{world[person].pk}/", {"given_name": "X"}, format="json").status_code == 404
        )


def test_a_student_may_not_provision(api, world):
    """A student's provisioning call is a 403 in the envelope; a detail URL is a 404."""
    alice = api["alice"]
    class_a = world["class_a"].pk
    for method, url, body in (
        ("get", "/api/v1/users/", None),
        ("post", "/api/v1/users/", student_body(world["school"])),
        ("get", "/api/v1/schools/", None),
        ("post", "/api/v1/classrooms/", {"name": "7C", "school": world["school"].pk}),
    ):
        resp = getattr(alice, method)(url, body, format="json")
        assert resp.status_code == 403, (url, resp.content)
        assert resp.json()["error"]["code"] == "forbidden"
    for method, url in (
        ("get", f"/api/v1/users/{world['alice'].pk}/"),
        ("patch", f"/api/v1/users/{world['bob'].pk}/"),
        ("get", f"/api/v1/classrooms/{class_a}/"),
        ("get", f"/api/v1/classrooms/{class_a}/enrollments/"),
        ("post", f"/api/v1/classrooms/{class_a}/enrollments/"),
        ("delete", f"/api/v1/classrooms/{class_a}/enrollments/{world['bob'].pk}/"),
    ):
        assert getattr(alice, method)(url, {}, format="json").status_code == 404, url
    assert Enrollment.objects.filter(active=True).count() == 4


@pytest.mark.parametrize(
    ("intruder", "victim", "classroom"),
    [
        ("admin_b", "alice", "class_a"),
        ("teacher_c", "alice", "class_a"),
        ("admin_b", "teacher_a", "class_a"),
        ("admin_a", "dave", "class_c"),
        ("admin_a", "teacher_c", "class_c"),
        ("teacher_a", "dave", "class_c"),
    ],
)
def test_another_school_is_404(api, world, intruder, victim, classroom):
    """An administrator or a teacher of one school gets 404 on every person and class of the
    other, and changes nothing."""
    client = api[intruder]
    person, class_id = world[victim].pk, world[classroom].pk
    before = list(User.objects.values_list("pk", "first_name", "is_active", "school_id").order_by("pk"))
    enrolments = list(Enrollment.objects.values_list("pk", "active").order_by("pk"))
    for method, url, body in (
        ("get", f"/api/v1/users/{person}/", None),
        ("patch", f"/api/v1/users/{person}/", {"given_name": "Hacked"}),
        ("patch", f"/api/v1/users/{person}/", {"active": False}),
        ("get", f"/api/v1/classrooms/{class_id}/", None),
        ("patch", f"/api/v1/classrooms/{class_id}/", {"name": "Hacked"}),
        ("get", f"/api/v1/classrooms/{class_id}/enrollments/", None),
        ("post", f"/api/v1/classrooms/{class_id}/enrollments/", {"user": person, "role": "student"}),
        ("delete", f"/api/v1/classrooms/{class_id}/enrollments/{person}/", None),
        ("get", f"/api/v1/students/?classroom={class_id}", None),
    ):
        resp = getattr(client, method)(url, body, format="json")
        assert resp.status_code == 404, (method, url, resp.content)
        assert resp.json()["error"]["code"] == "not_found"
    assert world[victim].pk not in {p["id"] for p in client.get("/api/v1/users/?active=all").json()["results"]}
    assert list(User.objects.values_list("pk", "first_name", "is_active", "school_id").order_by("pk")) == before
    assert list(Enrollment.objects.values_list("pk", "active").order_by("pk")) == enrolments
    assert Classroom.objects.get(pk=class_id).name in ("5A", "6A")


def test_the_list_filters(api, world):
    """GET /users/ filters by role, school and external_id, lists active people by default and
    deactivated ones too with active=all; staff see both schools."""

    def names(client: APIClient, query: str = "") -> set[str]:
        resp = client.get(f"/api/v1/users/{query}")
        assert resp.status_code == 200, resp.content
        return {p["username"] for p in resp.json()["results"]}

    User.objects.filter(pk=world["bob"].pk).update(is_active=False)
    admin = api["admin_a"]
    assert names(admin) == {"admin_a", "teacher_a", "teacher_b", "alice", "carol"}
    assert names(admin, "?active=all") == {"admin_a", "teacher_a", "teacher_b", "alice", "bob", "carol"}
    assert names(admin, "?role=teacher") == {"teacher_a", "teacher_b"}
    assert names(api["staff"], "?external_id=sis-dave") == {"dave"}
    assert names(api["staff"], f"?school={world['other'].pk}") == {"admin_b", "teacher_c", "dave"}
    assert names(api["staff"], "?role=administrator") == {"admin_a", "admin_b"}
    assert names(api["teacher_a"], "?active=all") == {"alice"}
    for query in ("?role=staff", "?school=x", "?active=false", "?active="):
        assert admin.get(f"/api/v1/users/{query}").status_code == 400, query


def test_schools_are_those_one_may_provision_in(api, world):
    """GET /schools/: an administrator's school (a district's administrator: its schools too), a
    teacher's own, every school for staff."""
    district = School.objects.create(name="District", kind=School.Kind.DISTRICT)
    School.objects.filter(pk=world["other"].pk).update(parent=district)
    make_user("superintendent", User.Role.ADMINISTRATOR, school=district)
    superintendent = client_for(User.objects.get(username="superintendent"))

    def ids(client: APIClient) -> set[int]:
        resp = client.get("/api/v1/schools/")
        assert resp.status_code == 200, resp.content
        return {s["id"] for s in resp.json()["results"]}

    assert ids(api["admin_a"]) == {world["school"].pk}
    assert ids(api["teacher_c"]) == {world["other"].pk}
    assert ids(superintendent) == {district.pk, world["other"].pk}
    assert ids(api["staff"]) == {district.pk, world["school"].pk, world["other"].pk}


def test_deactivation_signs_out_and_keeps_the_data_and_restore_signs_in_again(api, world):
    """PATCH active false: the person's token answers 401, their session is gone, a password
    sign-in is refused as wrong credentials are, their teacher no longer sees them; their
    memories stay (the staff admin shows them). active true restores them: they sign in again."""
    alice = world["alice"]
    note = teacher_note_create(
        teacher=world["teacher_a"], student_id=alice.pk, title="Likes fractions with pizza slices", content="x"
    )
    browser = Client()
    browser.force_login(alice)
    assert browser.get("/api/v1/me/").status_code == 200
    wrong = APIClient().post("/api/v1/auth/token/", {"username": "alice", "password": "wrong"}, format="json")

    resp = api["admin_a"].patch(f"/api/v1/users/{alice.pk}/", {"active": False}, format="json")
    assert resp.status_code == 200 and resp.json()["active"] is False, resp.content
    assert api["alice"].get("/api/v1/me/").status_code == 401
    assert browser.get("/api/v1/me/").status_code == 401
    refused = APIClient().post("/api/v1/auth/token/", {"username": "alice", "password": "pw-alice"}, format="json")
    assert (refused.status_code, refused.json()) == (wrong.status_code, wrong.json())
    assert api["teacher_a"].get(f"/api/v1/students/{alice.pk}/").status_code == 404
    assert AIMemory.objects.filter(pk=note.pk).exists()
    assert Enrollment.objects.get(student=alice).active
    admin_site = Client()
    admin_site.force_login(world["staff"])
    assert "Likes fractions with pizza slices" in admin_site.get("/admin/memory/aimemory/").content.decode()

    restored = api["admin_a"].patch(f"/api/v1/users/{alice.pk}/", {"active": True}, format="json")
    assert restored.status_code == 200 and restored.json()["active"] is True
    assert api["alice"].get("/api/v1/me/").status_code == 401  # the old token stays revoked
    signed_in = APIClient().post("/api/v1/auth/token/", {"username": "alice", "password": "pw-alice"}, format="json")
    assert signed_in.status_code == 200, signed_in.content
    assert api["teacher_a"].get(f"/api/v1/students/{alice.pk}/").status_code == 200


def test_nobody_changes_their_own_role_school_or_activity(api, world):
    """An administrator deactivating themself, or changing their own role, is a 403."""
    me = f"/api/v1/users/{world['admin_a'].pk}/"
    assert api["admin_a"].patch(me, {"active": False}, format="json").status_code == 403
    assert api["admin_a"].patch(me, {"role": "teacher"}, format="json").status_code == 403
    assert api["admin_a"].patch(me, {"given_name": "Ada"}, format="json").status_code == 200
    assert User.objects.get(pk=world["admin_a"].pk).is_active


def test_staff_move_a_person_and_an_administrator_may_not_move_them_out(api, world):
    """PATCH school: staff move anyone anywhere; an administrator only within their schools
    (another school is unknown to them: 400)."""
    alice = f"/api/v1/users/{world['alice'].pk}/"
    assert api["admin_a"].patch(alice, {"school": world["other"].pk}, format="json").status_code == 400
    moved = api["staff"].patch(alice, {"school": world["other"].pk, "external_id": "sis-alice"}, format="json")
    assert moved.status_code == 200 and moved.json()["school"] == world["other"].pk
    assert api["staff"].patch(alice, {"external_id": "sis-dave"}, format="json").status_code == 409


def test_classes_are_provisioned_by_external_id(api, world):
    """POST /classrooms/ creates a class (201), the same external_id renames it (200); GET
    /classrooms/ shows its school, external_id, active and teachers; a teacher may not create or
    change a class (403); an inactive class leaves its teacher's list and stays in the
    administrator's with active=all."""
    body = {"name": "7C", "school": world["school"].pk, "external_id": "sis-7c"}
    created = api["admin_a"].post("/api/v1/classrooms/", body, format="json")
    assert created.status_code == 201, created.content
    assert created.json() | {"id": 0} == {
        "id": 0,
        "name": "7C",
        "school": world["school"].pk,
        "external_id": "sis-7c",
        "active": True,
        "teachers": [],
    }
    renamed = api["admin_a"].post("/api/v1/classrooms/", body | {"name": "7C maths"}, format="json")
    assert renamed.status_code == 200 and renamed.json()["id"] == created.json()["id"]
    assert renamed.json()["name"] == "7C maths"
    assert api["admin_b"].post("/api/v1/classrooms/", body, format="json").status_code == 409
    assert api["teacher_a"].post("/api/v1/classrooms/", body | {"external_id": "x"}, format="json").status_code == 403

    class_a = f"/api/v1/classrooms/{world['class_a'].pk}/"
    assert api["teacher_a"].patch(class_a, {"name": "Mine"}, format="json").status_code == 403
    listed = api["teacher_a"].get("/api/v1/classrooms/").json()["results"]
    assert listed == [
        {
            "id": world["class_a"].pk,
            "name": "5A",
            "school": world["school"].pk,
            "external_id": None,
            "active": True,
            "teachers": [{"id": world["teacher_a"].pk, "primary": True}],
        }
    ]
    closed = api["admin_a"].patch(class_a, {"active": False}, format="json")
    assert closed.status_code == 200 and closed.json()["active"] is False
    assert api["teacher_a"].get("/api/v1/classrooms/").json()["results"] == []
    assert api["teacher_a"].get(class_a).status_code == 404
    admin_names = [c["name"] for c in api["admin_a"].get("/api/v1/classrooms/?active=all").json()["results"]]
    assert admin_names == ["5A", "5B", "7C maths"]
    assert [c["name"] for c in api["admin_a"].get("/api/v1/classrooms/").json()["results"]] == ["5B", "7C maths"]
    assert len(api["staff"].get("/api/v1/classrooms/").json()["results"]) == 3


def test_enrolments_are_added_ended_and_added_again(api, world):
    """A teacher enrols a student of their school (201, then 200), ends the enrolment (204: the
    row stays, inactive, and the teacher loses access) and enrols them again (200); a teacher or
    another class's student is refused; an administrator adds a co-teacher as primary."""
    teacher = api["teacher_a"]
    eve = teacher.post("/api/v1/users/", student_body(world["school"]), format="json").json()["id"]
    url = f"/api/v1/classrooms/{world['class_a'].pk}/enrollments/"
    added = teacher.post(url, {"user": eve, "role": "student"}, format="json")
    assert added.status_code == 201, added.content
    assert added.json()["active"] is True and added.json()["role"] == "student"
    assert teacher.post(url, {"user": eve, "role": "student"}, format="json").status_code == 200
    roster = [(row["username"], row["role"]) for row in teacher.get(url).json()["results"]]
    assert roster == [("teacher_a", "teacher"), ("alice", "student"), ("bob", "student"), ("eve.martin", "student")]
    assert teacher.get(f"/api/v1/students/{eve}/").status_code == 200

    assert teacher.delete(f"{url}{eve}/").status_code == 204
    assert teacher.delete(f"{url}{eve}/").status_code == 204
    assert Enrollment.objects.get(student_id=eve).active is False
    assert teacher.get(f"/api/v1/students/{eve}/").status_code == 404
    assert "eve.martin" not in {row["username"] for row in teacher.get(url).json()["results"]}
    ended = {row["username"]: row["active"] for row in api["admin_a"].get(f"{url}?active=all").json()["results"]}
    assert ended["eve.martin"] is False
    again = teacher.post(url, {"user": eve, "role": "student"}, format="json")
    assert again.status_code == 200 and again.json()["active"] is True
    assert Enrollment.objects.filter(student_id=eve).count() == 1

    teacher_b = world["teacher_b"].pk
    assert teacher.post(url, {"user": teacher_b, "role": "teacher"}, format="json").status_code == 403
    refused = teacher.post(url, {"user": world["carol"].pk, "role": "student"}, format="json")
    assert refused.status_code == 400 and "user" in refused.json()["error"]["details"]
    assert teacher.delete(f"{url}{world['carol'].pk}/").status_code == 404
    wrong_role = api["admin_a"].post(url, {"user": teacher_b, "role": "student"}, format="json")
    assert wrong_role.status_code == 400, wrong_role.content
    co = api["admin_a"].post(url, {"user": teacher_b, "role": "teacher", "primary": True}, format="json")
    assert co.status_code == 201 and co.json()["primary"] is True
    classes = {c["id"]: c for c in api["teacher_b"].get("/api/v1/classrooms/").json()["results"]}
    assert classes[world["class_a"].pk]["teachers"] == [
        {"id": world["teacher_a"].pk, "primary": True},
        {"id": teacher_b, "primary": True},
    ]
    assert api["admin_a"].delete(f"{url}{teacher_b}/").status_code == 204
    assert world["class_a"].pk not in {c["id"] for c in api["teacher_b"].get("/api/v1/classrooms/").json()["results"]}


def test_students_of_a_class(api, world):
    """GET /students/?classroom= lists a class's active students (another class: 404); an
    administrator's active=all adds deactivated students and ended enrolments."""

    def names(client: APIClient, query: str) -> list[str]:
        resp = client.get(f"/api/v1/students/{query}")
        assert resp.status_code == 200, resp.content
        return [s["username"] for s in resp.json()["results"]]

    class_a = world["class_a"].pk
    assert names(api["teacher_a"], f"?classroom={class_a}") == ["alice", "bob"]
    assert api["teacher_a"].get(f"/api/v1/students/?classroom={world['class_b'].pk}").status_code == 404
    assert api["teacher_a"].get("/api/v1/students/?classroom=x").status_code == 400
    api["admin_a"].patch(f"/api/v1/users/{world['bob'].pk}/", {"active": False}, format="json")
    api["admin_a"].delete(f"/api/v1/classrooms/{class_a}/enrollments/{world['alice'].pk}/")
    assert names(api["teacher_a"], f"?classroom={class_a}") == []
    assert names(api["admin_a"], f"?classroom={class_a}") == []
    assert names(api["admin_a"], f"?classroom={class_a}&active=all") == ["alice", "bob"]
    assert names(api["admin_a"], "?active=all") == ["alice", "bob", "carol"]
    assert names(api["teacher_a"], "?active=all") == []
