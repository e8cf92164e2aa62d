"""Sign-in cards: a class's teachers make a code per student (POST /classrooms/{id}/sign-in-codes/),
and a student signs in with it (POST /auth/code/ for a token, /auth/code/login/ for a session),
behind the password sign-in's throttles."""

from __future__ import annotations

import math
import re
from datetime import timedelta
from typing import Any
from unittest import mock

import pytest
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from accounts import codes
from accounts.models import Enrollment, SignInCode, User
from accounts.services import users_set_active
from tests.conftest import client_for, make_user
from tests.tutor.test_throttles import use_cache

CODE = re.compile(r"^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){3}$")
REFUSED = "Unable to sign in with this code."


def make_cards(client: APIClient, classroom_id: int, **body: Any) -> Any:
    return client.post(f"/api/v1/classrooms/{classroom_id}/sign-in-codes/", body, format="json")


def cards_by_username(client: APIClient, classroom_id: int, **body: Any) -> dict[str, dict[str, Any]]:
    resp = make_cards(client, classroom_id, **body)
    assert resp.status_code == 201, resp.content
    return {card["student"]["username"]: card for card in resp.json()["results"]}


def code_token(code: str, address: str = "127.0.0.1") -> Any:
    client = client_for(None)
    return client.post("/api/v1/auth/code/", {"code": code}, format="json", REMOTE_ADDR=address)


def assert_refused(resp: Any) -> None:
    assert resp.status_code == 400, resp.content
    error = resp.json()["error"]
    assert (error["code"], error["message"]) == ("invalid", REFUSED)


def wrong_code() -> str:
    return codes.code_generate()


def test_a_teacher_makes_one_card_per_active_student_of_the_class(school, clients):
    """201 with a card per active student actively enrolled (not one whose enrolment ended, nor a
    deactivated one, nor another class's), by first name: the student, a code of 4 groups of 4
    from the unambiguous alphabet, its expiry 7 days on, and the student page's address with the
    code in its fragment. The server keeps only the code's hash."""
    dropped, gone = make_user("dave", first_name="Dave"), make_user("erin", first_name="Erin")
    Enrollment.objects.create(classroom=school["class_a"], student=dropped, active=False)
    Enrollment.objects.create(classroom=school["class_a"], student=gone)
    users_set_active(user_ids=[gone.pk], active=False)
    for name in ("alice", "bob"):
        User.objects.filter(username=name).update(first_name=name.title(), last_name="Smith")
    before = timezone.now()
    resp = make_cards(clients["teacher_a"], school["class_a"].pk)
    assert resp.status_code == 201, resp.content
    cards = resp.json()["results"]
    assert [c["student"] for c in cards] == [
        {"id": school[n].pk, "first_name": n.title(), "last_name": "Smith", "username": n} for n in ("alice", "bob")
    ]
    for card in cards:
        assert CODE.match(card["code"]), card["code"]
        assert card["sign_in_url"] == f"http://testserver/app/#code={card['code']}"
        expires = timezone.datetime.fromisoformat(card["expires_at"])
        assert before + timedelta(days=7) <= expires <= timezone.now() + timedelta(days=7)
    rows = SignInCode.objects.filter(classroom=school["class_a"])
    assert rows.count() == 2 and all(r.created_by == school["teacher_a"] for r in rows)
    stored = [str(v) for r in rows.values() for v in r.values()]
    for card in cards:
        plain = card["code"].replace("-", "")
        assert not any(plain in v or card["code"] in v for v in stored)


def test_days_sets_the_expiry_within_1_to_90(school, clients):
    """`days` gives the codes' life, from 1 to 90 days; 0, 91 or text is a 400 naming the field."""
    card = cards_by_username(clients["teacher_a"], school["class_a"].pk, days=1)["alice"]
    expires = timezone.datetime.fromisoformat(card["expires_at"])
    assert abs(expires - (timezone.now() + timedelta(days=1))) < timedelta(minutes=1)
    for days in (0, 91, "soon"):
        resp = make_cards(clients["teacher_a"], school["class_a"].pk, days=days)
        assert resp.status_code == 400 and "days" in resp.json()["error"]["details"], resp.content


def test_only_the_class_overseers_make_its_cards(school, clients):
    """Another class's teacher and a student get 404 (as for a class that does not exist), an
    anonymous request 401; the school's administrator and a staff account get the cards."""
    class_a = school["class_a"].pk
    assert make_cards(clients["teacher_b"], class_a).status_code == 404
    assert make_cards(clients["alice"], class_a).status_code == 404
    assert make_cards(clients["teacher_a"], 999_999).status_code == 404
    assert make_cards(client_for(None), class_a).status_code == 401
    admin = make_user("principal", User.Role.ADMINISTRATOR, school=school["school"])
    staff = make_user("operator", User.Role.STAFF, is_staff=True)
    for user in (admin, staff):
        assert set(cards_by_username(client_for(user), class_a)) == {"alice", "bob"}
    assert not SignInCode.objects.filter(created_by__in=[school["teacher_b"], school["alice"]]).exists()


def test_a_code_gives_the_students_token_however_it_is_typed(school, clients):
    """POST /auth/code/ answers {token} as /auth/token/ does (the student's one token), for the
    code in lower case, without dashes, with spaces, and with O and I typed for 0 and 1; each
    use is counted."""
    code = cards_by_username(clients["teacher_a"], school["class_a"].pk)["alice"]["code"]
    token = Token.objects.get(user=school["alice"]).key
    typed = code.lower().replace("-", " ").replace("0", "o").replace("1", "I")
    for variant in (code, typed, code.replace("-", ""), f"  {code.lower()}  "):
        resp = code_token(variant)
        assert resp.status_code == 200, (variant, resp.content)
        assert resp.json() == {"token": token}
    row = SignInCode.objects.get(student=school["alice"])
    assert row.used_count == 4 and row.last_used_at is not None


def test_a_code_signs_in_a_session_with_the_csrf_token(school, clients):
    """POST /auth/code/login/ needs the CSRF token (403 csrf_failed without it); with it, the
    student is signed in with a session: {user, csrf_token}, and GET /me/ is theirs."""
    code = cards_by_username(clients["teacher_a"], school["class_a"].pk)["bob"]["code"]
    browser = APIClient(enforce_csrf_checks=True)
    resp = browser.post("/api/v1/auth/code/login/", {"code": code}, format="json")
    assert resp.status_code == 403 and resp.json()["error"]["code"] == "csrf_failed"
    csrf = browser.get("/api/v1/auth/csrf/").json()["csrf_token"]
    resp = browser.post("/api/v1/auth/code/login/", {"code": code}, format="json", HTTP_X_CSRFTOKEN=csrf)
    assert resp.status_code == 200, resp.content
    assert resp.json()["user"]["username"] == "bob" and resp.json()["csrf_token"]
    me = browser.get("/api/v1/me/")
    assert me.status_code == 200 and me.json()["username"] == "bob"


def test_new_cards_revoke_the_class_earlier_codes(school, clients):
    """Making the class's cards again revokes each student's earlier code of the class (the same
    400 as a wrong code), and the new one works; a code of another class is left alone."""
    other = school["class_b"]
    Enrollment.objects.create(classroom=other, student=school["alice"])
    first = cards_by_username(clients["teacher_a"], school["class_a"].pk)["alice"]["code"]
    elsewhere = cards_by_username(clients["teacher_b"], other.pk)["alice"]["code"]
    second = cards_by_username(clients["teacher_a"], school["class_a"].pk)["alice"]["code"]
    assert first != second
    assert_refused(code_token(first))
    assert code_token(second).status_code == 200
    assert code_token(elsewhere).status_code == 200
    assert SignInCode.objects.filter(student=school["alice"], revoked_at__isnull=False).count() == 1


def test_a_code_stops_at_its_expiry(school, clients):
    """With the clock moved past `expires_at`, the code is refused with the same 400 as a wrong
    one; a minute before, it works."""
    card = cards_by_username(clients["teacher_a"], school["class_a"].pk, days=2)["alice"]
    expires = timezone.datetime.fromisoformat(card["expires_at"])
    with mock.patch("django.utils.timezone.now", return_value=expires - timedelta(minutes=1)):
        assert code_token(card["code"]).status_code == 200
    with mock.patch("django.utils.timezone.now", return_value=expires + timedelta(seconds=1)):
        assert_refused(code_token(card["code"]))


def test_wrong_codes_and_students_who_left_get_one_answer(school, clients):
    """A wrong code, text that is no code, a deactivated student's code, and the code of a
    student whose enrolment in the class ended (or whose class was closed): the same 400."""
    cards = cards_by_username(clients["teacher_a"], school["class_a"].pk)
    for code in (wrong_code(), "hello", "", cards["alice"]["code"] + "X"):
        resp = code_token(code)
        if code == "":
            assert resp.status_code == 400  # a blank field, named
            continue
        assert_refused(resp)
    users_set_active(user_ids=[school["alice"].pk], active=False)
    assert_refused(code_token(cards["alice"]["code"]))
    Enrollment.objects.filter(student=school["bob"]).update(active=False)
    assert_refused(code_token(cards["bob"]["code"]))
    Enrollment.objects.filter(student=school["bob"]).update(active=True)
    assert code_token(cards["bob"]["code"]).status_code == 200
    school["class_a"].active = False
    school["class_a"].save(update_fields=["active"])
    assert_refused(code_token(cards["bob"]["code"]))


def test_guessing_is_refused_by_the_address_rate(school, clients, settings):
    """Every code attempt counts against the address's rate (LOGIN_ADDRESS_RATE): past it, 429
    with Retry-After, the right code included, while another address still signs in. At the
    default rate (600 a minute) an address makes under 3.2e8 guesses a year, against 2^80 codes:
    with a million live codes, a 1 in 3.8e9 chance of any success."""
    settings.LOGIN_ADDRESS_RATE = "20/minute"
    code = cards_by_username(clients["teacher_a"], school["class_a"].pk)["alice"]["code"]
    for _ in range(20):
        assert_refused(code_token(wrong_code(), address="10.1.1.1"))
    resp = code_token(code, address="10.1.1.1")
    assert resp.status_code == 429 and resp.json()["error"]["code"] == "throttled"
    assert 0 < int(resp["Retry-After"]) <= 60
    assert code_token(code, address="10.1.1.2").status_code == 200
    assert codes.BITS == codes.LENGTH * math.log2(len(codes.ALPHABET)) == 80
    guesses_a_year = 600 * 60 * 24 * 365
    assert guesses_a_year * 1_000_000 / 2**codes.BITS < 1 / 3.8e9


def test_guessing_the_end_of_a_card_locks_that_card(school, clients, settings):
    """Failures are counted under a code's first three groups: after LOGIN_FAILURE_LIMIT wrong
    endings from one address, that card is refused from there (429, the right code too), while
    another card still signs in from the same address; after LOGIN_ACCOUNT_FAILURE_LIMIT from
    all addresses, the card is refused from any address until the window has passed."""
    settings.LOGIN_FAILURE_LIMIT = 3
    settings.LOGIN_ACCOUNT_FAILURE_LIMIT = 5
    settings.LOGIN_FAILURE_WINDOW_SECONDS = 600
    cards = cards_by_username(clients["teacher_a"], school["class_a"].pk)
    code = cards["alice"]["code"]

    def ending(i: int) -> str:
        guess = code[:-4] + codes.ALPHABET[i] * 4
        return guess if guess != code else code[:-4] + codes.ALPHABET[i + 1] * 4

    for i in range(3):
        assert_refused(code_token(ending(i), address="10.2.2.2"))
    resp = code_token(code, address="10.2.2.2")
    assert resp.status_code == 429 and 0 < int(resp["Retry-After"]) <= 600
    assert code_token(cards["bob"]["code"], address="10.2.2.2").status_code == 200
    for i in range(3, 5):
        assert_refused(code_token(ending(i), address="10.3.3.3"))
    assert code_token(code, address="10.4.4.4").status_code == 429


def test_a_code_never_signs_in_with_the_cache_away(school, clients, settings, tmp_path):
    """When attempts cannot be counted (the cache is unreachable), a code is refused with a 503
    that is safe to retry, as a password is (fail closed)."""
    code = cards_by_username(clients["teacher_a"], school["class_a"].pk)["alice"]["code"]
    settings.LOGIN_ADDRESS_RATE = "600/minute"
    use_cache(settings, "down", tmp_path)
    resp = code_token(code)
    assert resp.status_code == 503 and resp.json()["error"]["retry_safe"] is True
    assert SignInCode.objects.get(student=school["alice"]).used_count == 0


@pytest.mark.parametrize("code", ["7K3M-Q9TX-2HCV-8WNP", "7k3m q9tx 2hcv 8wnp", "7K3MQ9TX2HCV8WNP"])
def test_the_code_is_read_the_same_however_it_is_typed(code):
    """Case, spaces and dashes are ignored: one normalized form, one hash, one lockout key."""
    assert codes.code_normalize(code) == "7K3MQ9TX2HCV8WNP"
    assert codes.code_lockout_key(code) == "sign-in-code:7K3MQ9TX2HCV"
