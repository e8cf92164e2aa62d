"""The learned screen's features, built by one function for training and for screening.

A message with its context (the same student's previous messages, oldest first) becomes:

- a sparse part: the message's character n-grams (2 to 5, within words padded by a space, on
  the lower-cased text), weighted tf-idf over the training vocabulary and L2-normalised, then the
  context's, the same way, at half weight. They catch spelling, slang, emoji and laughing marks
  whatever the language;
- a dense part: for each embedder (safety.learned.embedders), the message's sentence embedding
  and the mean of its context's (zeros without one); 1.0 when there is a context; then what the
  rules (safety.offline) said of the message: one column per severity and per category.

Contract: `Vocabulary.build(texts)` keeps the n-grams found in at least `min_df` texts (the
`size` most frequent); `Vocabulary.row(text)` is (indices, values) of one text;
`dense_row` and `dense_rows` give the dense part.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from safety.learned import embedders
from safety.types import Category, Severity, Signal

CATEGORIES = tuple(Category)
SEVERITIES = (Severity.CRISIS, Severity.CONCERN, Severity.INFO)
CONTEXT_WEIGHT = 0.5
NGRAMS = range(2, 6)


def char_ngrams(text: str) -> list[str]:
    """The character n-grams of `text`'s words, each word padded with one space either side."""
    grams: list[str] = []
    for word in text.lower().split():
        padded = f" {word} "
        for n in NGRAMS:
            grams.extend(padded[i : i + n] for i in range(len(padded) - n + 1))
    return grams


@dataclass(frozen=True)
class Vocabulary:
    """The n-grams the screen knows, with their inverse document frequencies."""

    grams: tuple[str, ...]
    idf: np.ndarray

    @classmethod
    def build(cls, texts: Sequence[str], *, min_df: int = 3, size: int = 60_000) -> Vocabulary:
        df: Counter[str] = Counter()
        for text in texts:
            df.update(set(char_ngrams(text)))
        kept = sorted((g for g, n in df.items() if n >= min_df), key=lambda g: (-df[g], g))[:size]
        grams = tuple(sorted(kept))
        idf = np.array([math.log((1 + len(texts)) / (1 + df[g])) + 1 for g in grams], dtype=np.float32)
        return cls(grams, idf)

    def index(self) -> dict[str, int]:
        return {g: i for i, g in enumerate(self.grams)}

    def row(self, text: str, index: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
        """The text's (indices, values): 1 + ln(count), times idf, L2-normalised."""
        counts = Counter(g for g in char_ngrams(text) if g in index)
        if not counts:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        indices = np.fromiter((index[g] for g in counts), dtype=np.int64, count=len(counts))
        values = np.fromiter((1 + math.log(n) for n in counts.values()), dtype=np.float32, count=len(counts))
        values *= self.idf[indices]
        values /= np.linalg.norm(values)
        return indices, values


def sparse_row(
    vocabulary: Vocabulary, index: dict[str, int], text: str, context: Sequence[str]
) -> tuple[np.ndarray, np.ndarray]:
    """The sparse part: the message's n-grams, then the context's (offset by the vocabulary's size)."""
    indices, values = vocabulary.row(text, index)
    if context:
        c_indices, c_values = vocabulary.row(" ".join(context), index)
        indices = np.concatenate([indices, c_indices + len(vocabulary.grams)])
        values = np.concatenate([values, CONTEXT_WEIGHT * c_values])
    return indices, values


def rules_columns(signals: Sequence[Signal]) -> np.ndarray:
    columns = np.zeros(len(SEVERITIES) + len(CATEGORIES), dtype=np.float32)
    for signal in signals:
        columns[SEVERITIES.index(signal.severity)] = 1.0
        columns[len(SEVERITIES) + CATEGORIES.index(signal.category)] = 1.0
    return columns


def dense_rows(
    names: Sequence[str], texts: Sequence[str], contexts: Sequence[Sequence[str]], rules: Sequence[Sequence[Signal]]
) -> np.ndarray:
    """The dense part of several messages at once (training, evaluation)."""
    parts: list[np.ndarray] = []
    for name in names:
        rows = embedders.encode(name, list(texts))
        context_rows = np.zeros_like(rows)
        for i, context in enumerate(contexts):
            if context:
                context_rows[i] = embedders.encode(name, list(context)).mean(axis=0)
        parts += [rows, context_rows]
    parts.append(np.array([[1.0 if context else 0.0] for context in contexts], dtype=np.float32))
    parts.append(np.stack([rules_columns(signals) for signals in rules]))
    return np.hstack(parts).astype(np.float32)
