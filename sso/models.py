"""A school's OpenID Connect providers (Google Workspace, Microsoft Entra...) and the one-time
codes a native app exchanges for its API token (docs/sso.md)."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class IdentityProvider(models.Model):
    """An OpenID Connect provider the people of a school (a district's: of its schools too) sign
    in with. Its endpoints come from discovery at `{issuer}/.well-known/openid-configuration`.
    Signing in finds the person by `external_id_claim` (their `User.external_id`), else by
    `email_claim` when the provider says the address is verified; it never creates anyone."""

    school = models.ForeignKey("accounts.School", on_delete=models.CASCADE, related_name="identity_providers")
    name = models.CharField(max_length=100, help_text="Shown on the sign-in button.")
    issuer = models.URLField(max_length=500, help_text="The issuer URL, as the provider's ID tokens name it.")
    client_id = models.CharField(max_length=255)
    client_secret = models.CharField(max_length=500)
    external_id_claim = models.CharField(
        max_length=100, default="sub", help_text="The claim that holds a person's external id (Entra: oid)."
    )
    email_claim = models.CharField(max_length=100, default="email")
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["school_id", "name", "id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.issuer})"


class AppSignInCode(models.Model):
    """A one-time code the sign-in gives a native app, which exchanges it once, with the PKCE
    verifier of `code_challenge`, for the person's API token. Only its HMAC is stored."""

    code_hash = models.CharField(max_length=64, unique=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    provider = models.ForeignKey(IdentityProvider, on_delete=models.CASCADE, related_name="+")
    code_challenge = models.CharField(max_length=128, help_text="BASE64URL(SHA256(code_verifier)), RFC 7636 S256.")
    expires_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["expires_at"], name="sso_app_code_expiry")]

    def __str__(self) -> str:
        return f"app sign-in code {self.pk} for user {self.user_id}"
