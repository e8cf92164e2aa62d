"""French and English: the API's messages come in the client's language.

An anonymous request is answered in its Accept-Language; once a user is authenticated, in the
user's own `language`, whatever the header says. The project's own messages are translated in
locale/fr (checked here to be complete and compiled), Django's and DRF's by their packages.
"""

from __future__ import annotations

import ast
import gettext
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import pytest
from django.conf import settings
from django.utils import formats, translation
from rest_framework.test import APIClient

from accounts.models import User
from tests.conftest import client_for, headers, new_conversation
from tests.conversations.test_turn import send, start

LC_MESSAGES = Path(settings.BASE_DIR) / "locale" / "fr" / "LC_MESSAGES"
PLACEHOLDER = re.compile(r"%\((\w+)\)[sd]")


@pytest.fixture(autouse=True)
def _language_left_as_found() -> Iterator[None]:
    # A request activates a language in this thread; the next test must not inherit French.
    yield
    translation.deactivate()


@dataclass
class Entry:
    msgid: str
    msgid_plural: str | None = None
    msgstr: list[str] = field(default_factory=list)
    flags: set[str] = field(default_factory=set)


def parse_po(text: str) -> list[Entry]:
    """The entries of a .po file, header included (msgid ""); obsolete (#~) entries left out.
    Enough of the format for makemessages' output: flags, msgid, msgid_plural, msgstr[n]."""
    entries = []
    for block in text.split("\n\n"):
        flags: set[str] = set()
        fields: dict[str, list[str]] = {}
        key = ""
        for line in block.strip().splitlines():
            if line.startswith("#,"):
                flags |= {flag.strip() for flag in line[2:].split(",")}
            elif line.startswith("#"):
                continue
            elif line.startswith('"'):
                fields[key].append(ast.literal_eval(line))
            else:
                key, _, literal = line.partition(" ")
                fields[key] = [ast.literal_eval(literal)]
        if "msgid" not in fields:
            continue
        joined = {k: "".join(v) for k, v in fields.items()}
        strs = [joined[k] for k in sorted(joined) if k.startswith("msgstr")]
        entries.append(Entry(joined["msgid"], joined.get("msgid_plural"), strs, flags))
    return entries


def test_every_message_is_translated_and_the_compiled_catalog_is_current():
    """Each msgid of django.po has a French msgstr (every plural form), none fuzzy, with the same
    placeholders; django.mo, committed so that no one needs gettext to run the server, says the
    same thing (a .po edited without compilemessages fails here)."""
    entries = parse_po((LC_MESSAGES / "django.po").read_text(encoding="utf-8"))
    header, messages = entries[0], entries[1:]
    assert header.msgid == "" and "fuzzy" not in header.flags
    assert "Language: fr\n" in header.msgstr[0] and "plural=(n > 1)" in header.msgstr[0]
    assert len(messages) >= 40
    with (LC_MESSAGES / "django.mo").open("rb") as mo:
        compiled = gettext.GNUTranslations(mo)
    for entry in messages:
        assert "fuzzy" not in entry.flags, entry.msgid
        assert entry.msgstr and all(s.strip() for s in entry.msgstr), f"untranslated: {entry.msgid!r}"
        for translated in entry.msgstr:
            assert set(PLACEHOLDER.findall(translated)) == set(PLACEHOLDER.findall(entry.msgid)), entry.msgid
        if entry.msgid_plural is None:
            assert compiled.gettext(entry.msgid) == entry.msgstr[0], f"django.mo is stale: {entry.msgid!r}"
        else:
            # French: one form for 0 and 1, the other from 2.
            assert compiled.ngettext(entry.msgid, entry.msgid_plural, 1) == entry.msgstr[0], entry.msgid
            assert compiled.ngettext(entry.msgid, entry.msgid_plural, 2) == entry.msgstr[1], entry.msgid


def error(resp: Any) -> str:
    return str(resp.json()["error"]["message"])


def french(school: dict[str, Any], *names: str) -> None:
    User.objects.filter(username__in=names).update(language=User.Language.FRENCH)


# --- Anonymous: Accept-Language chooses ---------------------------------------------------------


def test_an_anonymous_request_is_answered_in_its_accept_language(school: dict[str, Any]):
    """Wrong credentials and an unknown URL: French with Accept-Language: fr, English without."""
    anonymous = APIClient()
    wrong = {"username": "alice", "password": "not-hers"}
    fr = anonymous.post("/api/v1/auth/token/", wrong, format="json", HTTP_ACCEPT_LANGUAGE="fr")
    assert fr.status_code == 400
    assert error(fr) == "Impossible de se connecter avec les identifiants fournis."
    assert fr["Content-Language"] == "fr"
    en = anonymous.post("/api/v1/auth/token/", wrong, format="json")
    assert error(en) == "Unable to log in with the given credentials."
    assert en["Content-Language"] == "en"

    missing = anonymous.get("/api/v1/nope/", HTTP_ACCEPT_LANGUAGE="fr-FR,fr;q=0.9,en;q=0.5")
    assert missing.status_code == 404
    assert (error(missing), missing["Content-Language"]) == ("Introuvable.", "fr")
    slash = anonymous.post("/api/v1/auth/token", wrong, format="json", HTTP_ACCEPT_LANGUAGE="fr")
    assert error(slash) == "Introuvable. Peut-être /api/v1/auth/token/ (avec la barre oblique finale)\u00a0?"
    assert error(anonymous.get("/api/v1/nope/")) == "Not found."
    # A language the product does not offer falls back to English.
    assert error(anonymous.get("/api/v1/nope/", HTTP_ACCEPT_LANGUAGE="de")) == "Not found."


def test_too_many_failed_logins_in_french_with_the_plural(school: dict[str, Any], settings: Any):
    settings.LOGIN_FAILURE_LIMIT = 1
    settings.LOGIN_FAILURE_WINDOW_SECONDS = 600
    anonymous = client_for(None)
    wrong = {"username": "alice", "password": "not-hers"}
    anonymous.post("/api/v1/auth/token/", wrong, format="json")
    resp = anonymous.post("/api/v1/auth/token/", wrong, format="json", HTTP_ACCEPT_LANGUAGE="fr")
    assert resp.status_code == 429
    assert re.fullmatch(r"Trop d'échecs de connexion\. Réessayer dans \d+ secondes\.", error(resp)), error(resp)


# --- Authenticated: the user's language wins ----------------------------------------------------


def test_a_french_user_gets_french_without_accept_language(clients: dict[str, APIClient], school: dict[str, Any]):
    """The project's own messages (404 through the scoping primitive, a memory's validation) and
    DRF's built-in ones, with Content-Language: fr."""
    french(school, "alice", "teacher_a")
    theirs = start(clients["bob"])
    hidden = clients["alice"].get(f"/api/v1/conversations/{theirs}/")
    assert hidden.status_code == 404
    assert (error(hidden), hidden["Content-Language"]) == ("Conversation introuvable.", "fr")

    teacher = clients["teacher_a"]
    note = {"student": school["alice"].pk, "title": "Fractions", "content": "Works well with pictures."}
    short = teacher.post("/api/v1/memories/", note, format="json")
    assert short.status_code == 400
    assert short.json()["error"]["details"] == {"title": ["Le titre doit compter de 4 à 10 mots (il en compte 1)."]}
    assert short["Content-Language"] == "fr"
    blank = teacher.post("/api/v1/memories/", {**note, "title": ""}, format="json")
    assert blank.json()["error"]["details"]["title"] == ["Ce champ ne peut être vide."]
    required = teacher.post("/api/v1/memories/", {"student": school["alice"].pk, "title": note["title"]}, format="json")
    assert required.json()["error"]["details"]["content"] == ["Ce champ est obligatoire."]
    refused = clients["alice"].post("/api/v1/memories/", note, format="json")
    assert refused.status_code == 403
    assert error(refused) == "Seul un enseignant peut ajouter une note d'enseignant."


def test_the_users_language_wins_over_accept_language(clients: dict[str, APIClient], school: dict[str, Any]):
    """An English user asking in French is answered in English (Content-Language: en), and the
    other way round: once authenticated, the header no longer chooses."""
    french(school, "bob")
    theirs = start(clients["bob"])
    hidden = clients["alice"].get(f"/api/v1/conversations/{theirs}/", HTTP_ACCEPT_LANGUAGE="fr")
    assert (error(hidden), hidden["Content-Language"]) == ("Conversation not found.", "en")
    required = clients["teacher_a"].post("/api/v1/memories/", {}, format="json", HTTP_ACCEPT_LANGUAGE="fr")
    assert required.json()["error"]["details"]["content"] == ["This field is required."]
    assert required["Content-Language"] == "en"
    mine = start(clients["alice"])
    other_way = clients["bob"].get(f"/api/v1/conversations/{mine}/", HTTP_ACCEPT_LANGUAGE="en")
    assert (error(other_way), other_way["Content-Language"]) == ("Conversation introuvable.", "fr")


# --- The chat turn --------------------------------------------------------------------------------


def test_a_turns_errors_are_french_for_a_french_student(clients: dict[str, APIClient], school: dict[str, Any], llm):
    """Errors of the asynchronous send come in the student's language too (a message too long
    for the model's window, an ended conversation), numbers written the French way."""
    french(school, "alice")
    llm.models_meta = {"max_model_len": 4096}
    cid = start(clients["alice"])
    too_long = send(clients["alice"], cid, "mot " * 4000, "m1")
    assert too_long.status_code == 400
    with translation.override("fr"):
        window = formats.number_format(4096, force_grouping=True)  # "4 096", Django's French separator
    assert window != "4096"
    assert error(too_long).startswith("Ce message est trop long pour le modèle du tuteur ")
    assert f"(contexte de {window} jetons)" in error(too_long)
    assert too_long["Content-Language"] == "fr"
    assert clients["alice"].post(f"/api/v1/conversations/{cid}/end/").status_code == 202
    ended = send(clients["alice"], cid, "Encore une question", "m2")
    assert ended.status_code == 409
    assert error(ended) == "Cette conversation est terminée\u00a0; en commencer une nouvelle."


def test_the_model_is_told_the_language_and_reads_tool_errors_in_english(
    clients: dict[str, APIClient], school: dict[str, Any], llm
):
    """For a French student the system prompt names French; what the model reads back from a
    refused save_memory call stays in English (it is not a message to the student)."""
    french(school, "alice")
    call = {"name": "save_memory", "arguments": json.dumps({"title": "Court", "content": "Aime les fractions."})}
    llm.script("chat", {"content": "", "tool_calls": [call]}, {"content": "Continuons."})
    resp = send(clients["alice"], start(clients["alice"]), "Bonjour", "m1")
    assert resp.status_code == 201, resp.content
    first, second = llm.calls("chat")
    assert "The student's language is French (fr): reply in French" in first["messages"][0]["content"]
    [tool] = [m["content"] for m in second["messages"] if m["role"] == "tool"]
    assert tool == "Error: memory not saved. Title must have 4 to 10 words (got 1)."


def said(resp: httpx2.Response) -> tuple[str, str]:
    return resp.json()["error"]["message"], resp.headers["Content-Language"]


@pytest.mark.worker
def test_the_production_server_answers_a_turn_in_the_users_language(server: str, school: dict[str, Any]):
    """Under uvicorn the turn's database steps run on a thread pool (DB_STEP_THREADS), whose
    threads do not inherit the request's language: the steps still answer in the user's language,
    and so does Content-Language, whatever Accept-Language says."""
    french(school, "alice")
    theirs = new_conversation(server, school["bob"])
    url = f"{server}/api/v1/conversations/{theirs}/messages/"
    body = {"content": "Bonjour", "client_message_id": "m1"}
    asks_english = headers(school["alice"], **{"Accept-Language": "en"})
    assert said(httpx2.post(url, json=body, headers=asks_english)) == ("Conversation introuvable.", "fr")
    assert said(httpx2.get(url, headers=asks_english)) == ("Conversation introuvable.", "fr")
    asks_french = headers(school["carol"], **{"Accept-Language": "fr"})
    assert said(httpx2.post(url, json=body, headers=asks_french)) == ("Conversation not found.", "en")
    anonymous = httpx2.post(url, json=body, headers={"Accept-Language": "fr"})
    assert anonymous.status_code == 401
    assert said(anonymous) == ("Informations d'authentification non fournies.", "fr")
