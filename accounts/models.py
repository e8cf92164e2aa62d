from __future__ import annotations

from decimal import Decimal
from typing import Any, ClassVar

from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.contrib.auth.models import UserManager as DjangoUserManager
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import Q

# Made by the data migration accounts.0003: view permissions on conversations, memories and LLM
# usage, and the archive permission on memories. A teacher with is_staff in it uses the admin.
TUTOR_STAFF_GROUP = "Tutor staff"


class UserManager(DjangoUserManager["User"]):
    def create_superuser(
        self, username: str, email: str | None = None, password: str | None = None, **extra_fields: Any
    ) -> User:
        """A superuser is a staff account (role staff), never a student or a teacher: the API's
        scoping primitive shows it no student's data, and `createsuperuser` cannot make a student."""
        extra_fields.setdefault("role", User.Role.STAFF)
        if extra_fields["role"] != User.Role.STAFF:
            raise ValueError("Superuser must have role=staff.")
        return super().create_superuser(username, email, password, **extra_fields)


class School(models.Model):
    """A school, or the district above schools (OneRoster `org`, docs/roster.md). Classes belong
    to a school; a person belongs to one school or district, which scopes what a school
    administrator sees (accounts.selectors.schools_administered_by)."""

    class Kind(models.TextChoices):
        SCHOOL = "school", "School"
        DISTRICT = "district", "District"

    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.SCHOOL)
    parent = models.ForeignKey(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="children", help_text="Its district."
    )
    external_id = models.CharField(
        max_length=255, unique=True, null=True, blank=True, help_text="The OneRoster sourcedId, or the client's own id."
    )
    active = models.BooleanField(default=True)
    guardians_may_set_consent = models.BooleanField(
        default=False,
        help_text="Whether its students' guardians may turn consent to memory on or off (docs/privacy.md).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "id"]

    def __str__(self) -> str:
        return self.name


class User(AbstractUser):
    """A student, a teacher, a school administrator, a guardian, or a staff account. Staff accounts and
    teachers with is_staff use the Django admin.

    `is_active` false is a deactivated person (the roster dropped them, or the provisioning API):
    they cannot sign in, and nothing of their data is deleted."""

    class Role(models.TextChoices):
        STUDENT = "student", "Student"
        TEACHER = "teacher", "Teacher"
        # OneRoster `administrator`: the people and classes of their school (or district).
        ADMINISTRATOR = "administrator", "School administrator"
        # The admin's operators (`createsuperuser`): no class, no student data through the API.
        STAFF = "staff", "Staff"
        # OneRoster `guardian`/`parent`/`relative`: reads what a GuardianLink allows of a child.
        GUARDIAN = "guardian", "Guardian"

    class Language(models.TextChoices):
        ENGLISH = "en", "English"
        FRENCH = "fr", "Français"

    role = models.CharField(max_length=16, choices=Role.choices, default=Role.STUDENT)
    language = models.CharField(max_length=8, choices=Language.choices, default=Language.ENGLISH)
    is_demo = models.BooleanField(default=False, help_text="Created by seed_demo.")
    school = models.ForeignKey(
        School,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="people",
        help_text="The person's school or district; empty for staff.",
    )
    external_id = models.CharField(
        max_length=255, unique=True, null=True, blank=True, help_text="The OneRoster sourcedId, or the client's own id."
    )
    # Set only through privacy.consent (it archives the memories and records the change).
    memory_consent = models.BooleanField(
        default=True,
        help_text="A student's family consents to the tutor remembering them (docs/privacy.md#consent-to-memory).",
    )
    # Set when the person is deactivated (accounts.services.users_set_active), cleared when
    # restored: a school's retention policy erases a student that long after (docs/privacy.md).
    deactivated_at = models.DateTimeField(null=True, blank=True, help_text="When the person was deactivated.")

    objects: ClassVar[UserManager] = UserManager()

    @property
    def is_student(self) -> bool:
        return self.role == self.Role.STUDENT

    @property
    def is_teacher(self) -> bool:
        return self.role == self.Role.TEACHER

    @property
    def is_educator(self) -> bool:
        """A teacher or a school administrator: who sees students through classes or a school
        (accounts.selectors.students_visible_to says which)."""
        return self.role in (self.Role.TEACHER, self.Role.ADMINISTRATOR)


def _budget(help_text: str) -> models.DecimalField[Decimal | None, Decimal | None]:
    return models.DecimalField(
        max_digits=12, decimal_places=4, null=True, blank=True, validators=[MinValueValidator(0)], help_text=help_text
    )


class Classroom(models.Model):
    """A class of a school, taught by one or more teachers (TeacherEnrollment, one of them
    primary) to its students (Enrollment). An inactive class is seen by no teacher."""

    name = models.CharField(max_length=120)
    school = models.ForeignKey(School, on_delete=models.PROTECT, related_name="classrooms")
    external_id = models.CharField(
        max_length=255, unique=True, null=True, blank=True, help_text="The OneRoster sourcedId, or the client's own id."
    )
    active = models.BooleanField(default=True)
    teachers: models.ManyToManyField[User, TeacherEnrollment] = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="TeacherEnrollment", related_name="classrooms"
    )
    students: models.ManyToManyField[User, Enrollment] = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="Enrollment", related_name="enrolled_classrooms"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # Spend budgets (llm.costs): empty follows the BUDGET_* setting, 0 is none.
    budget_daily = _budget("USD per UTC day for the whole class; empty: BUDGET_CLASSROOM_DAILY; 0: none.")
    budget_monthly = _budget("USD per calendar month for the whole class; empty: BUDGET_CLASSROOM_MONTHLY; 0: none.")
    budget_student_daily = _budget("USD per UTC day for each student; empty: BUDGET_STUDENT_DAILY; 0: none.")
    budget_student_monthly = _budget("USD per calendar month for each student; empty: BUDGET_STUDENT_MONTHLY; 0: none.")

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(**{f"{field}__isnull": True}) | Q(**{f"{field}__gte": 0}),
                name=f"classroom_{field}_not_negative",
            )
            for field in ("budget_daily", "budget_monthly", "budget_student_daily", "budget_student_monthly")
        ]

    def __str__(self) -> str:
        return self.name


class Enrollment(models.Model):
    """A student in a class. An inactive one (the roster dropped it) is kept, and gives the
    class's teachers no access to the student."""

    classroom = models.ForeignKey(Classroom, on_delete=models.CASCADE, related_name="enrollments")
    student = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="enrollments")
    active = models.BooleanField(default=True)
    external_id = models.CharField(max_length=255, unique=True, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["classroom", "student"], name="enrollment_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.student_id} in {self.classroom_id}"


class TeacherEnrollment(models.Model):
    """A teacher (or an aide) of a class. Every active one sees the class's students; `primary`
    marks the teacher of record (several may be, or none)."""

    classroom = models.ForeignKey(Classroom, on_delete=models.CASCADE, related_name="teacher_enrollments")
    teacher = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="teacher_enrollments",
        limit_choices_to={"role": User.Role.TEACHER},
    )
    primary = models.BooleanField(default=False)
    active = models.BooleanField(default=True)
    external_id = models.CharField(max_length=255, unique=True, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["classroom", "teacher"], name="teacher_enrollment_unique"),
        ]

    def __str__(self) -> str:
        return f"teacher {self.teacher_id} of {self.classroom_id}"


class RosterImport(models.Model):
    """A OneRoster bundle uploaded through the API and imported by a worker
    (accounts.tasks.roster_import_run, docs/roster.md): who sent it, the schools it may touch
    (their administrator's school, or every school for staff: `school` empty), the file (in
    Django's default storage), and what the import did."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="roster_imports"
    )
    school = models.ForeignKey(
        School, on_delete=models.SET_NULL, null=True, blank=True, help_text="The importer's school; empty for staff."
    )
    file = models.FileField(upload_to="roster/%Y/%m/")
    dry_run = models.BooleanField(default=False)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    counts = models.JSONField(default=dict, blank=True)
    errors = models.JSONField(default=list, blank=True)
    errors_omitted = models.PositiveIntegerField(default=0)
    detail = models.TextField(blank=True, help_text="Why the bundle could not be used (status failed).")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"roster import {self.pk} ({self.status})"


class SignInCode(models.Model):
    """A sign-in card's code: signs `student` in (accounts.codes) until `expires_at`, unless it is
    revoked (a new card for the student in the class revokes the earlier ones), the student is
    deactivated, or the enrolment or the class is no longer active. Only the code's keyed hash
    is kept; the code itself is shown once, when it is made (docs/security.md)."""

    student = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sign_in_codes")
    classroom = models.ForeignKey(Classroom, on_delete=models.CASCADE, related_name="sign_in_codes")
    code_hash = models.CharField(max_length=64, unique=True, help_text="HMAC-SHA256 of the code, never the code.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    used_count = models.PositiveIntegerField(default=0)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["classroom", "student"], name="sign_in_code_class_student")]

    def __str__(self) -> str:
        return f"sign-in code of {self.student_id} in {self.classroom_id}"


class GuardianLink(models.Model):
    """A guardian's link to a child (a student): while it is active, the guardian reads what
    docs/privacy.md#guardians allows of the child (accounts.selectors.students_guarded_by). An
    ended link is kept, inactive, and gives nothing: removing it ends access at once."""

    guardian = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="guardian_links")
    student = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="guardian_of")
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    external_id = models.CharField(
        max_length=255, unique=True, null=True, blank=True, help_text="The roster's id of the link, if it has one."
    )

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [models.UniqueConstraint(fields=["guardian", "student"], name="guardian_link_unique")]

    def __str__(self) -> str:
        return f"guardian {self.guardian_id} of {self.student_id}"
