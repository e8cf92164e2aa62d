"""The student card's API (docs/card.md): read and edit a card, its change log, and a teacher's
decision on a proposed change. Every view validates, calls one function of memory.card and
serialises what it returns."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_view
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit.services import Kind, Surface, access_record, access_record_rows
from core.api import BODY_RULES, Pagination, StrictCharField
from memory import card as cards
from memory import card_selectors
from memory.apis import MemoryWriteThrottled
from memory.models import AIMemory, CardChange, StudentCard

FIELDS_TEXT = "goals, interests, level, register"


# {"id", "username"} of a user, or null: inline, as OpenAPI 3.0 cannot make a referenced
# component nullable.
USER_REF = {
    "type": "object",
    "nullable": True,
    "properties": {"id": {"type": "integer"}, "username": {"type": "string"}},
    "required": ["id", "username"],
}


def user_ref(user: Any) -> dict[str, Any] | None:
    return None if user is None else {"id": user.pk, "username": user.username}


class CardChangeOutput(serializers.ModelSerializer[CardChange]):
    """One change of the log. For the student's own log (context `student_view`), the reason
    is left out ("") and so is a fact made teacher-only since (`memory` null)."""

    field = serializers.ChoiceField(choices=CardChange.FIELD_CHOICES)
    actor = serializers.SerializerMethodField(help_text="Who made it; null for extraction.")
    decided_by = serializers.SerializerMethodField(help_text="Who decided it; null if pending or automatic.")
    confidence = serializers.FloatField(allow_null=True, help_text="The model's, for a proposal; else null.")
    memory = serializers.IntegerField(source="memory_id", allow_null=True, help_text="The fact that proposed it.")

    class Meta:
        model = CardChange
        fields = [
            "id",
            "field",
            "op",
            "value",
            "status",
            "source",
            "actor",
            "confidence",
            "memory",
            "reason",
            "created_at",
            "decided_by",
            "decided_at",
        ]
        read_only_fields = fields

    @extend_schema_field(USER_REF)
    def get_actor(self, change: CardChange) -> dict[str, Any] | None:
        return user_ref(change.actor)

    @extend_schema_field(USER_REF)
    def get_decided_by(self, change: CardChange) -> dict[str, Any] | None:
        return user_ref(change.decided_by)

    def to_representation(self, instance: CardChange) -> dict[str, Any]:
        data = super().to_representation(instance)
        if self.context.get("student_view"):
            data["reason"] = ""
            if instance.memory is not None and instance.memory.visibility != AIMemory.Visibility.STUDENT:
                data["memory"] = None
        return data


class StudentCardOutput(serializers.Serializer[None]):
    student = serializers.IntegerField()
    goals = serializers.ListField(child=serializers.CharField())
    accommodations = serializers.ListField(child=serializers.CharField())
    interests = serializers.ListField(child=serializers.CharField())
    level = serializers.CharField(allow_blank=True)
    register = serializers.CharField(allow_blank=True)
    student_editable = serializers.ListField(
        child=serializers.ChoiceField(choices=StudentCard.STUDENT_EDITABLE_CHOICES),
        help_text="The fields the student may edit themself.",
    )
    token_count = serializers.IntegerField(help_text="The card's tokens as the tutor's prompt shows it.")
    token_limit = serializers.IntegerField()
    updated_at = serializers.DateTimeField(allow_null=True, help_text="null: never written.")
    pending = CardChangeOutput(many=True, help_text="Proposals waiting for a teacher; [] for the student.")


def card_output(card: StudentCard, pending: list[CardChange]) -> dict[str, Any]:
    return StudentCardOutput(
        {  # type: ignore[arg-type]
            "student": card.student_id,
            "goals": card.goals,
            "accommodations": card.accommodations,
            "interests": card.interests,
            "level": card.level,
            "register": card.register,
            "student_editable": card.student_editable,
            "token_count": card.token_count,
            "token_limit": settings.MEMORY_CARD_MAX_TOKENS,
            "updated_at": card.updated_at if card.pk else None,
            "pending": pending,
        }
    ).data


def _values() -> serializers.ListField:
    return serializers.ListField(
        child=StrictCharField(max_length=cards.VALUE_MAX_CHARS),
        max_length=cards.LIST_MAX_ITEMS,
        required=False,
        help_text="The whole list (it replaces the card's): short one-line values.",
    )


class StudentCardApi(MemoryWriteThrottled):
    class Input(serializers.Serializer[None]):
        goals = _values()
        accommodations = _values()
        interests = _values()
        level = StrictCharField(max_length=cards.VALUE_MAX_CHARS, allow_blank=True, required=False)
        register = StrictCharField(max_length=cards.VALUE_MAX_CHARS, allow_blank=True, required=False)
        student_editable = serializers.ListField(
            child=serializers.ChoiceField(choices=StudentCard.STUDENT_EDITABLE_CHOICES),
            max_length=len(StudentCard.STUDENT_EDITABLE_CHOICES),
            required=False,
            help_text="Teachers only: the fields the student may edit (never accommodations).",
        )

    @extend_schema(summary="Get a student's card", responses=StudentCardOutput)
    def get(self, request: Request, student_id: int) -> Response:
        """The student's card (an empty one if none was written), with the proposals waiting for
        a teacher (teachers only). The student themself and their teachers; others 404."""
        card, pending = card_selectors.card_get(user=request.user, student_id=student_id)
        access_record(actor=request.user, kind=Kind.CARD, surface=Surface.API, reads=[(card.student_id, None)])
        return Response(card_output(card, pending))

    @extend_schema(summary="Edit a student's card", request=Input, responses=StudentCardOutput)
    def patch(self, request: Request, student_id: int) -> Response:
        """Edit the card: any of its fields, a list replacing the list. Teachers edit every field;
        the student only those in `student_editable` (403 `card_field_not_editable`), never
        accommodations. Each change is logged. A card past its token limit is a 400
        `card_too_long` with the count and the limit."""
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        if not data.validated_data:
            raise serializers.ValidationError({"goals": [_("Give at least one field of the card.")]})
        card = cards.card_update(user=request.user, student_id=student_id, data=data.validated_data)
        _card, pending = card_selectors.card_get(user=request.user, student_id=student_id)
        return Response(card_output(card, pending))


class CardChangeListApi(APIView):
    pagination_class = Pagination

    @extend_schema(summary="A student card's changes", responses=CardChangeOutput(many=True))
    def get(self, request: Request, student_id: int) -> Response:
        """The card's change log, newest first: every change and proposal for the student's
        teachers; the changes applied to their card for the student."""
        changes = card_selectors.card_changes(user=request.user, student_id=student_id)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(changes, request, view=self) or []
        access_record_rows(actor=request.user, kind=Kind.CARD, surface=Surface.API, rows=page)
        context = {"student_view": request.user.pk == student_id}
        return paginator.get_paginated_response(CardChangeOutput(page, many=True, context=context).data)


class CardChangeDecideApi(MemoryWriteThrottled):
    accept = True

    @extend_schema(request=None, responses=CardChangeOutput)
    def post(self, request: Request, change_id: int) -> Response:
        """A teacher of the student accepts (applied to the card; 400 `card_too_long` if it would
        not fit) or rejects a pending change. A decided change is a 409 `change_decided`; another
        class's, or a student's request, a 404."""
        change = cards.card_change_decide(user=request.user, change_id=change_id, accept=self.accept)
        return Response(CardChangeOutput(change).data)


@extend_schema_view(post=extend_schema(summary="Accept a proposed card change"))
class CardChangeAcceptApi(CardChangeDecideApi):
    accept = True


@extend_schema_view(post=extend_schema(summary="Reject a proposed card change"))
class CardChangeRejectApi(CardChangeDecideApi):
    accept = False


# PATCH /students/{id}/card/: at least one field (`{}` is a 400), said in the schema.
BODY_RULES["PatchedStudentCardInputRequest"] = {"minProperties": 1}
