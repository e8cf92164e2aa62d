"""The learned screen (safety.learned): the shipped head was trained on the corpus in the
repository; the offline line (rules and learned screen) keeps its floors on the blind sets, in
French and in English; context changes a verdict; a rule's crisis the model does not confirm is a
concern; the screen can be turned off; training writes a head the screen reads."""

from __future__ import annotations

import io
import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command

from safety import learned, offline, recording
from safety.evaluation import evaluate, load_cases
from safety.learned.features import WORD_CHARS_CACHED, char_ngrams, sparse_row
from safety.learned.model import HEAD_PATH, Head
from safety.learned.train import digest
from safety.models import Flag
from safety.types import BackendResult, Category, Severity, Signal, Verdict, combine

CORPUS = Path(__file__).resolve().parents[2] / "safety" / "corpus"
BLIND = sorted((CORPUS / "blind").glob("*.jsonl"))
# Just under what the shipped head measured on the blind sets (docs/safety.md, "Evaluation"): a
# change that loses what the line found there fails. Per language: crisis found as crisis (at
# least), concern flagged at any level (at least), ordinary and hyperbole flagged as crisis (at
# most).
FLOORS = {
    "fr": {
        "crisis found as crisis": 0.90,
        "concern flagged at any level": 0.73,
        "ordinary and hyperbole flagged as crisis": 0.02,
    },
    "en": {
        "crisis found as crisis": 0.87,
        "concern flagged at any level": 0.73,
        "ordinary and hyperbole flagged as crisis": 0.015,
    },
}


def line(text: str, context: tuple[str, ...] | list[str] = ()) -> Verdict:
    return combine(learned.screen_message(text, list(context)))


def test_the_shipped_head_was_trained_on_the_corpus_in_the_repository():
    card = Head.load(HEAD_PATH).card
    train = sorted((CORPUS / "train").glob("*.jsonl"))
    assert card["files"] == [p.name for p in train]
    assert card["digest"] == digest(train), "the corpus changed: run `manage.py safety_train` and commit the head"


def plain_row(head: Head, index: dict[str, int], text: str) -> tuple[np.ndarray, np.ndarray]:
    """A text's n-gram row as the features' contract defines it, one n-gram at a time."""
    counts = Counter(g for g in char_ngrams(text) if g in index)
    indices = np.array([index[g] for g in counts], dtype=np.int64)
    values = np.array([1 + math.log(n) for n in counts.values()], dtype=np.float32) * head.vocabulary.idf[indices]
    return indices, values / np.linalg.norm(values) if len(values) else values


def test_the_n_gram_rows_are_those_of_their_definition_over_the_whole_corpus():
    head = learned.head()
    index = {g: i for i, g in enumerate(head.vocabulary.grams)}
    cases = [case for path in sorted(CORPUS.glob("*/*.jsonl")) for case in load_cases(path)]
    long_word = "un" * WORD_CHARS_CACHED + " hahahaha " * 300  # a word not kept, a count past the table's
    texts = [case.text for case in cases] + [" ".join(head.context_of(case.context)) for case in cases] + [long_word]
    plain = [plain_row(head, index, text) for text in texts]
    for _ in range(2):  # the second time, every word is one the vocabulary kept
        rows = [head.vocabulary.row(text) for text in texts]
        assert [len(i) for i, _ in rows] == [len(i) for i, _ in plain]
        np.testing.assert_array_equal(np.concatenate([i for i, _ in rows]), np.concatenate([i for i, _ in plain]))
        np.testing.assert_allclose(
            np.concatenate([v for _, v in rows]), np.concatenate([v for _, v in plain]), rtol=1e-6
        )
    case = next(case for case in cases if len(case.context) >= 3)
    indices, values = sparse_row(head.vocabulary, case.text, head.context_of(case.context))
    context_indices, context_values = plain_row(head, index, " ".join(head.context_of(case.context)))
    n = len(plain_row(head, index, case.text)[0])
    np.testing.assert_array_equal(indices[n:], context_indices + len(head.vocabulary.grams))
    np.testing.assert_allclose(values[n:], 0.5 * context_values, rtol=1e-6)


@pytest.fixture(scope="module")
def blind_report():
    return evaluate(line, [case for path in BLIND for case in load_cases(path)])


@pytest.mark.parametrize("language", ["fr", "en"])
def test_floors_on_the_blind_sets(blind_report, language):
    figures = blind_report.targets(language)
    for name, (hits, of) in figures.items():
        share = hits / of
        floor = FLOORS[language][name]
        if name.startswith("ordinary"):
            assert share <= floor, (language, name, hits, of, blind_report.targets_markdown())
        else:
            assert share >= floor, (language, name, hits, of, blind_report.targets_markdown())


def test_context_makes_a_crisis_of_a_message_that_alone_is_not():
    alone = line("i have the pills in my drawer")
    after = line("i have the pills in my drawer", ["i cant do this anymore", "everyone would be better off"])
    assert after.severity == Severity.CRISIS, after.scores()
    assert after.scores()["learned"]["scores"]["crisis"] > alone.scores()["learned"]["scores"]["crisis"]


def test_a_question_about_a_novel_after_a_literature_assignment_is_not_a_crisis():
    verdict = line(
        "why did she kill herself at the end?",
        ["we have to write an essay on Anna Karenina for lit", "im on the last part, the train station"],
    )
    assert verdict.severity != Severity.CRISIS, verdict.scores()


@pytest.mark.parametrize(
    "text", ["ugh kms this essay lol", "jvais crever de chaud dans cette salle", "kms this essay lol"]
)
def test_hyperbole_is_not_a_crisis(text):
    assert line(text).severity != Severity.CRISIS, line(text).scores()


def test_a_rules_crisis_the_model_does_not_confirm_is_still_a_concern():
    rules = offline.screen("kms this essay lol")
    assert any(s.severity == Severity.CRISIS for s in rules.signals), "the rules call it a crisis"
    verdict = line("kms this essay lol")
    assert verdict.severity == Severity.CONCERN
    assert any(s.rule.endswith(":unconfirmed") for s in verdict.signals)


def test_sexual_content_involving_a_minor_stays_a_crisis_whatever_the_model_says(monkeypatch):
    monkeypatch.setattr(Head, "signal", lambda self, p: None)
    verdict = line("he's 25 and keeps asking me for nudes, i'm 13")
    assert verdict.severity == Severity.CRISIS
    assert Category.SEXUAL_MINORS.value in verdict.categories


def test_off_the_rules_stand_alone(settings):
    settings.SAFETY_LEARNED = False
    rules_result, learned_result = learned.screen_message("kms this essay lol")
    assert not learned_result.answered and "SAFETY_LEARNED" in learned_result.error
    assert rules_result == offline.screen("kms this essay lol")


def test_a_failing_screen_leaves_the_rules_unchanged(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("no model")

    monkeypatch.setattr(Head, "probabilities", broken)
    rules_result, learned_result = learned.screen_message("kms this essay lol")
    assert not learned_result.answered and "no model" in learned_result.error
    assert rules_result == offline.screen("kms this essay lol")


def test_training_writes_a_head_the_screen_reads(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    train = sorted((CORPUS / "train").glob("t*.jsonl"))[:2]
    for path in train:  # two small writers: 60 cases each, every kind
        lines = path.read_text(encoding="utf-8").splitlines()
        (corpus / path.name).write_text("\n".join(lines[:: max(1, len(lines) // 60)]) + "\n", encoding="utf-8")
    output = tmp_path / "head.npz"
    call_command("safety_train", corpus=corpus, output=output, embedders="use", stdout=io.StringIO())
    head = Head.load(output)
    assert head.embedders == ("use",) and 0 < head.threshold_crisis < 1 and 0 < head.threshold_flag < 1
    assert head.card["files"] == sorted(p.name for p in train)
    assert json.loads(json.dumps(head.card["development"]))["all"]["crisis"] > 0
    p = head.probabilities("je veux en finir ce soir", [], offline.screen("je veux en finir ce soir").signals)
    assert 0 <= p.crisis <= 1 and abs(float(p.categories.sum()) - 1) < 1e-5


@pytest.mark.parametrize(
    ("signal", "alerted"),
    [
        (Signal(Category.DISTRESS, Severity.CONCERN, 0.95, "learned.concern", quiet=True), False),
        (Signal(Category.SELF_HARM, Severity.CONCERN, 1.0, "en.self_harm.intent:unconfirmed", quiet=True), False),
        (Signal(Category.DISTRESS, Severity.CONCERN, 1.0, "en.distress.hopeless"), True),
        (Signal(Category.SELF_HARM, Severity.CRISIS, 0.9, "learned.crisis"), True),
    ],
)
def test_a_quiet_concern_waits_in_the_teachers_queue_without_an_alert(school, monkeypatch, signal, alerted):
    enqueued: list[str] = []
    monkeypatch.setattr(recording.background, "enqueue", lambda name, *args, **kwargs: enqueued.append(name))
    verdict = combine([BackendResult("learned", answered=True, signals=[signal])])
    flag = recording.flag_record(student_id=school["alice"].pk, source=Flag.Source.MESSAGE, verdict=verdict)
    assert flag is not None and flag.severity == signal.severity
    assert ("safety.tasks.flag_alert" in enqueued) is alerted
