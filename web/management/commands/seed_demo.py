"""Demo data for a first run: a teacher (who may use the admin), a classroom, students alice and
bob, with API tokens, and each student's past (web.demo: a conversation, memories, a quiz, a
task). With `--wait-for URL` (scripts/run_dev.sh, `make run`), once the server at URL answers,
it also prints which model answers and where to go there: the links of its GET /, with who
signs in where."""

from __future__ import annotations

import time
from typing import Any

import httpx2
from django.conf import settings
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from rest_framework.authtoken.models import Token

from accounts.models import TUTOR_STAFF_GROUP, Enrollment, School, User
from accounts.services import classroom_create
from llm import gateway
from web.demo import demo_history_seed

DEMO_SCHOOL = "Demo school"
DEMO_PASSWORD = "demo-password"  # noqa: S105 (demo accounts only, refused when DEBUG is off)
# Who signs in at each entry point of GET / (web.views.ENTRY_POINTS), printed beside its link.
SIGNS_IN = {"student_app": User.Role.STUDENT, "teacher_app": User.Role.TEACHER, "admin": User.Role.TEACHER}


class Command(BaseCommand):
    help = (
        "Create demo accounts (marked is_demo) and print their API tokens; with --wait-for, then where to go on "
        "the server once it answers. Refused when DEBUG is off."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--wait-for",
            metavar="URL",
            help="the server's address (e.g. http://127.0.0.1:8000/): wait until it answers, then print its links",
        )
        parser.add_argument("--wait-seconds", type=float, default=300.0, help="how long to wait for the server (300)")

    def handle(self, *args: Any, **options: Any) -> None:
        if not settings.ALLOW_DEMO_DATA:
            raise CommandError("seed_demo writes demo accounts with a known password: refused when DEBUG is off.")
        url = options["wait_for"]
        links = self._links(url, options["wait_seconds"]) if url else {}
        with transaction.atomic():
            teacher = self._user("teacher", User.Role.TEACHER, "Ms", "Martin")
            self._admin_access(teacher)
            self._alert_address(teacher)
            school = School.objects.filter(name=DEMO_SCHOOL).first() or School.objects.create(name=DEMO_SCHOOL)
            classroom = school.classrooms.filter(name="Demo class 5B").first() or classroom_create(
                name="Demo class 5B", school=school, teachers=[teacher]
            )
            teacher.school = school
            teacher.save(update_fields=["school"])
            students = [
                self._user("alice", User.Role.STUDENT, "Alice", "Durand"),
                self._user("bob", User.Role.STUDENT, "Bob", "Bernard", language=User.Language.FRENCH),
            ]
            for student in students:
                Enrollment.objects.get_or_create(classroom=classroom, student=student)
                student.school = school
                student.save(update_fields=["school"])
        for student in students:
            demo_history_seed(student=student, teacher=teacher)
        users = [teacher, *students]
        self.stdout.write(self.style.SUCCESS(f"Demo data ready (password for every demo account: {DEMO_PASSWORD})"))
        for user in users:
            token, _ = Token.objects.get_or_create(user=user)
            self.stdout.write(f"  {user.username:<8} {user.role:<8} id={user.pk:<4} token={token.key}")
        self.stdout.write(f"  {teacher.username} also signs in to the admin at /admin/")
        self.stdout.write("  alice and bob each have a past conversation, memories, a quiz to answer and a task")
        if url:
            self._model()
        if links:
            self.stdout.write(self.style.SUCCESS(f"Tutor is up at {url}"))
            width = max(map(len, links.values())) + 2
            for key, link in links.items():
                label = key.replace("_", " ").replace("api ", "API ")
                names = ", ".join(user.username for user in users if user.role == SIGNS_IN.get(key))
                self.stdout.write(f"  {label:<15}{link:<{width}}({names})" if names else f"  {label:<15}{link}")

    def _links(self, url: str, seconds: float) -> dict[str, str]:
        """The links of the server's GET / (web.views.root), once it answers: a server that is
        starting queues the request until it is ready."""
        deadline = time.monotonic() + seconds
        while True:
            try:
                # Not through a proxy of the environment: the server is this machine's.
                response = httpx2.get(
                    url,
                    headers={"Accept": "application/json"},
                    timeout=max(deadline - time.monotonic(), 0.1),
                    trust_env=False,
                )
                break
            except httpx2.TransportError:
                if time.monotonic() >= deadline:
                    raise CommandError(f"No server answered at {url} within {seconds:g} s.") from None
                time.sleep(0.2)
        if response.status_code != 200:
            raise CommandError(f"{url} answered {response.status_code}, not the site's links.")
        links: dict[str, str] = response.json()["links"]
        return links

    def _model(self) -> None:
        """Which model answers, and how to plug in a real one when it is the demo model or none."""
        profile = gateway.chat_profile()
        plug = (
            "  To plug in a real model: set LLM_BASE_URL and LLM_MODEL (Ollama: http://127.0.0.1:11434/v1 and "
            "llama3.1), or LLM_API_KEY for OpenAI, then run make run again (docs/configuration.md)."
        )
        if settings.LLM_DEMO_MODEL:
            self.stdout.write(
                self.style.WARNING(f"Model: the demo model at {profile.base_url} (scripted replies, not a real tutor).")
            )
            self.stdout.write(plug)
        elif not gateway.is_configured(profile):
            self.stdout.write(self.style.WARNING("Model: none configured (a student's message answers 503)."))
            self.stdout.write(plug)
        else:
            self.stdout.write(f"Model: {profile.model or '(unknown)'} at {profile.base_url or 'OpenAI'}")

    def _admin_access(self, teacher: User) -> None:
        """The demo teacher signs in to /admin/ and sees the tutor models (is_staff and the group)."""
        group = Group.objects.filter(name=TUTOR_STAFF_GROUP).first()
        if group is None:
            raise CommandError(f"The {TUTOR_STAFF_GROUP!r} group is missing: run manage.py migrate.")
        if not teacher.is_staff:
            teacher.is_staff = True
            teacher.save(update_fields=["is_staff"])
        teacher.groups.add(group)

    def _alert_address(self, teacher: User) -> None:
        """The demo class's crisis alerts reach its teacher (by default, the console's email
        backend prints them): a class without a recipient is what the start-up log reports."""
        if not teacher.email:
            teacher.email = "teacher@demo.invalid"
            teacher.save(update_fields=["email"])

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
