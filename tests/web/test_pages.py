"""The pages in Chromium against the production server: the API docs and the web app load
nothing from another host and break none of their Content-Security-Policy, and every memory's
kind and source is shown with a label of its own, in English and in French."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from conversations.models import Conversation
from memory.models import AIMemory
from tests.conftest import ROOT
from tests.web.conftest import run_browser_script

SCRIPT = ROOT / "tests" / "web" / "pages.mjs"

# (kind, source) of one memory each: every kind and every source the schema has.
MEMORIES = [
    ("summary", "summary_task"),
    ("note", "save_memory_tool"),
    ("note", "mcp_tool"),
    ("note", "import"),
    ("teacher_note", "teacher"),
    ("quiz_result", "quiz"),
    ("file", "file_upload"),
    ("fact", "extraction"),
    ("approach", "merge"),
]
KIND_LABELS = {
    "en": {
        "summary": "Conversation summary",
        "note": "Note",
        "teacher_note": "Teacher note",
        "quiz_result": "Quiz result",
        "file": "Shared file",
        "fact": "Fact",
        "approach": "What worked",
    },
    "fr": {
        "summary": "Résumé de conversation",
        "note": "Note",
        "teacher_note": "Note d'enseignant",
        "quiz_result": "Résultat de quiz",
        "file": "Fichier partagé",
        "fact": "Fait",
        "approach": "Ce qui a marché",
    },
}
SOURCE_LABELS = {
    "en": {
        "summary_task": "Summary of a conversation",
        "save_memory_tool": "Saved by the tutor during a conversation",
        "teacher": "Written by a teacher",
        "quiz": "From a graded quiz",
        "file_upload": "From a file shared in a conversation",
        "extraction": "Drawn from other memories",
        "merge": "Merged from similar memories",
        "import": "Imported",
        "mcp_tool": "Written by a connected app (MCP)",
    },
    "fr": {
        "summary_task": "Résumé d'une conversation",
        "save_memory_tool": "Enregistrée par le tuteur pendant une conversation",
        "teacher": "Écrite par un enseignant",
        "quiz": "Tirée d'un quiz corrigé",
        "file_upload": "Tirée d'un fichier partagé dans une conversation",
        "extraction": "Tirée d'autres mémoires",
        "merge": "Fusion de mémoires semblables",
        "import": "Importée",
        "mcp_tool": "Écrite par une application connectée (MCP)",
    },
}


def run_pages(browser: dict[str, str], artifacts_dir: Path, server: str, pages: list[dict[str, Any]]) -> dict[str, Any]:
    config = {"baseUrl": server, "chromium": browser["chromium"], "artifacts": str(artifacts_dir), "pages": pages}
    return run_browser_script(browser, SCRIPT, config, artifacts_dir, f"{len(pages)} pages")


@pytest.mark.browser
def test_api_docs_load_nothing_from_another_host(browser, server, artifacts_dir) -> None:
    """/api/docs/ (Swagger UI) and /api/redoc/ render the schema with every asset served by the
    server itself: no font, logo, validator badge or script is fetched from another host (every
    such request is blocked and recorded), and each page's Content-Security-Policy, present, is
    never violated; nor is the admin's sign-in page's."""
    pages = [
        {"kind": "docs", "path": "/api/docs/", "waitFor": ".swagger-ui .opblock"},
        {"kind": "docs", "path": "/api/redoc/", "waitFor": "[role=navigation] li, .menu-content li"},
        {"kind": "docs", "path": "/admin/login/", "waitFor": "#login-form"},
    ]
    result = run_pages(browser, artifacts_dir, server, pages)
    assert result["external"] == []
    assert result["violations"] == []
    assert result["pageErrors"] == []
    for page in result["pages"]:
        assert page["status"] == 200
        assert page["csp"] and "script-src 'self'" in page["csp"], page


@pytest.mark.browser
def test_every_memory_kind_and_source_has_a_label_in_each_language(browser, server, artifacts_dir, school) -> None:
    """A student with a memory of every kind and every source: the student's page shows each
    one's kind and source by its label, never a raw key (an MCP note is not "by the tutor"), in
    English and in French; the teacher's page shows the same labels in its provenance. The
    pages run under their Content-Security-Policy without a violation."""
    alice, teacher = school["alice"], school["teacher_a"]
    for user in (alice, teacher):
        user.set_password("web-" + user.username)
        user.save(update_fields=["password"])
    conversation = Conversation.objects.create(student=alice, subject="Maths", last_activity_at=timezone.now())
    for kind, source in MEMORIES:
        AIMemory.objects.create(
            student=alice,
            kind=kind,
            source=source,
            title=f"Memory of kind {kind} from {source}",
            content="Some content.",
            source_conversation=conversation if kind == "summary" else None,
            author=teacher if kind == "teacher_note" else None,
            created_at=timezone.now(),
        )
    student = {"username": "alice", "password": "web-alice"}
    teacher_login = {"username": "teacher_a", "password": "web-teacher_a"}
    pages = [
        {"kind": "memories", "path": "/app/", "user": student, "language": language} for language in ("en", "fr")
    ] + [
        {"kind": "memories", "path": "/app/teacher/", "user": teacher_login, "language": language, "student": "alice"}
        for language in ("en", "fr")
    ]

    result = run_pages(browser, artifacts_dir, server, pages)

    for page, language in zip(result["pages"], ["en", "fr", "en", "fr"], strict=True):
        assert page["csp"] and "script-src 'self'" in page["csp"], page
        shown = {card["title"]: (card["kind"], card["source"]) for card in page["memories"]}
        expected = {
            f"Memory of kind {kind} from {source}": (KIND_LABELS[language][kind], SOURCE_LABELS[language][source])
            for kind, source in MEMORIES
        }
        assert shown == expected, (page["path"], language)
        for card in page["memories"]:
            assert "kind_" not in card["text"] and "source_" not in card["text"], card
    assert result["external"] == []
    assert result["violations"] == []
    assert result["pageErrors"] == []
