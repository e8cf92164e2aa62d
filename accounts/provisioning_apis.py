"""The provisioning API (docs/api.md#provisioning): an ed-tech team's own app makes and keeps
its people, classes and enrolments here, idempotently by `external_id`.

Views validate, check the requester's rights (accounts.provisioning_rights) and call one
service of accounts.provisioning; reads go through the scoping selectors
(`people_managed_by`, `classrooms_managed_by`, `schools_provisioned_by`).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.validators import UnicodeUsernameValidator
from django.db.models import QuerySet
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.apis import ClassroomListApi, ClassroomOutput, active_filter
from accounts.models import Classroom, Enrollment, School, TeacherEnrollment, User
from accounts.provisioning import (
    LanguageChange,
    UserChanges,
    classroom_provision,
    classroom_update,
    enrollment_add,
    enrollment_remove,
    user_provision,
    user_update,
)
from accounts.provisioning_rights import (
    class_manager_required,
    classroom_by_external_id,
    classroom_get_managed,
    enrollment_write_check,
    person_by_external_id,
    person_get_managed,
    person_resolve,
    person_write_check,
    provisioner_required,
    school_resolve,
)
from accounts.selectors import is_educator, is_staff_account, people_managed_by, schools_provisioned_by
from core.api import MAX_ID, Pagination, StrictBooleanField, StrictCharField, query_params
from core.errors import NotFound

PROVISIONED_ROLES = [
    (User.Role.STUDENT.value, User.Role.STUDENT.label),
    (User.Role.TEACHER.value, User.Role.TEACHER.label),
    (User.Role.ADMINISTRATOR.value, User.Role.ADMINISTRATOR.label),
    (User.Role.GUARDIAN.value, User.Role.GUARDIAN.label),
]
ENROLLED_ROLES = PROVISIONED_ROLES[:2]
ACTIVE_HELP = "true (default): active ones only; all: deactivated ones too (staff and administrators)."


def _id_field(**kwargs: Any) -> serializers.IntegerField:
    return serializers.IntegerField(min_value=1, max_value=MAX_ID, **kwargs)


def _name_field(**kwargs: Any) -> StrictCharField:
    return StrictCharField(max_length=150, **kwargs)


def _external_id_field(**kwargs: Any) -> StrictCharField:
    return StrictCharField(
        max_length=255, required=False, help_text="Your own id for it (a OneRoster sourcedId).", **kwargs
    )


def _sees_inactive(actor: Any) -> bool:
    return is_staff_account(actor) or (is_educator(actor) and actor.role == User.Role.ADMINISTRATOR)


class PersonOutput(serializers.ModelSerializer[User]):
    given_name = serializers.CharField(source="first_name")
    family_name = serializers.CharField(source="last_name")
    email = serializers.CharField(help_text="Empty when none was given.")
    active = serializers.BooleanField(source="is_active", help_text="false: deactivated (cannot sign in).")

    class Meta:
        model = User
        fields = [
            "id",
            "username",
            "given_name",
            "family_name",
            "email",
            "role",
            "language",
            "school",
            "external_id",
            "active",
            "memory_consent",
        ]
        read_only_fields = fields


class UserListCreateApi(APIView):
    """The people the requester manages (`accounts.selectors.people_managed_by`), and
    provisioning one: created (201), or the person with the posted `external_id` updated to the
    posted fields (200)."""

    pagination_class = Pagination
    language_change: LanguageChange | None = None

    class Filter(serializers.Serializer[None]):
        role = serializers.ChoiceField(choices=PROVISIONED_ROLES, required=False)
        school = _id_field(required=False)
        external_id = StrictCharField(max_length=255, required=False)
        active = active_filter(ACTIVE_HELP)

    class Input(serializers.Serializer[None]):
        role = serializers.ChoiceField(choices=PROVISIONED_ROLES)
        given_name = _name_field()
        family_name = _name_field()
        school = _id_field(help_text="A school id (GET /api/v1/schools/).")
        username = _name_field(
            required=False,
            validators=[UnicodeUsernameValidator()],
            help_text="Generated from the names when absent (given.family, then given.family2...).",
        )
        email = serializers.EmailField(required=False, allow_blank=True, max_length=254)
        external_id = _external_id_field()
        language = serializers.ChoiceField(choices=User.Language.choices, required=False)

    @extend_schema(
        summary="List the people I manage",
        operation_id="users_list",
        parameters=[Filter],
        responses=PersonOutput(many=True),
    )
    def get(self, request: Request) -> Response:
        provisioner_required(request.user)
        data = self.Filter(data=query_params(request))
        data.is_valid(raise_exception=True)
        filters = data.validated_data
        people = people_managed_by(request.user)
        if filters["active"] != "all" or not _sees_inactive(request.user):
            people = people.filter(is_active=True)
        for key in ("role", "external_id"):
            if key in filters:
                people = people.filter(**{key: filters[key]})
        if "school" in filters:
            people = people.filter(school_id=filters["school"])
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(people.order_by("last_name", "first_name", "id"), request, view=self)
        return paginator.get_paginated_response(PersonOutput(page, many=True).data)

    @extend_schema(
        summary="Provision a person",
        operation_id="users_create",
        request=Input,
        responses={200: PersonOutput, 201: PersonOutput},
    )
    def post(self, request: Request) -> Response:
        actor = request.user
        provisioner_required(actor)
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        fields = data.validated_data
        existing = person_by_external_id(actor=actor, external_id=fields.get("external_id"))
        school = school_resolve(actor=actor, school_id=fields["school"])
        person_write_check(actor=actor, person=existing, changes={"role": fields["role"], "school": school})
        person, created = user_provision(
            role=fields["role"],
            given_name=fields["given_name"],
            family_name=fields["family_name"],
            school=school,
            username=fields.get("username"),
            email=fields.get("email"),
            external_id=fields.get("external_id"),
            language=fields.get("language"),
            language_change=self.language_change,
        )
        return Response(PersonOutput(person).data, status=201 if created else 200)


class UserDetailApi(APIView):
    """One person the requester manages; PATCH changes them (`active` false deactivates)."""

    language_change: LanguageChange | None = None

    class Input(serializers.Serializer[None]):
        given_name = _name_field(required=False)
        family_name = _name_field(required=False)
        username = _name_field(required=False, validators=[UnicodeUsernameValidator()])
        email = serializers.EmailField(required=False, allow_blank=True, max_length=254)
        external_id = _external_id_field(allow_null=True)
        language = serializers.ChoiceField(choices=User.Language.choices, required=False)
        school = _id_field(required=False)
        role = serializers.ChoiceField(choices=PROVISIONED_ROLES, required=False)
        active = StrictBooleanField(
            required=False,
            help_text="false: deactivate (cannot sign in, every token and session revoked, nothing deleted); "
            "true: restore.",
        )

    @extend_schema(summary="Get a person", operation_id="users_retrieve", responses=PersonOutput)
    def get(self, request: Request, user_id: int) -> Response:
        return Response(PersonOutput(person_get_managed(actor=request.user, person_id=user_id)).data)

    @extend_schema(
        summary="Change a person", operation_id="users_partial_update", request=Input, responses=PersonOutput
    )
    def patch(self, request: Request, user_id: int) -> Response:
        actor = request.user
        person = person_get_managed(actor=actor, person_id=user_id)
        data = self.Input(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        renamed = {"given_name": "first_name", "family_name": "last_name"}
        changes: dict[str, Any] = {renamed.get(str(key), str(key)): value for key, value in fields.items()}
        if "school" in changes:
            changes["school"] = school_resolve(actor=actor, school_id=changes["school"])
        person_write_check(actor=actor, person=person, changes=changes)
        typed: UserChanges = changes  # type: ignore[assignment]
        return Response(
            PersonOutput(user_update(person=person, changes=typed, language_change=self.language_change)).data
        )


class SchoolOutput(serializers.ModelSerializer[School]):
    class Meta:
        model = School
        fields = ["id", "name", "kind", "parent", "external_id", "active"]
        read_only_fields = fields


class SchoolListApi(APIView):
    """The schools the requester may put people in: those they administer (staff: all), or a
    teacher's own school."""

    pagination_class = Pagination

    @extend_schema(summary="List my schools", operation_id="schools_list", responses=SchoolOutput(many=True))
    def get(self, request: Request) -> Response:
        provisioner_required(request.user)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(schools_provisioned_by(request.user), request, view=self)
        return paginator.get_paginated_response(SchoolOutput(page, many=True).data)


class ClassroomListCreateApi(ClassroomListApi):
    """GET: the classes the requester sees (ClassroomListApi). POST (staff, school
    administrators): a class created (201), or the one with the posted `external_id` renamed and
    moved to the posted school (200)."""

    class Input(serializers.Serializer[None]):
        name = StrictCharField(max_length=120)
        school = _id_field(help_text="A school id (GET /api/v1/schools/).")
        external_id = _external_id_field()

    @extend_schema(
        summary="Provision a class",
        operation_id="classrooms_create",
        request=Input,
        responses={200: ClassroomOutput, 201: ClassroomOutput},
    )
    def post(self, request: Request) -> Response:
        actor = request.user
        class_manager_required(actor)
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        fields = data.validated_data
        classroom_by_external_id(actor=actor, external_id=fields.get("external_id"))
        school = school_resolve(actor=actor, school_id=fields["school"])
        classroom, created = classroom_provision(
            name=fields["name"], school=school, external_id=fields.get("external_id")
        )
        return Response(ClassroomOutput(classroom).data, status=201 if created else 200)


class ClassroomDetailApi(APIView):
    """One class the requester manages; PATCH (staff, school administrators) renames it,
    deactivates or restores it (`active`), or sets its `external_id`."""

    class Input(serializers.Serializer[None]):
        name = StrictCharField(max_length=120, required=False)
        external_id = _external_id_field(allow_null=True)
        active = StrictBooleanField(required=False, help_text="false: no teacher sees the class; its rows stay.")

    @extend_schema(summary="Get a class", operation_id="classrooms_retrieve", responses=ClassroomOutput)
    def get(self, request: Request, classroom_id: int) -> Response:
        return Response(ClassroomOutput(classroom_get_managed(actor=request.user, classroom_id=classroom_id)).data)

    @extend_schema(
        summary="Change a class", operation_id="classrooms_partial_update", request=Input, responses=ClassroomOutput
    )
    def patch(self, request: Request, classroom_id: int) -> Response:
        classroom = classroom_get_managed(actor=request.user, classroom_id=classroom_id)
        class_manager_required(request.user)
        data = self.Input(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        return Response(ClassroomOutput(classroom_update(classroom=classroom, changes=data.validated_data)).data)


class EnrollmentOutput(serializers.Serializer[dict[str, Any]]):
    user = serializers.IntegerField()
    username = serializers.CharField()
    given_name = serializers.CharField()
    family_name = serializers.CharField()
    role = serializers.ChoiceField(choices=ENROLLED_ROLES)
    primary = serializers.BooleanField(help_text="A teacher of record (always false for a student).")
    active = serializers.BooleanField(help_text="false: the enrolment ended; its row and the student's data stay.")
    person_active = serializers.BooleanField(help_text="false: the person is deactivated.")
    created_at = serializers.DateTimeField()


def _enrollment_row(row: Enrollment | TeacherEnrollment) -> dict[str, Any]:
    person = row.student if isinstance(row, Enrollment) else row.teacher
    return {
        "user": person.pk,
        "username": person.username,
        "given_name": person.first_name,
        "family_name": person.last_name,
        "role": User.Role.STUDENT if isinstance(row, Enrollment) else User.Role.TEACHER,
        "primary": isinstance(row, TeacherEnrollment) and row.primary,
        "active": row.active,
        "person_active": person.is_active,
        "created_at": row.created_at,
    }


def _enrollments(classroom: Classroom, *, inactive: bool) -> list[Enrollment | TeacherEnrollment]:
    teachers: QuerySet[TeacherEnrollment] = classroom.teacher_enrollments.select_related("teacher")
    students: QuerySet[Enrollment] = classroom.enrollments.select_related("student")
    if not inactive:
        teachers = teachers.filter(active=True, teacher__is_active=True)
        students = students.filter(active=True, student__is_active=True)
    rows: list[Enrollment | TeacherEnrollment] = [
        *teachers.order_by("-primary", "teacher__last_name", "teacher__first_name", "pk"),
        *students.order_by("student__last_name", "student__first_name", "pk"),
    ]
    return rows


class EnrollmentListCreateApi(APIView):
    """A class's teachers then students; POST enrols someone (201), or makes their enrolment
    active again and sets a teacher's `primary` (200)."""

    pagination_class = Pagination

    class Filter(serializers.Serializer[None]):
        active = active_filter(ACTIVE_HELP)

    class Input(serializers.Serializer[None]):
        user = _id_field(help_text="The person's id (GET /api/v1/users/).")
        role = serializers.ChoiceField(choices=ENROLLED_ROLES)
        primary = StrictBooleanField(required=False, help_text="For a teacher: the teacher of record.")

    @extend_schema(
        summary="List a class's enrolments",
        operation_id="classrooms_enrollments_list",
        parameters=[Filter],
        responses=EnrollmentOutput(many=True),
    )
    def get(self, request: Request, classroom_id: int) -> Response:
        classroom = classroom_get_managed(actor=request.user, classroom_id=classroom_id)
        data = self.Filter(data=query_params(request))
        data.is_valid(raise_exception=True)
        inactive = data.validated_data["active"] == "all" and _sees_inactive(request.user)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(_enrollments(classroom, inactive=inactive), request, view=self)
        return paginator.get_paginated_response([EnrollmentOutput(_enrollment_row(row)).data for row in page or []])

    @extend_schema(
        summary="Enrol someone in a class",
        operation_id="classrooms_enrollments_create",
        request=Input,
        responses={200: EnrollmentOutput, 201: EnrollmentOutput},
    )
    def post(self, request: Request, classroom_id: int) -> Response:
        actor = request.user
        classroom = classroom_get_managed(actor=actor, classroom_id=classroom_id)
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        fields = data.validated_data
        enrollment_write_check(actor=actor, role=fields["role"])
        person = person_resolve(actor=actor, person_id=fields["user"])
        row, created = enrollment_add(
            classroom=classroom, person=person, role=fields["role"], primary=fields.get("primary")
        )
        return Response(EnrollmentOutput(_enrollment_row(row)).data, status=201 if created else 200)


class EnrollmentDetailApi(APIView):
    @extend_schema(
        summary="End someone's enrolment in a class",
        description="The enrolment is kept, inactive: the student's data stays and the class's teachers "
        "lose access to them. Ending one that has ended changes nothing (204).",
        operation_id="classrooms_enrollments_destroy",
        responses={204: None},
    )
    def delete(self, request: Request, classroom_id: int, user_id: int) -> Response:
        actor = request.user
        classroom = classroom_get_managed(actor=actor, classroom_id=classroom_id)
        person = person_get_managed(actor=actor, person_id=user_id)
        enrolled = (
            Enrollment.objects.filter(classroom=classroom, student=person).exists()
            or TeacherEnrollment.objects.filter(classroom=classroom, teacher=person).exists()
        )
        if not enrolled:
            raise NotFound(_("Enrolment not found."))
        enrollment_write_check(actor=actor, role=person.role)
        enrollment_remove(classroom=classroom, person=person)
        return Response(status=204)
