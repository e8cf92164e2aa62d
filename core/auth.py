"""Authentication for the API: a token (mobile, scripts) or a Django session (the web).

DRF authenticates inside the view, after Django's middleware has run, so these classes also
switch the request to the user's own language once the user is known (before that,
Accept-Language chose it): every message of the answer is then in the user's language.
A session-authenticated write without a valid CSRF token is a 403 with the code `csrf_failed`.
A token is looked up with one statement written once per process and bound on the server
(`TokenAuthentication`).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection
from django.utils import translation
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from core.db import server_cursor


class CsrfFailed(exceptions.PermissionDenied):
    default_code = "csrf_failed"
    default_detail = _("CSRF check failed: send the csrftoken cookie's value in the X-CSRFToken header.")


def _use_language(result: Any) -> Any:
    if result is not None:
        language = getattr(result[0], "language", "")
        if language:
            translation.activate(language)
    return result


@cache
def _token_user_sql(token_model: Any, user_model: Any) -> tuple[str, tuple[str, ...]]:
    """The token's user, by the token's key (the one parameter), and the attnames of its columns
    in order; the names come from the models."""
    token, user, quote = token_model._meta, user_model._meta, connection.ops.quote_name
    fields = user.concrete_fields
    columns = ", ".join(f"u.{quote(f.column)}" for f in fields)
    sql = (
        f"SELECT {columns} FROM {quote(user.db_table)} u JOIN {quote(token.db_table)} t "  # noqa: S608
        f"ON t.{quote(token.get_field('user').column)} = u.{quote(user.pk.column)} "
        f"WHERE t.{quote(token.get_field('key').column)} = %s"
    )
    return sql, tuple(f.attname for f in fields)


class TokenAuthentication(authentication.TokenAuthentication):
    def authenticate(self, request: Request) -> Any:
        return _use_language(super().authenticate(request))

    def authenticate_credentials(self, key: str) -> tuple[Any, Any]:
        """DRF's, with the same answers, in a statement written once per process and bound on
        the server (core.db.server_cursor): the ORM compiling the token's `select_related` query
        cost more than the database answering it (bench/README.md, `middleware.py`). The
        token's other fields (`created`) are loaded when read."""
        token_model: Any = self.get_model()
        user_model = get_user_model()
        sql, attnames = _token_user_sql(token_model, user_model)
        with server_cursor() as cursor:
            cursor.execute(sql, [key])
            row = cursor.fetchone()
        if row is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        user = user_model.from_db(connection.alias, attnames, row)
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        token = token_model.from_db(user._state.db, ["key", "user_id"], [key, user.pk])
        token.user = user
        return user, token


class SessionAuthentication(authentication.SessionAuthentication):
    def authenticate(self, request: Request) -> Any:
        return _use_language(super().authenticate(request))

    def enforce_csrf(self, request: Request) -> None:
        try:
            super().enforce_csrf(request)
        except exceptions.PermissionDenied as exc:
            raise CsrfFailed(detail=CsrfFailed.default_detail) from exc
