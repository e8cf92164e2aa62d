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
`size` most frequent); `Vocabulary.row(text)` is (indices, values) of one text, the indices in
the order their n-grams first occur in it (`char_ngrams`' order), the same whatever the
vocabulary has read before. A vocabulary keeps the indices of the last `WORDS_CACHED` words it
read, of up to `WORD_CHARS_CACHED` characters each (words repeat: a message costs a lookup per
word, not per n-gram; about 12 MB when full).
`sparse_row` and `dense_rows` give the two parts.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from safety.learned import embedders
from safety.types import Category, Severity, Signal

CATEGORIES = tuple(Category)
SEVERITIES = (Severity.CRISIS, Severity.CONCERN, Severity.INFO)
CONTEXT_WEIGHT = 0.5
NGRAMS = range(2, 6)
WORDS_CACHED = 32_768
WORD_CHARS_CACHED = 32
# 1 + ln(n) for the counts a text's n-gram usually has, as `Vocabulary.row` weighs them.
_LOG_WEIGHTS = np.array([0.0] + [1 + math.log(n) for n in range(1, 256)], dtype=np.float32)


def word_ngrams(word: str) -> list[str]:
    """The character n-grams of one (lower-cased) word, padded with one space either side."""
    padded = f" {word} "
    return [padded[i : i + n] for n in NGRAMS for i in range(len(padded) - n + 1)]


def char_ngrams(text: str) -> list[str]:
    """The character n-grams of `text`'s words, each word padded with one space either side."""
    return [gram for word in text.lower().split() for gram in word_ngrams(word)]


@dataclass(frozen=True)
class Vocabulary:
    """The n-grams the screen knows, with their inverse document frequencies."""

    grams: tuple[str, ...]
    idf: np.ndarray
    _indices: Callable[[str], tuple[int, ...]] = field(init=False, compare=False, repr=False)
    _cached: Callable[[str], tuple[int, ...]] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        index = {g: i for i, g in enumerate(self.grams)}

        def indices(word: str) -> tuple[int, ...]:
            """The indices of the word's n-grams in the vocabulary, in their order."""
            return tuple(index[g] for g in word_ngrams(word) if g in index)

        object.__setattr__(self, "_indices", indices)
        object.__setattr__(self, "_cached", functools.lru_cache(maxsize=WORDS_CACHED)(indices))

    def _word(self, word: str) -> tuple[int, ...]:
        return self._cached(word) if len(word) <= WORD_CHARS_CACHED else self._indices(word)

    @classmethod
    def build(cls, texts: Sequence[str], *, min_df: int = 3, size: int = 60_000) -> Vocabulary:
        df: Counter[str] = Counter()
        for text in texts:
            df.update(set(char_ngrams(text)))
        kept = sorted((g for g, n in df.items() if n >= min_df), key=lambda g: (-df[g], g))[:size]
        grams = tuple(sorted(kept))
        idf = np.array([math.log((1 + len(texts)) / (1 + df[g])) + 1 for g in grams], dtype=np.float32)
        return cls(grams, idf)

    def row(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """The text's (indices, values): 1 + ln(count), times idf, L2-normalised."""
        counts = Counter(itertools.chain.from_iterable(map(self._word, text.lower().split())))
        if not counts:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        indices = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
        n = np.fromiter(counts.values(), dtype=np.int64, count=len(counts))
        if n.max() < len(_LOG_WEIGHTS):
            values = _LOG_WEIGHTS[n]
        else:
            values = np.fromiter((1 + math.log(c) for c in counts.values()), dtype=np.float32, count=len(counts))
        values *= self.idf[indices]
        values /= np.linalg.norm(values)
        return indices, values


def sparse_row(vocabulary: Vocabulary, text: str, context: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The sparse part: the message's n-grams, then the context's (offset by the vocabulary's size)."""
    indices, values = vocabulary.row(text)
    if context:
        c_indices, c_values = vocabulary.row(" ".join(context))
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
