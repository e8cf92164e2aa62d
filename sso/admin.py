"""Identity providers in the Django admin, scoped like the API (accounts.admin_tenancy): a
school administrator given the admin sees and changes their schools' providers; the client
secret is written, never shown."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from accounts.admin_tenancy import TenantScopedAdmin
from sso.discovery import issuer_refusal
from sso.models import IdentityProvider
from sso.selectors import providers_visible_to


class IdentityProviderForm(forms.ModelForm):
    issuer = forms.URLField(max_length=500, assume_scheme="https", help_text=IdentityProvider.issuer.field.help_text)
    client_secret = forms.CharField(
        required=False,
        widget=forms.PasswordInput(render_value=False),
        help_text="Written, never shown again; leave it empty to keep the current one.",
    )

    class Meta:
        model = IdentityProvider
        fields = [
            "school",
            "name",
            "issuer",
            "client_id",
            "client_secret",
            "external_id_claim",
            "email_claim",
            "active",
        ]

    def clean_issuer(self) -> str:
        issuer = str(self.cleaned_data["issuer"])
        refusal = issuer_refusal(issuer)
        if refusal:
            raise forms.ValidationError(f"This issuer cannot be used: {refusal}.")
        return issuer

    def clean_client_secret(self) -> str:
        secret = self.cleaned_data.get("client_secret") or ""
        if not secret and self.instance.pk is None:
            raise forms.ValidationError("A new provider needs its client secret.")
        return secret or self.instance.client_secret


@admin.register(IdentityProvider)
class IdentityProviderAdmin(TenantScopedAdmin):
    form = IdentityProviderForm
    list_display = ("name", "school", "issuer", "client_id", "active")
    list_filter = ("active",)
    search_fields = ("name", "issuer", "client_id")
    list_select_related = ("school",)
    raw_id_fields = ("school",)

    def tenant_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(pk__in=providers_visible_to(request.user).values("pk"))
