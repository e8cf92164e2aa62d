"""Each row of a bundle as a checked record, or `Rejected` with the reason (docs/roster.md).

Pure functions over the row's columns: what exists in the database is `apply`'s to check.
OneRoster 1.1 and 1.2 differ in their users: 1.1 has `role` and `orgSourcedIds` in users.csv,
1.2 moves the roles to roles.csv and adds `primaryOrgSourcedId` and the preferred names.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from accounts.models import School, User


class Rejected(Exception):
    """This row is skipped; the reason is reported with its file, line and sourcedId."""


# The columns without which a file cannot be read (the bundle is unusable).
REQUIRED = {
    "orgs": ("sourcedId", "name", "type"),
    "users": ("sourcedId", "username", "givenName", "familyName"),
    "users-1.1": ("sourcedId", "username", "givenName", "familyName", "role", "orgSourcedIds"),
    "roles": ("userSourcedId", "role", "roleType", "orgSourcedId"),
    "classes": ("sourcedId", "title", "schoolSourcedId"),
    "enrollments": ("sourcedId", "classSourcedId", "userSourcedId", "role"),
}

# OneRoster roles (1.1 users.csv, 1.2 roles.csv) imported, and the role given. An aide is a
# teacher of the class who is never its primary one; 1.2's administrators are administrators.
USER_ROLES = {
    "student": User.Role.STUDENT,
    "teacher": User.Role.TEACHER,
    "aide": User.Role.TEACHER,
    "administrator": User.Role.ADMINISTRATOR,
    "siteadministrator": User.Role.ADMINISTRATOR,
    "districtadministrator": User.Role.ADMINISTRATOR,
    "systemadministrator": User.Role.ADMINISTRATOR,
    "principal": User.Role.ADMINISTRATOR,
    # A guardian's `agentSourcedIds` name their children (accounts.roster.guardians).
    "guardian": User.Role.GUARDIAN,
    "parent": User.Role.GUARDIAN,
    "relative": User.Role.GUARDIAN,
}
ORG_KINDS = {"school": School.Kind.SCHOOL, "district": School.Kind.DISTRICT}
# Enrolment roles imported: a student's enrolment, or a teacher's (an aide's is not primary).
ENROLMENT_ROLES = ("student", "teacher", "aide")


@dataclass(frozen=True)
class Org:
    sid: str
    name: str
    kind: str
    parent_sid: str
    deleted: bool


@dataclass(frozen=True)
class Person:
    sid: str
    username: str
    first_name: str
    last_name: str
    email: str
    role: str
    org_sid: str
    enabled: bool
    deleted: bool


@dataclass(frozen=True)
class Class:
    sid: str
    name: str
    school_sid: str
    deleted: bool


@dataclass(frozen=True)
class Membership:
    sid: str
    class_sid: str
    user_sid: str
    teacher: bool
    primary: bool
    deleted: bool


def _common(row: dict[str, str]) -> tuple[str, bool]:
    """The row's sourcedId and whether its status deletes it; its dates checked."""
    sid = row.get("sourcedId", "")
    if not sid:
        raise Rejected("no sourcedId")
    if len(sid) > 255:
        raise Rejected("sourcedId longer than 255 characters")
    status = row.get("status", "").lower()
    if status not in ("", "active", "tobedeleted", "inactive"):
        raise Rejected(f"status {row['status']!r} is not active or tobedeleted")
    modified = row.get("dateLastModified", "")
    if modified:
        try:
            datetime.fromisoformat(modified)
        except ValueError:
            raise Rejected(f"dateLastModified {modified!r} is not a date and time") from None
    for column in ("beginDate", "endDate"):
        if row.get(column):
            try:
                date.fromisoformat(row[column][:10])
            except ValueError:
                raise Rejected(f"{column} {row[column]!r} is not a date (YYYY-MM-DD)") from None
    return sid, status in ("tobedeleted", "inactive")


def _text(row: dict[str, str], column: str, limit: int, *, required: bool = False) -> str:
    value = row.get(column, "")
    if required and not value:
        raise Rejected(f"no {column}")
    if len(value) > limit:
        raise Rejected(f"{column} longer than {limit} characters")
    return value


def _boolean(value: str, column: str, default: bool) -> bool:
    if not value:
        return default
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise Rejected(f"{column} {value!r} is not true or false")


def org_read(row: dict[str, str]) -> Org:
    sid, deleted = _common(row)
    kind = ORG_KINDS.get(row["type"].lower())
    if kind is None:
        raise Rejected(f"org type {row['type']!r} is not imported (only school and district)")
    return Org(sid, _text(row, "name", 200, required=True), kind, row.get("parentSourcedId", ""), deleted)


def role_read(row: dict[str, str]) -> tuple[str, str, str, bool]:
    """A 1.2 roles.csv row: (userSourcedId, role, orgSourcedId, primary)."""
    _common({**row, "sourcedId": row.get("sourcedId") or row.get("userSourcedId", "")})
    return row["userSourcedId"], row["role"], row["orgSourcedId"], row["roleType"].lower() == "primary"


def person_read(row: dict[str, str], *, role: str, org_sid: str) -> Person:
    """A users.csv row; `role` and `org_sid` from its own columns (1.1) or roles.csv (1.2)."""
    sid, deleted = _common(row)
    if not role:
        raise Rejected("no role")
    mapped = USER_ROLES.get(role.lower())
    if mapped is None:
        raise Rejected(f"role {role} is not imported")
    if not org_sid:
        raise Rejected("no org")
    first = row.get("preferredGivenName") or row.get("preferredFirstName") or row.get("givenName", "")
    last = row.get("preferredFamilyName") or row.get("preferredLastName") or row.get("familyName", "")
    for column, value in (("givenName", first), ("familyName", last)):
        if len(value) > 150:
            raise Rejected(f"{column} longer than 150 characters")
    return Person(
        sid=sid,
        username=_text(row, "username", 150, required=True),
        first_name=first,
        last_name=last,
        email=_text(row, "email", 254),
        role=mapped,
        org_sid=org_sid,
        enabled=_boolean(row.get("enabledUser", ""), "enabledUser", True),
        deleted=deleted,
    )


def class_read(row: dict[str, str]) -> Class:
    sid, deleted = _common(row)
    return Class(
        sid, _text(row, "title", 120, required=True), _text(row, "schoolSourcedId", 255, required=True), deleted
    )


def membership_read(row: dict[str, str]) -> Membership:
    sid, deleted = _common(row)
    role = row["role"].lower()
    if role not in ENROLMENT_ROLES:
        raise Rejected(f"enrolment role {row['role']} is not imported")
    primary = _boolean(row.get("primary", ""), "primary", False) and role == "teacher"
    return Membership(
        sid,
        _text(row, "classSourcedId", 255, required=True),
        _text(row, "userSourcedId", 255, required=True),
        teacher=role != "student",
        primary=primary,
        deleted=deleted,
    )
