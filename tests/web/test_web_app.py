"""The web app in a real browser: Chromium, driven by tests/web/app.mjs (playwright-core), against
the production server (uvicorn), a real Celery worker and the scripted model."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from accounts.models import User
from memory.models import AIMemory
from tests.conftest import ROOT
from tests.llm_server import DEFAULT_SUMMARY, ScriptedLLM
from tests.web.conftest import artefacts

SCRIPT = ROOT / "tests" / "web" / "app.mjs"

TOOL_NOTE = "Struggles with fractions, strong in geometry"
REPLY = (
    "Halves and thirds share sixths: 1/2 is 3/6 and 1/3 is 2/6, so together they make 5/6. "
    "Shall we try 1/4 + 1/6 the same way?"
)
EXPECT: dict[str, Any] = {
    "subject": "Fractions",
    "question": "How do I add 1/2 and 1/3?",
    "reply": REPLY,
    "toolNote": TOOL_NOTE,
    "summary": DEFAULT_SUMMARY["title"],
    "teacherNote": {
        "title": "Talk to the parents about homework",
        "content": "Homework is often missing on Mondays; raise it at the parents' meeting.",
    },
    "corrected": {
        "title": "Adding fractions with unlike denominators",
        "content": "Added 1/2 and 1/3 by writing both in sixths. Next: 1/4 + 1/6.",
    },
    "archiveReason": "Not true any more: geometry is now the hard part.",
}


@pytest.mark.browser
@pytest.mark.worker
def test_student_and_teacher_use_the_web_app(
    browser: dict[str, str], server: str, worker: Any, llm: ScriptedLLM, school: dict[str, Any], artifacts_dir: Path
) -> None:
    """In Chromium: a student signs in (a wrong password first shows the server's message),
    starts a conversation, sees the reply stream in and the tutor's note, ends it and sees the
    summary the worker wrote. A teacher reads the memories with their provenance, adds a
    teacher-only note, corrects the summary, archives the note and lists the archived one. The
    student then sees the correction, not the archived note, and never the teacher-only note;
    switching to French translates the page and is kept (PATCH /me/)."""
    llm.script(
        "chat",
        {
            "content": "",
            "tool_calls": [
                {"name": "save_memory", "arguments": json.dumps({"title": TOOL_NOTE, "content": "Use pictures."})}
            ],
        },
        {"content": REPLY, "stream_seconds": 2.0},
    )
    for user in (school["alice"], school["teacher_a"]):
        user.set_password("web-" + user.username)
        user.save(update_fields=["password"])
    config = {
        "baseUrl": server,
        "chromium": browser["chromium"],
        "artifacts": str(artifacts_dir),
        "student": {"username": "alice", "password": "web-alice"},
        "teacher": {"username": "teacher_a", "password": "web-teacher_a"},
        "otherStudent": "carol",
        "expect": EXPECT,
    }

    started = time.monotonic()
    run = subprocess.run(
        [browser["node"], str(SCRIPT), json.dumps(config)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    elapsed = time.monotonic() - started
    (artifacts_dir / "browser.log").write_text(run.stdout + run.stderr)
    result_lines = [line for line in run.stdout.splitlines() if line.startswith("RESULT ")]
    result = json.loads(result_lines[-1].removeprefix("RESULT ")) if result_lines else {}
    slowest = sorted(result.get("timings", {}).items(), key=lambda kv: -kv[1])[:3]
    artefacts.append(
        f"browser test: {elapsed:.1f} s in Chromium; slowest steps (ms): {slowest}; "
        f"{len(result.get('screenshots', []))} screenshots and logs in {artifacts_dir}"
    )
    assert run.returncode == 0 and result.get("ok"), (
        f"{result.get('error') or run.stderr[-3000:]}\n(screenshots and logs in {artifacts_dir})"
    )

    # What the pages did is in the database.
    alice, teacher = school["alice"], school["teacher_a"]
    note = AIMemory.objects.get(student=alice, kind=AIMemory.Kind.TEACHER_NOTE)
    assert (note.title, note.content) == (EXPECT["teacherNote"]["title"], EXPECT["teacherNote"]["content"])
    assert note.visibility == AIMemory.Visibility.TEACHER_ONLY and note.author == teacher
    summary = AIMemory.objects.get(student=alice, kind=AIMemory.Kind.SUMMARY)
    assert (summary.title, summary.content) == (EXPECT["corrected"]["title"], EXPECT["corrected"]["content"])
    assert summary.status == AIMemory.Status.ACTIVE and summary.source_conversation is not None
    tool_note = AIMemory.objects.get(student=alice, kind=AIMemory.Kind.NOTE)
    assert tool_note.title == TOOL_NOTE
    assert tool_note.status == AIMemory.Status.ARCHIVED and tool_note.archived_reason == EXPECT["archiveReason"]
    assert User.objects.get(pk=alice.pk).language == "fr"
    assert User.objects.get(pk=teacher.pk).language == "en"
    # The model answered once for the tool call and once for the reply; the summary once.
    assert len(llm.calls("chat")) == 2 and len(llm.calls("summary")) == 1
    seen = result["seen"]
    assert seen["reply"] == REPLY and 0 < len(seen["partial_reply"]) < len(REPLY)
    assert EXPECT["teacherNote"]["title"] not in seen["student_memories_after_teacher"]
    assert all(Path(p).is_file() for p in result["screenshots"])
