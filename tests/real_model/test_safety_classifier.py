"""The safety classifier (safety.backends, "classifier") on a real model server nobody here wrote:
llama-cpp-python with SmolLM2-135M-Instruct (fixtures in conftest.py).

These tests check what the product guarantees, not the model's judgement (a 135M model's
verdicts are close to chance; bench/safety_eval.py measures them on the whole labelled set):

- every message of a stratified sample of the labelled set (crises, concerns, info, ordinary
  talk and hyperbole, in French and in English) gets a verdict the product reads: the backend
  answered, with no error, and each call is metered;
- a crisis sent through the API with SAFETY_BACKENDS=["classifier"], the classifier and the
  chat sharing the one server, still completes with a reply, the offline line's crisis notice
  and flag, and the classifier's calls metered.
"""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from bench.safety_eval import stratified_sample, stratum
from llm.models import LLMUsage
from llm.windows import model_id
from safety.backends import CLASSIFIER, screen_backends_sync
from safety.evaluation import Case, load_cases
from safety.models import Flag
from tests.conftest import ROOT
from tests.conversations.test_turn import send, start
from tests.real_model.conftest import PATIENCE_SECONDS, RealModel
from tests.real_model.test_real_model import error_of

pytestmark = pytest.mark.real_model

SAMPLE_SIZE = 12
SAMPLE_SEED = 0
# Each classifier call's limit (SAFETY_BACKEND_TIMEOUT_SECONDS): the product's default is for a
# chat turn on a fast endpoint; here a verdict is awaited (an event) on 2 shared cores, where an
# answer that runs to CLASSIFIER_MAX_TOKENS takes seconds, and minutes under load.
CALL_TIMEOUT_SECONDS = PATIENCE_SECONDS
# The strata the sample must hold for the test to mean what it says.
REQUIRED_STRATA = {
    (kind, severity, language)
    for kind, severity in (("risk", "crisis"), ("risk", "concern"), ("ordinary", "-"), ("hyperbole", "-"))
    for language in ("en", "fr")
}
CRISIS = "i want to kill myself tonight, i can't do this anymore"


def sample() -> list[Case]:
    """SAMPLE_SIZE cases of the labelled set, stratified by kind, severity and language."""
    return stratified_sample(load_cases(ROOT / "safety/corpus/train/messages.jsonl"), SAMPLE_SIZE, seed=SAMPLE_SEED)


def test_the_sample_covers_crises_concerns_ordinary_talk_and_hyperbole_in_both_languages() -> None:
    """The sample the next test screens holds a crisis, a concern, ordinary talk and hyperbole
    in English and in French."""
    cases = sample()
    assert len(cases) == SAMPLE_SIZE
    assert {stratum(case) for case in cases} >= REQUIRED_STRATA


@pytest.mark.django_db
def test_every_message_of_a_sample_gets_a_verdict_the_product_reads(real_llm: RealModel, settings: Any) -> None:
    """Through screen_backends_sync, the real model's structured answer to every message of the
    sample is read as a verdict: answered, no error, signals (if any) named for the classifier,
    and one successful metered call per message under the server's model."""
    settings.SAFETY_BACKEND_TIMEOUT_SECONDS = CALL_TIMEOUT_SECONDS
    cases = sample()
    unread = []
    for case in cases:
        [result] = screen_backends_sync(case.text, backends=[CLASSIFIER])
        assert result.backend == CLASSIFIER
        if not result.answered or result.error:
            unread.append(f"{case.text!r}: {result.error}")
            continue
        assert all(signal.rule == "classifier:message" for signal in result.signals), result
        assert len(result.scores) == 1, result
    assert not unread, f"{len(unread)} of {len(cases)} answers not read as a verdict:\n" + "\n".join(unread)
    calls = LLMUsage.objects.filter(purpose=LLMUsage.Purpose.SAFETY, ok=True)
    assert calls.count() == len(cases)
    assert set(calls.values_list("model", flat=True)) == {model_id(real_llm.model)}


def test_a_crisis_turn_screened_by_the_classifier_completes_with_a_reply(
    school: dict[str, Any], clients: dict[str, APIClient], real_llm: RealModel, settings: Any
) -> None:
    """With the classifier as the only backend, on the server that also writes the reply, a
    crisis turn is answered 201 with a stored, non-empty reply, the crisis notice (the offline
    line does not wait for the classifier) and a crisis flag; the classifier screened the turn
    (its calls are metered for the student), and screening did not fail the turn."""
    settings.SAFETY_BACKENDS = [CLASSIFIER]
    settings.SAFETY_BACKEND_TIMEOUT_SECONDS = CALL_TIMEOUT_SECONDS
    cid = start(clients["alice"])
    resp = send(clients["alice"], cid, CRISIS, "crisis-1")
    assert resp.status_code == 201, error_of(resp)
    body = resp.json()
    assert body["reply"]["content"].strip()
    [notice] = body["safety"]
    assert notice["severity"] == "crisis"
    flag = Flag.objects.get(message_id=body["student_message"]["id"])
    assert flag.severity == "crisis"
    screened = LLMUsage.objects.filter(purpose=LLMUsage.Purpose.SAFETY, student=school["alice"])
    assert screened.exists()
    # The chat model was asked after screening. SmolLM2-135M sometimes answers a crisis prompt
    # with nothing; the turn then stores the crisis reply written by the product, which is the
    # behaviour under test (a reply, whatever the model does), so either outcome passes.
    chat = LLMUsage.objects.filter(purpose=LLMUsage.Purpose.CHAT, student=school["alice"])
    assert chat.exists()
