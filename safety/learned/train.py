"""Training the learned screen's heads on the labelled corpus (`manage.py safety_train`,
docs/safety.md "The learned screen").

Contract:

- The training sets are JSON-lines files in the format of safety/corpus/LABELLING.md; each file
  is one writer (`Case.source`). The blind sets are never read here.
- `out_of_fold` scores every case with heads trained on the other writers only (leave one
  writer out, vocabulary included): the development split on which the thresholds are chosen is
  always a writer the heads did not see, as the blind sets and a school's students are.
- `line_severity` is the offline line's severity as the product combines it
  (safety.learned.line): the learned crisis, else a concern from the flag head, else nothing;
  the rules' findings are kept, but a rule's crisis the crisis head does not confirm is a concern
  (sexual content involving minors stays a crisis).
- `choose_thresholds` picks, on the out-of-fold scores, the highest crisis threshold whose
  crisis recall reaches `crisis_recall`, then the highest flag threshold whose concern recall
  (concern messages flagged at any level) reaches `concern_recall`: crisis recall first, false
  alarms as few as that allows.
- `train` fits the heads on every training case and returns a `Head` whose card records the
  corpus (files, counts, a digest), the settings, the development figures at the thresholds
  and the precision-recall curve of the crisis head. Deterministic for the same files. It needs
  scikit-learn (a development dependency); screening needs numpy only.
"""

from __future__ import annotations

import datetime
import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from safety import offline
from safety.evaluation import Case, Outcome, Report, load_cases
from safety.learned.features import CATEGORIES, Vocabulary, dense_rows, sparse_row
from safety.learned.model import Head, probabilities_of
from safety.types import RANK, Category, Signal, rank

CRISIS, CONCERN = 3, 2
DEFAULT_EMBEDDERS = ("use",)


def corpus(paths: Sequence[Path]) -> list[Case]:
    """The cases of every file of `paths`, in order."""
    return [case for path in paths for case in load_cases(path)]


def digest(paths: Sequence[Path]) -> str:
    """A digest of the files' names and bytes: what a head was trained on."""
    h = hashlib.sha256()
    for path in sorted(paths, key=lambda p: p.name):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


class Matrix:
    """The cases' features: the dense part once, the sparse part per vocabulary."""

    def __init__(self, cases: Sequence[Case], embedders: Sequence[str], context_size: int) -> None:
        self.cases = list(cases)
        self.contexts = [list(c.context)[-context_size:] if context_size else [] for c in cases]
        self.rules: list[list[Signal]] = [offline.screen(c.text).signals for c in cases]
        self.dense = dense_rows(embedders, [c.text for c in cases], self.contexts, self.rules)

    def sparse(self, vocabulary: Vocabulary, rows: np.ndarray) -> Any:
        from scipy.sparse import csr_matrix

        data, indices, indptr = [], [], [0]
        for i in rows:
            idx, val = sparse_row(vocabulary, self.cases[i].text, self.contexts[i])
            indices.append(idx)
            data.append(val)
            indptr.append(indptr[-1] + len(idx))
        return csr_matrix(
            (np.concatenate(data), np.concatenate(indices), np.array(indptr)),
            shape=(len(rows), 2 * len(vocabulary.grams)),
        )

    def rules_severity(self) -> np.ndarray:
        return np.array([max((rank(s.severity) for s in signals), default=0) for signals in self.rules])

    def rules_crisis_minors(self) -> np.ndarray:
        return np.array([any(s.category == Category.SEXUAL_MINORS for s in signals) for signals in self.rules])


def _labels(cases: Sequence[Case]) -> tuple[np.ndarray, np.ndarray]:
    severity = np.array([rank(c.severity) for c in cases])
    category = np.array([CATEGORIES.index(Category(c.category)) if c.category else -1 for c in cases])
    return severity, category


def fit(matrix: Matrix, rows: np.ndarray, *, c: float) -> tuple[Vocabulary, np.ndarray, np.ndarray, np.ndarray]:
    """The vocabulary of `rows`' texts and the heads fitted on them: (vocabulary, dense_w,
    sparse_w, bias)."""
    from scipy.sparse import csr_matrix, hstack
    from sklearn.linear_model import LogisticRegression

    cases = [matrix.cases[i] for i in rows]
    vocabulary = Vocabulary.build([case.text for case in cases])
    x = hstack([matrix.sparse(vocabulary, rows), csr_matrix(matrix.dense[rows])]).tocsr()
    severity, category = _labels(cases)
    n_sparse = 2 * len(vocabulary.grams)
    weights = np.zeros((2 + len(CATEGORIES), x.shape[1]))
    bias = np.zeros(2 + len(CATEGORIES))
    for head, target in enumerate((severity >= CRISIS, severity >= CONCERN)):
        model = LogisticRegression(C=c, max_iter=5000, class_weight="balanced").fit(x, target.astype(int))
        weights[head], bias[head] = model.coef_[0], model.intercept_[0]
    risky = category >= 0
    model = LogisticRegression(C=c, max_iter=5000, class_weight="balanced").fit(x[risky], category[risky])
    bias[2:] = -30.0  # a category no case has is never chosen
    for i, label in enumerate(model.classes_):
        weights[2 + label], bias[2 + label] = model.coef_[i], model.intercept_[i]
    return vocabulary, weights[:, n_sparse:], weights[:, :n_sparse], bias


def _head(
    fitted: tuple[Vocabulary, np.ndarray, np.ndarray, np.ndarray], embedders: Sequence[str], context_size: int
) -> Head:
    vocabulary, dense_w, sparse_w, bias = fitted
    return Head(tuple(embedders), context_size, vocabulary, dense_w, sparse_w, bias, 0.5, 0.5, {})


def scores(head: Head, matrix: Matrix, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """P(crisis) and P(flag) of `rows` under `head`."""
    sparse = [sparse_row(head.vocabulary, matrix.cases[i].text, matrix.contexts[i]) for i in rows]
    probabilities = probabilities_of(head.logits(matrix.dense[rows], sparse))
    return np.array([p.crisis for p in probabilities]), np.array([p.flag for p in probabilities])


def out_of_fold(
    matrix: Matrix, *, c: float, embedders: Sequence[str], context_size: int
) -> tuple[np.ndarray, np.ndarray]:
    """P(crisis) and P(flag) of each case from heads trained without its writer."""
    sources = np.array([case.source for case in matrix.cases])
    p_crisis, p_flag = np.zeros(len(sources)), np.zeros(len(sources))
    for source in sorted(set(sources)):
        held = np.flatnonzero(sources == source)
        kept = np.flatnonzero(sources != source)
        head = _head(fit(matrix, kept, c=c), embedders, context_size)
        p_crisis[held], p_flag[held] = scores(head, matrix, held)
    return p_crisis, p_flag


def line_severity(
    rules: np.ndarray, minors: np.ndarray, p_crisis: np.ndarray, p_flag: np.ndarray, t_crisis: float, t_flag: float
) -> np.ndarray:
    """The line's severity rank per case (see the module's contract)."""
    learned = np.where(p_crisis >= t_crisis, CRISIS, np.where(p_flag >= t_flag, CONCERN, 0))
    kept_rules = np.where((rules == CRISIS) & ~minors & (learned < CRISIS), CONCERN, rules)
    return np.maximum(kept_rules, learned)


def outcomes(cases: Sequence[Case], predicted: np.ndarray) -> list[Outcome]:
    """The cases at their predicted severity ranks, as safety.evaluation counts them."""
    severity_of = {n: severity.value for severity, n in RANK.items()}
    return [
        Outcome(case=case, severity=severity_of.get(int(n)), categories=(), rules=())
        for case, n in zip(cases, predicted, strict=True)
    ]


def figures(cases: Sequence[Case], predicted: np.ndarray, language: str | None = None) -> dict[str, float | int]:
    """The targets' three figures (safety.evaluation.Report.targets) on `cases` given predicted
    severity ranks, as shares: crisis recall, concern messages flagged at any level, ordinary
    and hyperbole flagged as crisis; then ordinary and hyperbole flagged as concern or crisis,
    and the counts."""
    report = Report(outcomes(cases, predicted))
    targets = report.targets(language)
    crisis = targets["crisis found as crisis"]
    concern = targets["concern flagged at any level"]
    negatives = targets["ordinary and hyperbole flagged as crisis"]
    alarms = sum(rank(o.severity) >= CONCERN for o in report.negatives if language in (None, o.case.language))

    def share(hits: int, of: int) -> float:
        return round(hits / of, 4) if of else float("nan")

    return {
        "crisis_recall": share(*crisis),
        "concern_any": share(*concern),
        "negatives_crisis": share(*negatives),
        "negatives_concern": share(alarms, negatives[1]),
        "crisis": crisis[1],
        "concern": concern[1],
        "negatives": negatives[1],
    }


GRID = np.round(np.arange(0.99, 0.009, -0.01), 2)


def choose_thresholds(
    matrix: Matrix, p_crisis: np.ndarray, p_flag: np.ndarray, *, crisis_recall: float, concern_recall: float
) -> tuple[float, float]:
    """The highest thresholds that reach the recalls asked for (see the module's contract)."""
    cases, rules, minors = matrix.cases, matrix.rules_severity(), matrix.rules_crisis_minors()

    def at(t_crisis: float, t_flag: float) -> dict[str, float | int]:
        return figures(cases, line_severity(rules, minors, p_crisis, p_flag, t_crisis, t_flag))

    t_crisis = next((float(t) for t in GRID if at(t, 1.01)["crisis_recall"] >= crisis_recall), 0.01)
    t_flag = next((float(t) for t in GRID if at(t_crisis, t)["concern_any"] >= concern_recall), 0.01)
    return t_crisis, t_flag


def curve(matrix: Matrix, p_crisis: np.ndarray) -> list[dict[str, float]]:
    """Crisis recall and precision, and negatives flagged as crisis, at thresholds 0.05 to 0.95."""
    severity, _ = _labels(matrix.cases)
    rules, minors = matrix.rules_severity(), matrix.rules_crisis_minors()
    points = []
    for t in np.round(np.arange(0.05, 0.96, 0.05), 2):
        predicted = line_severity(rules, minors, p_crisis, np.zeros(len(severity)), float(t), 1.01)
        said = predicted == CRISIS
        found = said & (severity == CRISIS)
        f = figures(matrix.cases, predicted)
        points.append(
            {
                "threshold": float(t),
                "crisis_recall": f["crisis_recall"],
                "crisis_precision": round(float(found.sum() / said.sum()), 4) if said.any() else 1.0,
                "negatives_crisis": f["negatives_crisis"],
            }
        )
    return points


def train(
    paths: Sequence[Path],
    *,
    embedders: Sequence[str] = DEFAULT_EMBEDDERS,
    context_size: int = 3,
    c: float = 4.0,
    crisis_recall: float = 0.88,
    concern_recall: float = 0.72,
) -> Head:
    """Heads fitted on every case of `paths`, thresholds chosen out of fold (see the contract)."""
    matrix = Matrix(corpus(paths), embedders, context_size)
    p_crisis, p_flag = out_of_fold(matrix, c=c, embedders=embedders, context_size=context_size)
    t_crisis, t_flag = choose_thresholds(
        matrix, p_crisis, p_flag, crisis_recall=crisis_recall, concern_recall=concern_recall
    )
    predicted = line_severity(matrix.rules_severity(), matrix.rules_crisis_minors(), p_crisis, p_flag, t_crisis, t_flag)
    card = {
        "trained": datetime.date.today().isoformat(),
        "files": [p.name for p in paths],
        "digest": digest(paths),
        "cases": len(matrix.cases),
        "c": c,
        "targets": {"crisis_recall": crisis_recall, "concern_recall": concern_recall},
        "development": {lang or "all": figures(matrix.cases, predicted, lang) for lang in (None, "fr", "en")},
        "rules_alone": {
            lang or "all": figures(matrix.cases, matrix.rules_severity(), lang) for lang in (None, "fr", "en")
        },
        "crisis_curve": curve(matrix, p_crisis),
    }
    fitted = fit(matrix, np.arange(len(matrix.cases)), c=c)
    vocabulary, dense_w, sparse_w, bias = fitted
    return Head(tuple(embedders), context_size, vocabulary, dense_w, sparse_w, bias, t_crisis, t_flag, card)
