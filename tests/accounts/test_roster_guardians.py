"""Guardians from a OneRoster bundle (docs/roster.md#guardians): users.csv rows of role
guardian, parent or relative become guardians, linked to the students their `agentSourcedIds`
name; a re-import that names fewer children ends the other links at once."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import call_command

from accounts.models import GuardianLink, User
from tests.accounts.roster_bundles import district, write_bundle
from tests.conftest import client_for

pytestmark = pytest.mark.django_db(transaction=False)


def bundle_with_guardians(folder: Path, children: dict[str, str]) -> Path:
    """The district of four students, and a guardian per entry of `children` (sourcedId: the
    agentSourcedIds cell), of school s1, each with its OneRoster role."""
    files = district(students=4)
    roles = {"g1": "parent", "g2": "relative", "g3": "guardian"}
    for sid, agents in children.items():
        files["users"].append(
            {
                "sourcedId": sid,
                "enabledUser": "true",
                "orgSourcedIds": "s1",
                "role": roles[sid],
                "username": f"guardian-{sid}",
                "givenName": "Guardian",
                "familyName": sid.upper(),
                "agentSourcedIds": agents,
            }
        )
    return write_bundle(folder, files)


def import_(path: Path) -> str:
    out = io.StringIO()
    call_command("roster_import", str(path), stdout=out)
    return out.getvalue()


def linked(sid: str) -> set[str]:
    links = GuardianLink.objects.filter(guardian__external_id=sid, active=True)
    return {str(child) for child in links.values_list("student__external_id", flat=True)}


def test_guardian_rows_link_the_children_they_name(tmp_path: Path) -> None:
    """A parent of st0 and st1 and a relative of st2 are guardians linked to them; a teacher
    named as a child is left out (and said); the parent reads st0's skills and nothing of st3;
    importing again changes nothing."""
    out = import_(bundle_with_guardians(tmp_path / "a", {"g1": "st0, st1", "g2": "st2,t1", "g3": ""}))
    assert {u.role for u in User.objects.filter(external_id__in=["g1", "g2", "g3"])} == {"guardian"}
    assert linked("g1") == {"st0", "st1"} and linked("g2") == {"st2"} and linked("g3") == set()
    assert "t1 is not a student" in out and "guardian links: 3 made, 0 ended" in out
    parent = User.objects.get(external_id="g1")
    st0, st3 = (User.objects.get(external_id=sid) for sid in ("st0", "st3"))
    assert client_for(parent).get(f"/api/v1/students/{st0.pk}/skills/").status_code == 200
    assert client_for(parent).get(f"/api/v1/students/{st3.pk}/skills/").status_code == 404
    assert "guardian links" not in import_(bundle_with_guardians(tmp_path / "b", {"g1": "st0,st1", "g2": "st2"}))


def test_a_reimport_naming_fewer_children_ends_the_other_links(tmp_path: Path) -> None:
    """The parent's row names st0 alone now: the link to st1 ends (kept, inactive) and the
    parent gets 404 on st1 at once; naming st1 again restores it."""
    import_(bundle_with_guardians(tmp_path / "a", {"g1": "st0,st1"}))
    out = import_(bundle_with_guardians(tmp_path / "b", {"g1": "st0"}))
    assert "guardian links: 0 made, 1 ended" in out
    assert linked("g1") == {"st0"}
    assert GuardianLink.objects.filter(guardian__external_id="g1").count() == 2
    parent, st1 = User.objects.get(external_id="g1"), User.objects.get(external_id="st1")
    assert client_for(parent).get(f"/api/v1/students/{st1.pk}/skills/").status_code == 404
    import_(bundle_with_guardians(tmp_path / "c", {"g1": "st0,st1"}))
    assert linked("g1") == {"st0", "st1"}
