"""The web app's pages: HTML shells that set the CSRF cookie and load their committed scripts."""

from __future__ import annotations

import pytest
from django.contrib.staticfiles import finders
from django.test import Client


@pytest.mark.parametrize(
    ("url", "script"),
    [("/app/", "web/student.js"), ("/app/teacher/", "web/teacher.js"), ("/app/teacher/safety/", "web/teacher.js")],
)
def test_page_sets_the_csrf_cookie_and_loads_its_script(db, url, script):
    """Anyone may load a page (it holds no data); it sets `csrftoken` for the script's writes,
    and its script and stylesheet are found by the static files finders (served by the ASGI
    application, and by runserver)."""
    resp = Client().get(url)
    assert resp.status_code == 200
    assert resp["Content-Type"].startswith("text/html")
    assert resp.cookies["csrftoken"].value
    html = resp.content.decode()
    assert f'src="/static/{script}"' in html and 'href="/static/web/style.css"' in html
    assert 'role="alert"' in html and 'for="username"' in html
    assert finders.find(script) and finders.find("web/style.css")


def test_page_language_follows_accept_language_before_sign_in(db):
    """Before sign-in the page's language is the browser's (the script then uses the user's)."""
    assert '<html lang="fr">' in Client().get("/app/", HTTP_ACCEPT_LANGUAGE="fr-FR,fr;q=0.9").content.decode()
    assert '<html lang="en">' in Client().get("/app/", HTTP_ACCEPT_LANGUAGE="en-GB").content.decode()


def test_pages_only_answer_reads(db):
    """A page is never a form target: POST is 405."""
    assert Client().post("/app/").status_code == 405


@pytest.mark.parametrize(
    "url", ["/app/", "/app/teacher/", "/app/teacher/safety/", "/api/docs/", "/api/redoc/", "/api/v1/auth/csrf/"]
)
def test_every_page_has_a_content_security_policy(db, url):
    """Scripts come from this server only, on the pages and the API docs (whose pages alone
    allow inline styles); nothing may frame them."""
    policy = Client().get(url)["Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";") if part.strip())
    assert directives["script-src"] == "'self'"
    assert directives["frame-ancestors"] == "'none'" and directives["object-src"] == "'none'"
    inline_styles = "'unsafe-inline'" in directives["style-src"]
    assert inline_styles == url.startswith(("/api/docs/", "/api/redoc/"))


def test_the_docs_pages_name_only_this_server(db):
    """Swagger UI's page has no inline script (its start-up script is a file of its own), and
    Redoc's page and script name no other host."""
    docs = Client().get("/api/docs/").content.decode()
    assert "<script>" not in docs and "?script=" in docs
    assert Client().get("/api/docs/?script=")["Content-Type"].startswith("application/javascript")
    redoc = Client().get("/api/redoc/").content.decode()
    assert "googleapis" not in redoc and 'src="/api/redoc/redoc.standalone.js"' in redoc
    script = Client().get("/api/redoc/redoc.standalone.js").content
    assert len(script) > 100_000 and b"cdn.redoc.ly" not in script
