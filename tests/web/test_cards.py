"""The printable sheet of a class's sign-in cards (web.cards): who may open it, and that each card
holds the student's first name, the class, the code and a QR code of the sign-in link."""

from __future__ import annotations

import re
from typing import Any

import segno
from django.test import Client

from accounts.models import SignInCode, User
from tests.conftest import client_for, make_user
from web.cards import QR_ERROR, QR_SVG

CARD = re.compile(r'<li class="sign-in-card" data-code="([^"]+)" data-link="([^"]+)">(.*?)</li>', re.S)


def cards_url(classroom_id: int) -> str:
    return f"/app/teacher/classes/{classroom_id}/cards/"


def browser_for(user: User | None) -> Client:
    """A browser signed in with a session, which checks CSRF as a real one does."""
    browser = Client(enforce_csrf_checks=True)
    if user is not None:
        browser.force_login(user)
    return browser


def make_sheet(browser: Client, classroom_id: int, days: Any = 7) -> Any:
    form = browser.get(cards_url(classroom_id))
    assert form.status_code == 200, form.content
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.content.decode())
    assert csrf is not None
    return browser.post(cards_url(classroom_id), {"days": days, "csrfmiddlewaretoken": csrf.group(1)})


def test_the_sheet_has_a_card_per_student_with_the_qr_code_of_its_link(school):
    """The class's teacher opens the form, posts it, and gets one card per active student: the
    first name, the class's name, the code, and an inline SVG QR code that is segno's own
    rendering of the card's link (the student page with the code in its fragment), never
    cached. Each card's code signs its student in."""
    User.objects.filter(username="alice").update(first_name="Alice")
    resp = make_sheet(browser_for(school["teacher_a"]), school["class_a"].pk)
    assert resp.status_code == 200, resp.content
    assert "no-store" in resp["Cache-Control"]
    html = resp.content.decode()
    cards = CARD.findall(html)
    assert len(cards) == 2
    by_name = {}
    for code, link, body in cards:
        assert link == f"http://testserver/app/#code={code}"
        expected_qr = segno.make(link, error=QR_ERROR, micro=False).svg_inline(**QR_SVG)
        assert expected_qr in body
        assert body.count("<svg") == 1
        assert "5A" in body and code in body
        name = re.search(r'<p class="sign-in-card-name">([^<]+)</p>', body)
        assert name is not None
        by_name[name.group(1)] = code
    assert set(by_name) == {"Alice", "bob"}  # bob has no first name: his username
    token = client_for(None).post("/api/v1/auth/code/", {"code": by_name["Alice"]}, format="json")
    assert token.status_code == 200, token.content
    assert SignInCode.objects.filter(created_by=school["teacher_a"]).count() == 2


def test_only_the_class_overseers_open_its_cards(school):
    """Another class's teacher, a student and an anonymous visitor get a 404 on the form and on
    its POST, and no code is made; the school's administrator opens it."""
    url = cards_url(school["class_a"].pk)
    for user in (school["teacher_b"], school["alice"], None):
        browser = browser_for(user)
        browser.cookies["csrftoken"] = "x" * 32
        assert browser.get(url).status_code == 404
        resp = browser.post(url, {"days": 7, "csrfmiddlewaretoken": "x" * 32})
        assert resp.status_code == 404, (user, resp.status_code)
    assert not SignInCode.objects.exists()
    admin = make_user("principal", User.Role.ADMINISTRATOR, school=school["school"])
    assert browser_for(admin).get(url).status_code == 200


def test_the_form_needs_its_csrf_token_and_a_valid_duration(school):
    """A POST without the CSRF token is refused (403 csrf_failed) and makes nothing; a duration
    outside 1 to 90 days shows the form again with its error (400)."""
    browser = browser_for(school["teacher_a"])
    resp = browser.post(cards_url(school["class_a"].pk), {"days": 7})
    assert resp.status_code == 403 and resp.json()["error"]["code"] == "csrf_failed"
    resp = make_sheet(browser, school["class_a"].pk, days=91)
    assert resp.status_code == 400 and 'id="cards-form"' in resp.content.decode()
    assert not SignInCode.objects.exists()


def test_the_sheet_is_in_the_teachers_language(school):
    """A French teacher gets the form and the sheet in French."""
    User.objects.filter(pk=school["teacher_a"].pk).update(language="fr")
    school["teacher_a"].refresh_from_db()
    resp = make_sheet(browser_for(school["teacher_a"]), school["class_a"].pk)
    html = resp.content.decode()
    assert "Cartes de connexion : 5A" in html and "Scanne le carré" in html
