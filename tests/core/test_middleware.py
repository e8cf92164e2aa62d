"""Django's middleware under ASGI (core.middleware): the hooks that touch only the request and
the response run on the event loop; saving a session, storing messages and checking a form's CSRF
token still run in the request's thread, and do what Django's do."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from csp.middleware import CSPMiddleware
from django.contrib import messages
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware
from django.contrib.messages.storage import default_storage
from django.contrib.sessions.backends.base import SessionBase
from django.contrib.sessions.middleware import SessionMiddleware
from django.middleware import clickjacking, common, csrf, locale, security
from django.test import AsyncClient, RequestFactory
from rest_framework.authtoken.models import Token

from core import middleware
from core.metrics_views import ResponsesByRoute

# Every hook of the stack's middleware that runs for a request, by the class that defines it.
HOOKS = [
    (security.SecurityMiddleware, "process_request"),
    (security.SecurityMiddleware, "process_response"),
    (CSPMiddleware, "process_request"),
    (CSPMiddleware, "process_response"),
    (SessionMiddleware, "process_request"),
    (SessionMiddleware, "process_response"),
    (locale.LocaleMiddleware, "process_request"),
    (locale.LocaleMiddleware, "process_response"),
    (common.CommonMiddleware, "process_request"),
    (common.CommonMiddleware, "process_response"),
    (csrf.CsrfViewMiddleware, "process_request"),
    (csrf.CsrfViewMiddleware, "process_view"),
    (csrf.CsrfViewMiddleware, "process_response"),
    (AuthenticationMiddleware, "process_request"),
    (MessageMiddleware, "process_request"),
    (MessageMiddleware, "process_response"),
    (clickjacking.XFrameOptionsMiddleware, "process_response"),
    (ResponsesByRoute, "process_response"),
]


@pytest.fixture
def threads(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, set[int]]]:
    """{"Class.hook": the threads it ran on}, for every hook of HOOKS."""
    seen: dict[str, set[int]] = {}

    def recording(name: str, hook: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            seen.setdefault(name, set()).add(threading.get_ident())
            return hook(*args, **kwargs)

        return run

    for cls, hook in HOOKS:
        name = f"{cls.__name__}.{hook}"
        monkeypatch.setattr(cls, hook, recording(name, getattr(cls, hook)))
    yield seen


def asgi(client: AsyncClient, method: str, path: str, **kwargs: Any) -> Any:
    """A request through Django's ASGI handler. The synchronous view runs on this thread (the
    test's, in its transaction), the handler and the middleware on an event loop of their own."""
    return async_to_sync(getattr(client, method))(path, **kwargs)


def test_under_asgi_every_hook_of_a_token_request_runs_on_the_event_loop(school, threads):
    """`GET /me/` with a token: each middleware's hooks run on the event loop's thread, none in
    the view's, and the response has what they add (the policy, the frame and type options, the
    language)."""
    token, _ = Token.objects.get_or_create(user=school["alice"])
    resp = asgi(AsyncClient(), "get", "/api/v1/me/", headers={"Authorization": f"Token {token.key}"})
    assert resp.status_code == 200 and resp.json()["username"] == "alice"
    assert set(threads) == {f"{cls.__name__}.{hook}" for cls, hook in HOOKS}
    loop_threads = set().union(*threads.values())
    assert len(loop_threads) == 1 and threading.get_ident() not in loop_threads
    assert "frame-ancestors 'none'" in resp["Content-Security-Policy"]
    assert resp["X-Frame-Options"] == "DENY"
    assert resp["X-Content-Type-Options"] == "nosniff"
    assert resp["Content-Language"] == "en"


def test_under_asgi_a_session_sign_in_is_saved_in_the_thread_and_signs_the_user_in(school, threads):
    """The web's sign-in under ASGI: the session is saved (in the request's thread, where the
    database is used), its cookie set, and the next request is the user's, its session read and
    left unsaved on the event loop."""
    client = AsyncClient(enforce_csrf_checks=True)
    csrf_token = asgi(client, "get", "/api/v1/auth/csrf/").json()["csrf_token"]
    threads.clear()
    resp = asgi(
        client,
        "post",
        "/api/v1/auth/login/",
        data={"username": "alice", "password": "pw-alice"},
        content_type="application/json",
        headers={"X-CSRFToken": csrf_token},
    )
    assert resp.status_code == 200, resp.content
    assert client.cookies["sessionid"].value
    assert threads["SessionMiddleware.process_response"] == {threading.get_ident()}
    threads.clear()
    resp = asgi(client, "get", "/api/v1/me/")
    assert resp.status_code == 200 and resp.json()["username"] == "alice"
    assert threading.get_ident() not in threads["SessionMiddleware.process_response"]


def test_under_asgi_a_form_post_without_its_csrf_token_is_refused_in_the_thread(school, threads):
    """A form posted to a page that is not CSRF-exempt (the admin's sign-in) without the token
    is refused in the error envelope, the check made in the request's thread (it reads the body);
    a GET of the same page is accepted by the middleware on the event loop."""
    client = AsyncClient(enforce_csrf_checks=True)
    assert asgi(client, "get", "/admin/login/").status_code == 200
    # The middleware's check on the loop; the admin's own csrf_protect checks again in the view.
    assert threads["CsrfViewMiddleware.process_view"] - {threading.get_ident()}
    threads.clear()
    resp = asgi(client, "post", "/admin/login/", data={"username": "alice", "password": "pw-alice"})
    assert resp.status_code == 403
    assert resp.json()["error"]["code"] == "csrf_failed"
    assert threads["CsrfViewMiddleware.process_view"] == {threading.get_ident()}


def request_with_session_and_messages() -> Any:
    request = RequestFactory().get("/")
    request.session = SessionBase()
    request._messages = default_storage(request)  # type: ignore[attr-defined]
    return request


def test_storing_messages_or_saving_a_session_is_left_to_the_thread(settings):
    """The response's hook goes to the thread when it would write: messages read or added (they
    are stored, in the session too), a modified session (saved); otherwise it stays on the loop."""
    response = object()
    store = middleware.MessageMiddleware(lambda request: response)
    request = request_with_session_and_messages()
    assert not store.response_needs_thread(request, response)
    messages.info(request, "Saved.")
    assert store.response_needs_thread(request, response)
    read = request_with_session_and_messages()
    list(read._messages)
    assert store.response_needs_thread(read, response)

    sessions = middleware.SessionMiddleware(lambda request: response)
    request = request_with_session_and_messages()
    assert not sessions.response_needs_thread(request, response)
    request.session["key"] = "value"
    assert sessions.response_needs_thread(request, response)
    settings.SESSION_SAVE_EVERY_REQUEST = True
    assert sessions.response_needs_thread(request_with_session_and_messages(), response)
