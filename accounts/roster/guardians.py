"""users.csv's guardians (`role` guardian, parent or relative): their `agentSourcedIds` name
their children, and a guardian's row says who their children are (docs/roster.md#guardians).

A link the row names is made (or made active again); a link of the guardian the row no longer
names is ended (kept, inactive: the guardian reads nothing more of that child). A child that is
not a student, or of a school the importer may not touch, is left out and reported."""

from __future__ import annotations

from accounts.models import GuardianLink, User
from accounts.roster.context import Context

GUARDIAN_ROLES = ("guardian", "parent", "relative")


def agent_sids(value: str) -> tuple[str, ...]:
    """The sourcedIds of an `agentSourcedIds` cell (comma-separated)."""
    return tuple(sid.strip() for sid in value.split(",") if sid.strip())


def guardian_links_apply(ctx: Context, children: dict[str, tuple[str, ...]]) -> None:
    """Make each listed guardian's links those of `children` (guardian sourcedId: children's
    sourcedIds); a note in the report says how many were made and ended."""
    made = ended = 0
    for guardian_sid, child_sids in children.items():
        guardian = ctx.users.get(guardian_sid)
        if guardian is None or guardian.role != User.Role.GUARDIAN:
            continue
        wanted: set[int] = set()
        for sid in child_sids:
            child = ctx.users.get(sid)
            if child is None or child.role != User.Role.STUDENT or not ctx.in_scope(child.school_id):
                ctx.report.notes.append(f"guardian {guardian_sid}: {sid} is not a student of this roster; not linked")
                continue
            wanted.add(child.id)
        links = {link.student_id: link for link in GuardianLink.objects.filter(guardian_id=guardian.id)}
        for student_id in wanted:
            link = links.get(student_id)
            if link is None:
                GuardianLink.objects.create(guardian_id=guardian.id, student_id=student_id)
                made += 1
            elif not link.active:
                GuardianLink.objects.filter(pk=link.pk).update(active=True)
                made += 1
        ended += (
            GuardianLink.objects.filter(guardian_id=guardian.id, active=True)
            .exclude(student_id__in=wanted)
            .update(active=False)
        )
    if made or ended:
        ctx.report.notes.append(f"guardian links: {made} made, {ended} ended")
