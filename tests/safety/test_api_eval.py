"""The safety line measured over the API (bench/safety_api.py), its pure parts: the verdicts read
from the flags, counted as the in-process evaluation counts them, and the run's environment.
The whole bench runs in CI at its smallest size (bench/smoke.sh)."""

from __future__ import annotations

from pathlib import Path

from bench.safety_api import Found, differences, found_by_message, outcomes_of, server_env
from safety.evaluation import Case, Outcome, evaluate, tally
from tests.safety.test_evaluation import CASES, scripted

CRISIS = Case("die", "en", "self_harm", "crisis", "risk")
CONCERN = Case("cut", "fr", "self_harm", "concern", "risk")
ORDINARY = Case("maths", "en", None, None, "ordinary")


def flag(message: int | None, *, source: str = "message", severity: str = "crisis", **extra: object) -> dict:
    return {"message": message, "source": source, "severity": severity, "category": "self_harm", **extra}


def test_the_verdict_is_the_flag_on_the_students_message_with_every_category():
    """A reply's, a file's and a pattern's flags are not a message's verdict; a flag's
    categories include its most severe one."""
    flags = [
        flag(11, categories=["distress", "self_harm"]),
        flag(12, severity="concern", categories=[]),
        flag(13, source="reply"),
        flag(None, source="pattern", severity="concern"),
    ]
    assert found_by_message(flags) == {
        11: Found("crisis", ("distress", "self_harm")),
        12: Found("concern", ("self_harm",)),
    }


def test_each_case_is_matched_to_its_last_message_and_no_flag_is_no_verdict():
    found = {21: Found("crisis", ("self_harm",)), 99: Found("concern", ("violence",))}
    outcomes = outcomes_of([CRISIS, ORDINARY], [21, 22], found)
    assert [(o.severity, o.categories) for o in outcomes] == [("crisis", ("self_harm",)), (None, ())]


def test_outcomes_are_counted_as_the_in_process_evaluation_counts_them():
    """The same verdicts, counted by `tally` from outcomes or by `evaluate` from a screening
    function, give the same tables."""
    screened = evaluate(scripted, CASES)
    counted = tally(screened.outcomes)
    assert counted.markdown() == screened.markdown()
    assert counted.targets_markdown() == screened.targets_markdown()


def test_differences_count_verdicts_by_label_without_the_text():
    api = [
        Outcome(CRISIS, "crisis", ("self_harm",), ()),
        Outcome(CONCERN, None, (), ()),
        Outcome(ORDINARY, None, (), ()),
    ]
    local = [
        Outcome(CRISIS, "crisis", ("distress", "self_harm"), ()),
        Outcome(CONCERN, "concern", ("self_harm",), ()),
        Outcome(ORDINARY, None, (), ()),
    ]
    assert differences(api, local) == {
        "en crisis: crisis [self_harm] -> crisis [distress, self_harm]": 1,
        "fr concern: none [] -> concern [self_harm]": 1,
    }


def test_the_run_is_make_runs_embedded_default_with_the_demo_model(monkeypatch, tmp_path: Path):
    """Nothing of the caller's services or screening settings reaches the server: its own
    SQLite database and broker in the temporary directory, the demo model, the send throttle
    off."""
    for name, value in {
        "DATABASE_URL": "postgres://elsewhere/db",
        "REDIS_URL": "redis://127.0.0.1:6379/3",
        "SAFETY_LEARNED": "false",
        "SAFETY_BACKENDS": "moderation",
        "LLM_API_KEY": "sk-real",
        "EMBEDDINGS_BACKEND": "local",
    }.items():
        monkeypatch.setenv(name, value)
    env = server_env(var=tmp_path, port=8123, model_port=8124, web_concurrency=2)
    assert not {"DATABASE_URL", "REDIS_URL", "SAFETY_LEARNED", "SAFETY_BACKENDS", "LLM_API_KEY"} & set(env)
    assert env["TUTOR_VAR_DIR"] == str(tmp_path)
    assert env["RUN_ADDR"] == "127.0.0.1:8123"
    assert (env["LLM_BASE_URL"], env["LLM_DEMO_MODEL"]) == ("http://127.0.0.1:8124/v1", "1")
    assert env["EMBEDDINGS_BACKEND"] == "none"
    assert env["THROTTLE_SEND_RATE"] == ""
