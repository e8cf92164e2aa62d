"""A student's export (streamed JSON) and legal erasure (docs/privacy.md)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.http import StreamingHttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import User
from audit.services import Kind, Surface, access_record
from core.api import Pagination, StrictBooleanField, StrictCharField
from core.schema import ErrorEnvelope
from privacy import consent, services
from privacy.access_log import AccessEntryOutput, access_log_get
from privacy.export import export_filename, export_student_get, student_export
from privacy.models import Erasure
from privacy.serializers import ConsentChangeOutput, ErasureOutput, ExportDocument

# Under ASGI each hop to the request's thread carries about this much of the document.
ASYNC_PIECE_BYTES = 64 * 1024


def _take(pieces: Iterator[bytes]) -> bytes:
    out: list[bytes] = []
    size = 0
    for piece in pieces:
        out.append(piece)
        size += len(piece)
        if size >= ASYNC_PIECE_BYTES:
            break
    return b"".join(out)


async def _served_async(pieces: Iterator[bytes]) -> AsyncIterator[bytes]:
    """The document for an ASGI server, which would otherwise read a synchronous iterator whole
    into memory before sending it. Each step runs on the request's own thread (thread
    sensitive), where the view's connection and its cursors live."""
    take = sync_to_async(_take, thread_sensitive=True)
    while chunk := await take(pieces):
        yield chunk


class StudentExportApi(APIView):
    @extend_schema(
        summary="Export a student's data",
        responses={
            (200, "application/json"): OpenApiResponse(
                ExportDocument,
                description=(
                    "The student's whole record as one JSON document (format `tutor-export/1`, "
                    "docs/privacy.md), streamed as an attachment. For their teacher, staff with "
                    "privacy.export_student, and the student themself (without teacher-only notes)."
                ),
            ),
            404: OpenApiResponse(ErrorEnvelope, description="No such student, or not one the requester may export."),
        },
    )
    def get(self, request: Request, student_id: int) -> StreamingHttpResponse:
        """Export a student's data: profile, conversations with messages and file metadata,
        memories with their provenance and supersession chain, reviews, learning, access log."""
        student, full = export_student_get(user=request.user, student_id=student_id)
        # Before the document is written: the export's own entry is in the log it holds.
        access_record(actor=request.user, kind=Kind.EXPORT, surface=Surface.EXPORT, reads=[(student.pk, None)])
        pieces = student_export(student=student, viewer=request.user, include_teacher_only=full)
        content = _served_async(pieces) if isinstance(request._request, ASGIRequest) else pieces
        response = StreamingHttpResponse(content, content_type="application/json")
        response["Content-Disposition"] = f'attachment; filename="{export_filename(student)}"'
        response["Cache-Control"] = "no-store"
        return response


class StudentEraseApi(APIView):
    class Input(serializers.Serializer[None]):
        confirm = serializers.CharField(max_length=150, help_text="The student's id or username, typed again.")
        reason = StrictCharField(
            max_length=services.REASON_MAX_CHARS,
            help_text="Why (a request's date and channel...). Kept in the audit record: do not name the student.",
        )

    @extend_schema(
        summary="Erase a student's data",
        request=Input,
        responses={
            200: OpenApiResponse(ErasureOutput, description="Erased: the audit record."),
            400: OpenApiResponse(
                ErrorEnvelope, description="`confirm` is not the student's id or username, or no reason."
            ),
            403: OpenApiResponse(ErrorEnvelope, description="Staff without the privacy.erase_student permission."),
            404: OpenApiResponse(
                ErrorEnvelope,
                description="No such student, or not one the requester may erase (not staff, or a teacher "
                "with admin access and a student outside their classes).",
            ),
        },
    )
    def post(self, request: Request, student_id: int) -> Response:
        """Legal erasure (staff with privacy.erase_student): deletes the student and everything
        about them in one transaction, anonymises their model usage, and keeps an audit record
        that names neither the student nor any content. Cannot be undone."""
        services.erasure_student_get(user=request.user, student_id=student_id)
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        assert isinstance(request.user, User)
        erasure = services.student_erase(
            student_id=student_id,
            confirm=data.validated_data["confirm"],
            reason=data.validated_data["reason"],
            erased_by=request.user,
            via=Erasure.Via.API,
        )
        return Response(ErasureOutput(erasure).data)


class ConsentOutput(serializers.Serializer[dict[str, object]]):
    student = serializers.IntegerField()
    memory_consent = serializers.BooleanField(help_text="false: the tutor keeps no memory of the student.")
    changes = ConsentChangeOutput(many=True, help_text="Every change, oldest first (append-only).")


def consent_output(student: User) -> dict[str, object]:
    return dict(
        ConsentOutput(
            {
                "student": student.pk,
                "memory_consent": student.memory_consent,
                "changes": consent.consent_changes(student=student),
            }
        ).data
    )


CONSENT_REFUSALS = {
    403: OpenApiResponse(
        ErrorEnvelope,
        description="A teacher of the student, or the student: not theirs to set; a guardian whose school "
        "does not let guardians set it (on a PUT).",
    ),
    404: OpenApiResponse(ErrorEnvelope, description="No such student, or not one the requester sees."),
}


class StudentConsentApi(APIView):
    """A student's consent to memory (docs/privacy.md#consent-to-memory): for an administrator of
    their school, and staff; their guardian reads it, and sets it where the school allows."""

    class Input(serializers.Serializer[None]):
        memory_consent = StrictBooleanField(help_text="false: withdrawn; the student's memories are archived.")
        reason = StrictCharField(
            max_length=consent.REASON_MAX_CHARS,
            help_text="Why (the family's form and its date...). Kept in the record.",
        )

    @extend_schema(summary="Get a student's consent to memory", responses={200: ConsentOutput, **CONSENT_REFUSALS})
    def get(self, request: Request, student_id: int) -> Response:
        """Whether the tutor may remember the student, and every change with who made it."""
        student = consent.consent_student_get(user=request.user, student_id=student_id)
        return Response(consent_output(student))

    @extend_schema(
        summary="Set a student's consent to memory",
        request=Input,
        responses={
            200: ConsentOutput,
            400: OpenApiResponse(ErrorEnvelope, description="No value or no reason."),
            **CONSENT_REFUSALS,
        },
    )
    def put(self, request: Request, student_id: int) -> Response:
        """Set it on or off, with a reason. Off archives every active memory of the student (never
        deletes one); on again starts from nothing new. The same value again changes nothing."""
        consent.consent_student_get(user=request.user, student_id=student_id, write=True)
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        student = consent.memory_consent_set(
            user=request.user,
            student_id=student_id,
            memory_consent=data.validated_data["memory_consent"],
            reason=data.validated_data["reason"],
        )
        return Response(consent_output(student))


class StudentAccessLogApi(APIView):
    pagination_class = Pagination

    @extend_schema(
        summary="A student's access log",
        responses={
            200: AccessEntryOutput(many=True),
            403: OpenApiResponse(
                ErrorEnvelope, description="The student's teacher, or the student: not theirs to read."
            ),
            404: OpenApiResponse(ErrorEnvelope, description="No such student, or not one the requester may see."),
        },
    )
    def get(self, request: Request, student_id: int) -> Response:
        """Who read the student's records, newest first (docs/privacy.md#access-log): for the
        school's administrators and staff."""
        entries = access_log_get(user=request.user, student_id=student_id)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(entries, request, view=self)
        return paginator.get_paginated_response(AccessEntryOutput(page, many=True).data)
