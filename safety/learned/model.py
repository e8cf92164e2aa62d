"""The learned screen's model: linear heads over a message's features (safety.learned.features),
trained on the labelled corpus (safety/corpus, `manage.py safety_train`). The heads, their
vocabulary and their thresholds are in `head.npz`, beside this file.

Contract:

- `Head.load(path)` reads a head file; `Head.probabilities(text, context, rules)` gives
  P(crisis), P(flag) (concern or crisis) and the distribution over CATEGORIES of one message,
  read after `context` (at most `context_size` previous messages are used) and what the rules
  said of it (`rules`: their signals);
- `Head.signal(...)` turns them into at most one `Signal`:
  - a crisis when P(crisis) reaches `threshold_crisis`, in the most likely category among
    those a crisis can be (CRISIS_CATEGORIES);
  - else a quiet concern (to the teachers' queue, without an alert) when P(flag) reaches
    `threshold_flag`, in the most likely category but sexual content involving minors (a
    concern of that category would be raised to a crisis: the crisis head decides those);
  - else nothing. The rules give the info-level signals.
- Rows of the weights: 0 the crisis head, 1 the flag head (both logistic), then one per category
  (a softmax over them).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from safety.learned.features import CATEGORIES, Vocabulary, dense_rows, sparse_row
from safety.types import Category, Severity, Signal

HEAD_PATH = Path(__file__).with_name("head.npz")
CRISIS_CATEGORIES = frozenset({Category.SELF_HARM, Category.ABUSE, Category.VIOLENCE, Category.SEXUAL_MINORS})


@dataclass(frozen=True)
class Probabilities:
    crisis: float
    flag: float
    categories: np.ndarray


@dataclass(frozen=True)
class Head:
    """The trained weights (see the module's contract) and the thresholds chosen on the
    development split; `card` records how they were trained and what they measured."""

    embedders: tuple[str, ...]
    context_size: int
    vocabulary: Vocabulary
    dense_w: np.ndarray  # (2 + len(CATEGORIES), dense columns)
    sparse_w: np.ndarray  # (2 + len(CATEGORIES), 2 * vocabulary size): the message's, the context's
    bias: np.ndarray  # (2 + len(CATEGORIES),)
    threshold_crisis: float
    threshold_flag: float
    card: dict[str, Any]

    @classmethod
    def load(cls, path: Path = HEAD_PATH) -> Head:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            return cls(
                embedders=tuple(meta["embedders"]),
                context_size=int(meta["context_size"]),
                vocabulary=Vocabulary(tuple(str(g) for g in data["grams"]), data["idf"]),
                dense_w=data["dense_w"].astype(np.float32),
                sparse_w=data["sparse_w"].astype(np.float32),
                bias=data["bias"].astype(np.float32),
                threshold_crisis=float(meta["threshold_crisis"]),
                threshold_flag=float(meta["threshold_flag"]),
                card=meta["card"],
            )

    def save(self, path: Path = HEAD_PATH) -> None:
        meta = {
            "embedders": list(self.embedders),
            "context_size": self.context_size,
            "threshold_crisis": self.threshold_crisis,
            "threshold_flag": self.threshold_flag,
            "card": self.card,
        }
        np.savez_compressed(
            path,
            grams=np.array(self.vocabulary.grams),
            idf=self.vocabulary.idf.astype(np.float32),
            dense_w=self.dense_w.astype(np.float32),
            sparse_w=self.sparse_w.astype(np.float16),
            bias=self.bias.astype(np.float32),
            meta=np.array(json.dumps(meta, sort_keys=True)),
        )

    def context_of(self, context: Sequence[str]) -> list[str]:
        kept = [c for c in context if c.strip()]
        return kept[-self.context_size :] if self.context_size else []

    def logits(self, dense: np.ndarray, sparse: Sequence[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
        """The heads' logits of rows (n, dense columns) and their sparse parts."""
        out = dense @ self.dense_w.T + self.bias
        for i, (indices, values) in enumerate(sparse):
            if len(indices):
                out[i] += self.sparse_w[:, indices] @ values
        return out

    def probabilities(self, text: str, context: Sequence[str], rules: Sequence[Signal]) -> Probabilities:
        kept = self.context_of(context)
        dense = dense_rows(self.embedders, [text], [kept], [rules])
        sparse = [sparse_row(self.vocabulary, text, kept)]
        return _probabilities(self.logits(dense, sparse))[0]

    def signal(self, p: Probabilities) -> Signal | None:
        if p.crisis >= self.threshold_crisis:
            allowed = CRISIS_CATEGORIES
            severity, score = Severity.CRISIS, p.crisis
        elif p.flag >= self.threshold_flag:
            allowed = frozenset(CATEGORIES) - {Category.SEXUAL_MINORS}
            severity, score = Severity.CONCERN, p.flag
        else:
            return None
        best = max((i for i, c in enumerate(CATEGORIES) if c in allowed), key=lambda i: p.categories[i])
        return Signal(
            CATEGORIES[best],
            severity,
            score=round(float(score), 3),
            rule=f"learned.{severity.value}",
            quiet=severity == Severity.CONCERN,
        )


def _probabilities(logits: np.ndarray) -> list[Probabilities]:
    binary = 1.0 / (1.0 + np.exp(-logits[:, :2]))
    categories = logits[:, 2:] - logits[:, 2:].max(axis=1, keepdims=True)
    categories = np.exp(categories)
    categories /= categories.sum(axis=1, keepdims=True)
    return [Probabilities(float(b[0]), float(b[1]), c) for b, c in zip(binary, categories, strict=True)]


def probabilities_of(logits: np.ndarray) -> list[Probabilities]:
    """The probabilities of each row of logits (training, evaluation)."""
    return _probabilities(logits)
