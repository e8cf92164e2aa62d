"""users.csv (and 1.2's roles.csv): people created, updated, deactivated or restored.

A person is never deleted: `status=tobedeleted`, `enabledUser=false`, or absence from a bulk
users file deactivates them through accounts.services.users_set_active (no sign-in, tokens and
sessions ended, their data kept); a later row that lists them active restores them."""

from __future__ import annotations

from django.contrib.auth.hashers import make_password

from accounts.models import User
from accounts.roster.context import Context, UserRow, bulk_create_with_ids
from accounts.roster.guardians import agent_sids, guardian_links_apply
from accounts.roster.rows import REQUIRED, Person, Rejected, person_read, role_read
from accounts.services import users_set_active

FIELDS = ("username", "first_name", "last_name", "email", "role", "school_id")


def _roles(ctx: Context) -> dict[str, tuple[str, str]]:
    """1.2: each user's role and org from roles.csv, their primary role first."""
    roles: dict[str, tuple[str, str, bool]] = {}
    for line, row in ctx.bundle.rows("roles", REQUIRED["roles"]):
        try:
            user, role, org, primary = role_read(row)
        except Rejected as exc:
            ctx.reject("users", "roles", line, row.get("sourcedId", ""), str(exc))
            continue
        if row.get("status", "").lower() == "tobedeleted":
            continue
        if user not in roles or (primary and not roles[user][2]):
            roles[user] = (role, org, primary)
    return {user: (role, org) for user, (role, org, _primary) in roles.items()}


def users_apply(ctx: Context) -> None:
    mode = ctx.bundle.mode("users")
    if mode == "absent":
        return
    v11 = ctx.bundle.version == "1.1"
    roles = {} if v11 else _roles(ctx)
    usernames: set[str] = set()
    children: dict[str, tuple[str, ...]] = {}
    school_sids = {school.id: sid for sid, school in ctx.schools.items()}

    def read(row: dict[str, str]) -> tuple[Person, int]:
        if v11:
            role, org = row["role"], row["orgSourcedIds"].split(",")[0].strip()
        else:
            role, org = roles.get(row.get("sourcedId", ""), ("", ""))
            known = ctx.users.get(row.get("sourcedId", ""))
            if not role and known is not None:  # a 1.2 delta changes a person and not their role
                role, org = known.role, school_sids.get(known.school_id, "") if known.school_id else ""
            org = row.get("primaryOrgSourcedId") or org
        person = person_read(row, role=role, org_sid=org)
        existing = ctx.users.get(person.sid)
        school = ctx.school_checked(person.org_sid, "org", existing)
        if existing is not None and existing.role == User.Role.STAFF:
            raise Rejected("a staff account is not rostered")
        if person.username in usernames:
            raise Rejected(f"username {person.username} is repeated")
        usernames.add(person.username)
        if person.role == User.Role.GUARDIAN:
            children[person.sid] = agent_sids(row.get("agentSourcedIds", ""))
        return person, school.id

    deactivate: list[int] = []
    restore: list[int] = []
    required = REQUIRED["users-1.1" if v11 else "users"]
    for batch in ctx.batches("users", "users", required, read):
        _batch_apply(ctx, batch, deactivate, restore)
    if mode == "bulk":
        seen = ctx.seen["users"]
        absent = [
            row.id
            for sid, row in ctx.users.items()
            if row.active and sid not in seen and row.school_id in ctx.bulk_scope and row.role != User.Role.STAFF
        ]
        ctx.report.count("users", "deactivated", len(absent))
        deactivate.extend(absent)
    users_set_active(user_ids=deactivate, active=False)
    users_set_active(user_ids=restore, active=True)
    guardian_links_apply(ctx, children)


def _batch_apply(
    ctx: Context, batch: list[tuple[int, tuple[Person, int]]], deactivate: list[int], restore: list[int]
) -> None:
    names = [person.username for _line, (person, _school) in batch]
    owners = dict(User.objects.filter(username__in=names).values_list("username", "external_id"))
    new: list[User] = []
    changed: list[User] = []
    for line, (person, school_id) in batch:
        owner = owners.get(person.username, person.sid)
        if owner != person.sid:
            ctx.reject("users", "users", line, person.sid, f"username {person.username} is taken by another account")
            continue
        active = person.enabled and not person.deleted
        values = (person.username, person.first_name, person.last_name, person.email, person.role, school_id)
        existing = ctx.users.get(person.sid)
        if existing is None:
            if person.deleted:
                ctx.report.count("users", "unchanged")
                continue
            new.append(
                User(
                    external_id=person.sid,
                    is_active=active,
                    password=make_password(None),
                    **dict(zip(FIELDS, values, strict=True)),
                )
            )
            continue
        differs = tuple(getattr(existing, name) for name in FIELDS) != values
        if differs:
            changed.append(User(pk=existing.id, **dict(zip(FIELDS, values, strict=True))))
        ctx.users[person.sid] = UserRow(existing.id, *values, active)
        if existing.active and not active:
            deactivate.append(existing.id)
            ctx.report.count("users", "deactivated")
        elif differs or (active and not existing.active):
            if active and not existing.active:
                restore.append(existing.id)
            ctx.report.count("users", "updated")
        else:
            ctx.report.count("users", "unchanged")
    User.objects.bulk_update(changed, FIELDS)
    created = bulk_create_with_ids(User, new)
    for user in created:
        assert user.external_id is not None
        ctx.users[user.external_id] = UserRow(
            user.pk,
            user.username,
            user.first_name,
            user.last_name,
            user.email,
            user.role,
            user.school_id,
            user.is_active,
        )
    ctx.report.count("users", "created", len(created))
