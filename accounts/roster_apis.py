"""Roster imports: upload a OneRoster CSV bundle (imported by a worker) and read what it did
(docs/roster.md)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import RosterImport
from accounts.roster.imports import roster_import_start
from accounts.selectors import roster_import_get_visible
from core.api import query_params
from core.schema import ErrorEnvelope


class RejectedRow(serializers.Serializer[None]):
    file = serializers.CharField()
    line = serializers.IntegerField()
    sourced_id = serializers.CharField(allow_blank=True)
    reason = serializers.CharField()


class RosterImportOutput(serializers.ModelSerializer[RosterImport]):
    counts = serializers.DictField(
        child=serializers.DictField(child=serializers.IntegerField()),
        help_text="Per entity (orgs, users, classes, enrollments): created, updated, deactivated, unchanged, "
        "rejected. Empty until the import is done.",
    )
    # DRF takes a declared field out of the class, so it does not hide Serializer.errors.
    errors = RejectedRow(many=True, help_text="The rejected rows, the first 1,000 (errors_omitted counts the rest).")  # type: ignore[assignment]

    class Meta:
        model = RosterImport
        fields = [
            "id",
            "status",
            "dry_run",
            "counts",
            "errors",
            "errors_omitted",
            "detail",
            "created_at",
            "finished_at",
        ]
        read_only_fields = fields


class RosterImportListApi(APIView):
    """POST /roster/imports/: upload a bundle; a worker imports it."""

    parser_classes = [MultiPartParser, FormParser]

    class Input(serializers.Serializer[None]):
        file = serializers.FileField(help_text="A OneRoster 1.1 or 1.2 CSV bundle, zipped, at most ROSTER_MAX_BYTES.")

    class Query(serializers.Serializer[None]):
        dry_run = serializers.BooleanField(required=False, default=False, help_text="Check and count, write nothing.")

    class Output(serializers.Serializer[None]):
        id = serializers.IntegerField()
        status = serializers.ChoiceField(choices=RosterImport.Status.choices)

    @extend_schema(
        summary="Import a OneRoster bundle",
        parameters=[Query],
        request={"multipart/form-data": Input},
        responses={
            202: Output,
            400: OpenApiResponse(ErrorEnvelope, description="No `file`, or `file_too_large` (over ROSTER_MAX_BYTES)."),
            403: OpenApiResponse(ErrorEnvelope, description="Neither staff nor a school administrator."),
            415: OpenApiResponse(ErrorEnvelope, description="The body is not multipart/form-data."),
        },
    )
    def post(self, request: Request) -> Response:
        """Queue the import of a bundle, by staff (every school) or a school administrator (their
        schools only: other rows are rejected). Follow it at /roster/imports/{id}/."""
        query = self.Query(data=query_params(request))
        query.is_valid(raise_exception=True)
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        record = roster_import_start(
            user=request.user, upload=data.validated_data["file"], dry_run=query.validated_data["dry_run"]
        )
        return Response({"id": record.pk, "status": record.status}, status=status.HTTP_202_ACCEPTED)


class RosterImportDetailApi(APIView):
    @extend_schema(
        summary="A roster import's status and report",
        responses={200: RosterImportOutput, 404: OpenApiResponse(ErrorEnvelope, description="Not one of yours.")},
    )
    def get(self, request: Request, import_id: Any) -> Response:
        """The import's status (queued, running, done, failed: `detail` says why) and, once done,
        its counts and rejected rows. Staff read every import, an administrator their own."""
        record = roster_import_get_visible(user=request.user, import_id=import_id)
        return Response(RosterImportOutput(record).data)
