"""Sign-in cards in Chromium, driven by tests/web/sign_in_cards.mjs (playwright-core), against the
production server and the scripted model: a teacher prints the class's cards from the teacher
page, a student opens their card's link and chats, another types their code."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import segno

from accounts.models import SignInCode, User
from conversations.models import Message
from tests.conftest import ROOT
from tests.llm_server import ScriptedLLM
from tests.web.conftest import run_browser_script
from web.cards import QR_ERROR, QR_SVG

SCRIPT = ROOT / "tests" / "web" / "sign_in_cards.mjs"
REPLY = "Hello Alice! Which fractions shall we look at?"


def segno_drawing(link: str) -> tuple[str, str]:
    """The viewBox and path segno draws for `link`, with the sheet's options."""
    svg = segno.make(link, error=QR_ERROR, micro=False).svg_inline(**QR_SVG)
    view_box = re.search(r'viewBox="([^"]+)"', svg)
    path = re.search(r' d="([^"]+)"', svg)
    assert view_box and path
    return view_box.group(1), path.group(1)


@pytest.mark.browser
def test_a_student_signs_in_with_the_card_the_teacher_printed(
    browser: dict[str, str], server: str, llm: ScriptedLLM, school: dict[str, Any], artifacts_dir: Path
) -> None:
    """In Chromium, teacher_a signs in on the teacher page, follows the class's cards link and
    makes the cards: one per student of 5A, each with the student's first name, the class, the
    code and one QR code drawn on screen that is segno's drawing of the card's link (the student
    page with the code in the fragment); printing hides the page's header. alice opens her
    card's link in a fresh browser: she lands signed in on the student page with the code gone
    from the address, starts a conversation and gets the scripted model's reply. bob types his
    code in lower case with spaces instead of dashes and is signed in. A link with a wrong code
    shows the server's refusal and the sign-in form."""
    llm.script("chat", {"content": REPLY})
    teacher = school["teacher_a"]
    teacher.set_password("web-teacher_a")
    teacher.save(update_fields=["password"])
    User.objects.filter(username="alice").update(first_name="Alice")
    User.objects.filter(username="bob").update(first_name="Bob")
    config = {
        "baseUrl": server,
        "chromium": browser["chromium"],
        "artifacts": str(artifacts_dir),
        "teacher": {"username": "teacher_a", "password": "web-teacher_a"},
        "cardFor": "Alice",
        "typedFor": "Bob",
        "subject": "Fractions",
        "question": "Can you help me with fractions?",
    }
    result = run_browser_script(browser, SCRIPT, config, artifacts_dir, "sign-in cards")

    cards = result["cards"]
    assert sorted(c["name"] for c in cards) == ["Alice", "Bob"]
    for card in cards:
        assert card["classroom"] == "5A" and card["svgs"] == 1 and card["width"] > 50
        assert card["link"] == f"{server}/app/#code={card['code']}"
        assert (card["viewBox"], card["path"]) == segno_drawing(card["link"])
    seen = result["seen"]
    assert seen["reply"] == REPLY
    assert seen["addressAfterSignIn"] == f"{server}/app/"
    assert "bob" in seen["typedWhoami"]
    assert seen["wrongCodeError"] == "Unable to sign in with this code."
    reply = Message.objects.get(conversation__student=school["alice"], role="tutor")
    assert reply.content == REPLY
    uses = dict(SignInCode.objects.values_list("student__username", "used_count"))
    assert uses == {"alice": 1, "bob": 1}
