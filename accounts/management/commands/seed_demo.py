"""Demo data for a first run: a teacher (who may use the admin), a classroom, students alice and
bob, with API tokens."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from rest_framework.authtoken.models import Token

from accounts.models import TUTOR_STAFF_GROUP, Classroom, Enrollment, User

DEMO_PASSWORD = "demo-password"  # noqa: S105 (demo accounts only, refused when DEBUG is off)


class Command(BaseCommand):
    help = "Create demo accounts (marked is_demo) and print their API tokens. Refused when DEBUG is off."

    def handle(self, *args: Any, **options: Any) -> None:
        if not settings.ALLOW_DEMO_DATA:
            raise CommandError("seed_demo writes demo accounts with a known password: refused when DEBUG is off.")
        with transaction.atomic():
            teacher = self._user("teacher", User.Role.TEACHER, "Ms", "Martin")
            self._admin_access(teacher)
            classroom, _ = Classroom.objects.get_or_create(name="Demo class 5B", teacher=teacher)
            students = [
                self._user("alice", User.Role.STUDENT, "Alice", "Durand"),
                self._user("bob", User.Role.STUDENT, "Bob", "Bernard", language=User.Language.FRENCH),
            ]
            for student in students:
                Enrollment.objects.get_or_create(classroom=classroom, student=student)
        self.stdout.write(self.style.SUCCESS(f"Demo data ready (password for every demo account: {DEMO_PASSWORD})"))
        for user in [teacher, *students]:
            token, _ = Token.objects.get_or_create(user=user)
            self.stdout.write(f"  {user.username:<8} {user.role:<8} id={user.pk:<4} token={token.key}")
        self.stdout.write(f"  {teacher.username} also signs in to the admin at /admin/")

    def _admin_access(self, teacher: User) -> None:
        """The demo teacher signs in to /admin/ and sees the tutor models (is_staff and the group)."""
        group = Group.objects.filter(name=TUTOR_STAFF_GROUP).first()
        if group is None:
            raise CommandError(f"The {TUTOR_STAFF_GROUP!r} group is missing: run manage.py migrate.")
        if not teacher.is_staff:
            teacher.is_staff = True
            teacher.save(update_fields=["is_staff"])
        teacher.groups.add(group)

    def _user(self, username: str, role: str, first: str, last: str, language: str = "en") -> User:
        user, created = User.objects.get_or_create(
            username=username,
            defaults={"role": role, "first_name": first, "last_name": last, "language": language, "is_demo": True},
        )
        if created:
            user.set_password(DEMO_PASSWORD)
            user.save(update_fields=["password"])
        elif not user.is_demo:
            raise CommandError(f"A real account named {username!r} exists; seed_demo will not touch it.")
        return user
