"""The web app's pages: HTML shells that set the CSRF cookie and load their committed scripts."""

from __future__ import annotations

import pytest
from django.contrib.staticfiles import finders
from django.test import Client


@pytest.mark.parametrize(("url", "script"), [("/app/", "web/student.js"), ("/app/teacher/", "web/teacher.js")])
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
