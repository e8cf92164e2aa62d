"""The retention API: a school's policy for its administrators and staff, a class's own for the
same people; another school's is a 404, a teacher or a student is refused; bad periods are a 400."""

from __future__ import annotations

from typing import Any

import pytest

from accounts.models import User
from retention.models import RetentionPolicy
from retention.services import retention_apply
from tests.conftest import client_for, make_user

PERIODS = {"transcript_days": 30, "memory_days": 365, "memory_grace_days": 30, "flag_days": 90, "inactive_days": 180}


def school_url(school: Any) -> str:
    return f"/api/v1/schools/{school.pk}/retention/"


def class_url(classroom: Any) -> str:
    return f"/api/v1/classrooms/{classroom.pk}/retention/"


def policies() -> list[tuple[Any, ...]]:
    return list(
        RetentionPolicy.objects.order_by("pk").values_list("pk", "school_id", "classroom_id", "transcript_days")
    )


@pytest.fixture
def staff(db: None) -> User:
    return make_user("operator", User.Role.STAFF, is_staff=True)


def test_an_administrator_sets_their_schools_policy_and_reads_the_last_run(schools):
    """admin_a reads school A's policy (none yet: every period null, not its own), sets it, and
    reads it back with the last run's counts; a period left out is null."""
    client = client_for(schools["admin_a"])
    body = client.get(school_url(schools["school"])).json()
    assert body["own"] is False and body["last_run"] is None
    assert all(body[name] is None for name in PERIODS)

    resp = client.put(school_url(schools["school"]), {"transcript_days": 30, "memory_days": 365}, format="json")
    assert resp.status_code == 200, resp.content
    body = resp.json()
    assert (body["own"], body["school"], body["classroom"]) == (True, schools["school"].pk, None)
    assert (body["transcript_days"], body["memory_days"], body["inactive_days"]) == (30, 365, None)
    policy = RetentionPolicy.objects.get(school=schools["school"])
    assert policy.updated_by == schools["admin_a"]

    retention_apply(school_id=schools["school"].pk, dry_run=True)
    run = client.get(school_url(schools["school"])).json()["last_run"]
    assert run["dry_run"] is True and run["counts"]["conversations"] == 0 and run["finished_at"]


def test_a_class_gets_its_own_policy_and_can_follow_its_school_again(schools, staff):
    """A class follows its school's periods (`own` false) until it is given its own; DELETE
    returns it to its school's."""
    client = client_for(schools["admin_a"])
    assert client.put(school_url(schools["school"]), PERIODS, format="json").status_code == 200
    body = client.get(class_url(schools["class_a"])).json()
    assert (body["own"], body["transcript_days"], body["classroom"]) == (False, 30, schools["class_a"].pk)

    resp = client.put(class_url(schools["class_a"]), {"transcript_days": 7}, format="json")
    assert resp.status_code == 200, resp.content
    assert (resp.json()["own"], resp.json()["transcript_days"], resp.json()["memory_days"]) == (True, 7, None)
    assert client_for(staff).get(class_url(schools["class_a"])).json()["transcript_days"] == 7

    resp = client.delete(class_url(schools["class_a"]))
    assert resp.status_code == 200
    assert (resp.json()["own"], resp.json()["transcript_days"]) == (False, 30)
    assert not RetentionPolicy.objects.filter(classroom=schools["class_a"]).exists()


def test_staff_manage_every_schools_policy(schools, staff):
    resp = client_for(staff).put(school_url(schools["school_b"]), PERIODS, format="json")
    assert resp.status_code == 200, resp.content
    assert resp.json() | PERIODS == resp.json()


@pytest.mark.parametrize(
    "body",
    [
        {"transcript_days": -1},
        {"memory_days": 3651},
        {"flag_days": "soon"},
        {"inactive_days": 1.5},
        {"memory_grace_days": True},
    ],
)
def test_bad_periods_are_a_400_and_nothing_changes(schools, body):
    before = policies()
    resp = client_for(schools["admin_a"]).put(school_url(schools["school"]), body, format="json")
    assert resp.status_code == 400, resp.content
    assert resp.json()["error"]["code"] == "invalid" and set(resp.json()["error"]["details"]) == set(body)
    assert policies() == before


# (who, the school's or the class's, the answer): another school's administrator, teacher and
# student, a teacher of another class, a student of the class: 404 where the row is theirs to
# know nothing of; a teacher or a student asking about a school: 403 whatever the school.
REFUSALS = [
    ("admin_b", "school", 404),
    ("admin_b", "class_a", 404),
    ("teacher_c", "school", 403),
    ("teacher_c", "class_a", 404),
    ("dave", "school", 403),
    ("dave", "class_a", 404),
    ("teacher_b", "class_a", 404),
    ("alice", "class_a", 404),
    ("alice", "school", 403),
    ("teacher_a", "school", 403),
    ("teacher_a", "class_a", 403),  # the class's own teacher: the policy is the school's managers'
    ("admin_a", "school_b", 404),
    ("admin_a", "class_c", 404),
]


# A school's policy is read and set (PUT), never removed; a class's own is removed too.
MATRIX = [
    pytest.param(who, target, status, method, id=f"{method}-{who}-{target}")
    for who, target, status in REFUSALS
    for method in ("get", "put", "delete")
    if not (target.startswith("school") and method == "delete")
]


@pytest.mark.parametrize(("who", "target", "status", "method"), MATRIX)
def test_the_tenancy_matrix(schools, who, target, status, method):
    """Everyone but staff and the school's administrators is refused, and nothing changes."""
    RetentionPolicy.objects.create(school=schools["school"], transcript_days=30)
    RetentionPolicy.objects.create(school=schools["school_b"], transcript_days=40)
    RetentionPolicy.objects.create(classroom=schools["class_a"], transcript_days=50)
    RetentionPolicy.objects.create(classroom=schools["class_c"], transcript_days=60)
    url = school_url(schools[target]) if target.startswith("school") else class_url(schools[target])
    before = policies()
    resp = getattr(client_for(schools[who]), method)(url, {"transcript_days": 1}, format="json")
    assert resp.status_code == status, resp.content
    assert resp.json()["error"]["code"] == ("not_found" if status == 404 else "forbidden")
    assert policies() == before


def test_an_unknown_school_or_class_is_a_404(schools, staff):
    for url in ("/api/v1/schools/999999/retention/", "/api/v1/classrooms/999999/retention/"):
        assert client_for(staff).get(url).status_code == 404
