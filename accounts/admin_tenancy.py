"""Tenancy for the Django admin: every admin of the project shows a user what the API would.

Superusers and staff-role accounts (`createsuperuser`, the admin's operators) see every row. Any
other user of the admin (a teacher given `is_staff`, for one) sees only the rows of the students
`accounts.selectors.students_visible_to` returns for them, with the API's visibility rules (each
admin's `tenant_queryset`, built on its app's selectors). The scope is applied in
`get_queryset`, which Django uses for the changelist, its search and filters, the actions (the
selected rows are taken from it, so a posted id outside it is ignored), the change, history,
delete and password views, the raw-id lookup popups and the autocomplete endpoint. A row outside
the scope is a 404 on every URL that names it, as for a row that does not exist. The choices of
every foreign key and many-to-many field on a form come from the related model's admin, scoped
the same way, so a form that names a row outside the scope is refused.

It fails closed: an admin that does not say how to scope its rows shows them to no scoped user,
and a related model with no scoped admin offers no choices.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import admin
from django.contrib.admin import widgets
from django.contrib.admin.exceptions import NotRegistered
from django.contrib.auth.models import Group, Permission
from django.core.exceptions import ValidationError
from django.db.models import Model, QuerySet
from django.db.models.fields.related import RelatedField
from django.http import Http404, HttpRequest, HttpResponse
from django.utils.translation import gettext as _

from accounts.models import User
from audit.services import Surface, access_record

if TYPE_CHECKING:
    _Base = admin.options.BaseModelAdmin[Any]
else:
    _Base = object

# Rows that belong to no student: choices from them are not narrowed (the user admin's groups
# and permissions, which a scoped user may not edit anyway: TutorUserAdmin).
NO_TENANT_DATA: tuple[type[Model], ...] = (Group, Permission)


def admin_sees_all(user: Any) -> bool:
    """Whether `user` sees every row in the admin: an active superuser or staff-role account.
    Anyone else is scoped like the API."""
    return bool(
        getattr(user, "is_authenticated", False)
        and user.is_active
        and (user.is_superuser or getattr(user, "role", None) == User.Role.STAFF)
    )


class TenantScoped(_Base):
    """The one scoping mixin of the admin, for a ModelAdmin or an inline (put it first).

    A subclass says in `tenant_queryset` which of its rows a scoped user may see; by default none.
    """

    # The access log (audit): the kind of a student's record this admin's rows are, and the
    # student of a row (`access_student`); None: rows that are no student's records.
    access_kind: str | None = None

    def tenant_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        """The rows of `queryset` that `request.user` (not one who sees all) may see."""
        return queryset.none()

    def access_student(self, obj: Any) -> int | None:
        """The id of the student whose record `obj` is (its `student_id` by default)."""
        return getattr(obj, "student_id", None)

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        """Django's change (or view) page; showing a student's row appends to their access log."""
        response = super().change_view(request, object_id, form_url, extra_context)  # type: ignore[misc]
        shown = getattr(response, "context_data", None) or {}
        obj = shown.get("original")
        if self.access_kind and request.method == "GET" and response.status_code == 200 and obj is not None:
            access_record(
                actor=request.user,
                kind=self.access_kind,
                surface=Surface.ADMIN,
                reads=[(self.access_student(obj), obj.pk)],
            )
        return response

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        queryset = super().get_queryset(request)
        if admin_sees_all(request.user):
            return queryset
        return self.tenant_queryset(request, queryset)

    def get_object(self, request: HttpRequest, object_id: str, from_field: str | None = None) -> Any:
        """The row through the scoped queryset, or Http404: never None, so that a row outside the
        scope and a missing one are the same 404 on the change, history, delete and password
        views, before any permission check could tell them apart."""
        obj = super().get_object(request, object_id, from_field)  # type: ignore[misc]
        if obj is None:
            raise Http404(_("Not found."))
        return obj

    def tenant_choices(self, request: HttpRequest, db_field: RelatedField[Any, Any]) -> QuerySet[Any] | None:
        """The rows a scoped user may pick for `db_field` on a form, if this admin narrows them
        further than the related model's admin (None: as that admin shows them)."""
        return None

    def get_field_queryset(self, db: str | None, db_field: RelatedField[Any, Any], request: HttpRequest) -> Any:
        if admin_sees_all(request.user):
            return super().get_field_queryset(db, db_field, request)
        choices = self.tenant_choices(request, db_field)
        if choices is not None:
            return choices.using(db)
        model = db_field.remote_field.model
        if issubclass(model, NO_TENANT_DATA):
            return super().get_field_queryset(db, db_field, request)
        try:
            related = self.admin_site.get_model_admin(model)
        except NotRegistered:
            related = None
        if isinstance(related, TenantScoped):
            return related.get_queryset(request).using(db)
        return model._default_manager.none()

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if not admin_sees_all(request.user) and "widget" not in kwargs and db_field.name in self.raw_id_fields:
            queryset = kwargs.get("queryset")
            if queryset is None:
                queryset = self.get_field_queryset(kwargs.get("using"), db_field, request)
            if queryset is None:
                queryset = db_field.remote_field.model._default_manager.using(kwargs.get("using")).all()
            kwargs["queryset"] = queryset
            kwargs["widget"] = ScopedRawIdWidget(
                db_field.remote_field, self.admin_site, using=kwargs.get("using"), queryset=kwargs["queryset"]
            )
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class TenantScopedAdmin(TenantScoped, admin.ModelAdmin):
    """A ModelAdmin scoped like the API (TenantScoped)."""


class ReadOnlyWhenScoped(_Base):
    """For a ModelAdmin or an inline (before TenantScoped): a scoped user sees their rows and
    adds, changes and deletes none; whoever sees all keeps their permissions."""

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return admin_sees_all(request.user) and super().has_add_permission(request, *args)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return admin_sees_all(request.user) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return admin_sees_all(request.user) and super().has_delete_permission(request, obj)


class ScopedRawIdWidget(widgets.ForeignKeyRawIdWidget):
    """The raw-id input, which names its current value only if it is one of the field's choices:
    Django's widget reads the related row unscoped, so a form posted back with the id of a row
    outside the scope would show that row's name."""

    def __init__(self, rel: Any, admin_site: Any, *, queryset: QuerySet[Any], **kwargs: Any) -> None:
        super().__init__(rel, admin_site, **kwargs)
        self.queryset = queryset

    def label_and_url_for_value(self, value: Any) -> tuple[str, str]:
        key = self.rel.get_related_field().name
        try:
            if not self.queryset.filter(**{key: value}).exists():
                return "", ""
        except (ValueError, ValidationError):
            return "", ""
        return super().label_and_url_for_value(value)
