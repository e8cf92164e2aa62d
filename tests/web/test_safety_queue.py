"""The teacher page's safety queue in Chromium (tests/web/safety.mjs), against the production
server: an alert's link opens the queue on its flag; the teacher acknowledges one flag and
resolves another through the API; the database keeps both in the flags' log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from safety.models import Flag, FlagAction
from tests.conftest import ROOT
from tests.safety.test_flags_api import make_flag, talk
from tests.web.conftest import run_browser_script

SCRIPT = ROOT / "tests" / "web" / "safety.mjs"


@pytest.mark.browser
def test_the_teacher_works_the_safety_queue(browser, server, artifacts_dir, school) -> None:
    """Open flags come first, the most severe first, closed ones last; each card shows its
    severity, category, excerpt, student and time; carol's flag (another class) is not there.
    The page opened on `#flag-<id>` focuses that flag; a flag's "Read the conversation" opens
    its transcript at the flagged message. Acknowledging (with a note) and resolving
    as a false positive (with what was done) change the cards and are in the flags' log, by the
    teacher; the labels are translated."""
    teacher = school["teacher_a"]
    teacher.set_password("web-teacher_a")
    teacher.save(update_fields=["password"])
    alice_lines = talk(school["alice"], 6)
    bob_lines = talk(school["bob"], 2)
    resolved = make_flag(school["alice"], alice_lines[0], status=Flag.Status.RESOLVED, outcome="Talked it over.")
    quietly = {"answered": True, "signals": [{"category": "distress", "severity": "concern", "quiet": True}]}
    concern = make_flag(school["bob"], bob_lines[0], excerpt="I feel alone at lunch", scores={"learned": quietly})
    crisis = make_flag(
        school["alice"], alice_lines[2], category="self_harm", severity="crisis", excerpt="I want to hurt myself"
    )
    info = make_flag(school["alice"], alice_lines[4], category="jailbreak", severity="info")
    carol = make_flag(school["carol"], talk(school["carol"], 2)[0])
    config = {
        "baseUrl": server,
        "chromium": browser["chromium"],
        "artifacts": str(artifacts_dir),
        "teacher": {"username": "teacher_a", "password": "web-teacher_a"},
        "anchored": concern.pk,
        "acknowledge": {"id": concern.pk, "note": "Spoke with bob at lunch."},
        "resolve": {"id": info.pk, "note": "A game, not a jailbreak.", "outcome": "false_positive"},
        "read": crisis.pk,
    }
    result = _run(browser, artifacts_dir, config)

    seen: dict[str, Any] = result["seen"]
    before = seen["before"]
    assert [c["id"] for c in before] == [crisis.pk, concern.pk, info.pk, resolved.pk]
    assert carol.pk not in {c["id"] for c in before}
    assert [c["anchor"] for c in before] == [f"flag-{c['id']}" for c in before]
    assert seen["focused"] == f"flag-{concern.pk}"
    first = before[0]
    assert first["heading"] == "Crisis Self-harm" and first["excerpt"] == "I want to hurt myself"
    assert first["fields"]["flag_student"] == "alice" and first["fields"]["flag_status"] == "Open"
    assert first["canAcknowledge"] and first["canResolve"]
    assert not before[3]["canAcknowledge"] and not before[3]["canResolve"]
    assert before[3]["fields"]["flag_outcome"] == "Talked it over."
    # A quiet concern says it alerted no one; the others have no such line.
    assert before[1]["fields"]["flag_alert"].startswith("None: a less certain finding")
    assert all("flag_alert" not in c["fields"] for c in (before[0], before[2], before[3]))

    after = {c["id"]: c for c in seen["after"]}
    assert after[concern.pk]["fields"]["flag_status"] == "Acknowledged" and after[concern.pk]["canResolve"]
    assert after[info.pk]["fields"]["flag_status"] == "False positive" and not after[info.pk]["canResolve"]
    # "Read the conversation" on the crisis flag: alice's transcript, the flagged message marked and in view.
    read = seen["read"]
    assert read["heading"].startswith("Fractions") and read["student"].startswith("alice")
    assert read["marked"] == alice_lines[2].content and read["messages"] == 6 and read["inView"]
    french = {c["id"]: c for c in seen["french"]}
    assert french[crisis.pk]["heading"] == "Crise Automutilation"
    assert french[concern.pk]["fields"]["flag_alert"].startswith("Aucune : un signal moins sûr")
    assert result["pageErrors"] == []

    concern.refresh_from_db()
    info.refresh_from_db()
    assert concern.status == Flag.Status.ACKNOWLEDGED and concern.escalate_at is None
    assert (info.status, info.outcome) == (Flag.Status.FALSE_POSITIVE, "A game, not a jailbreak.")
    log = FlagAction.objects.filter(flag__in=[concern, info]).exclude(kind=FlagAction.Kind.CREATED)
    assert sorted(log.values_list("flag_id", "kind", "actor_id", "note")) == sorted(
        [
            (concern.pk, "acknowledged", teacher.pk, "Spoke with bob at lunch."),
            (info.pk, "resolved", teacher.pk, "A game, not a jailbreak."),
        ]
    )
    crisis.refresh_from_db()
    assert crisis.status == Flag.Status.OPEN and crisis.actions.count() == 1


def _run(browser: dict[str, str], artifacts_dir: Path, config: dict[str, Any]) -> dict[str, Any]:
    return run_browser_script(browser, SCRIPT, config, artifacts_dir, "safety queue")
