"""Explicit dates in a recall query ("on 3 June 2023", "in March 2024", "le 12 mars 2024").

A student or a teacher who names a date is asking about what happened then; memory.search.recall turns
the spans found here into a signal on each candidate's `created_at` (date_weight).

Recognised, in the student's language (en or fr; month names and their usual abbreviations):
- a day: `2023-06-03`, `3 June 2023`, `3rd of June, 2023`, `June 3, 2023`, `le 3 juin 2023`;
- a month: `June 2023`, `juin 2023`, and a month alone after a preposition (`in June`,
  `en juin`), taken as the latest such month not after `now`.
Numeric day/month forms (03/06/2023) are ambiguous between languages and are not read. Relative
expressions (yesterday, last week) are not read either.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import lru_cache

from memory.search.fts import fold_accents

_MONTHS = {
    "en": {
        **{name.lower(): i for i, name in enumerate(calendar.month_name) if name},
        **{name.lower(): i for i, name in enumerate(calendar.month_abbr) if name},
        "sept": 9,
    },
    "fr": {
        name: i
        for i, names in enumerate(
            [
                (),
                ("janvier", "janv"),
                ("fevrier", "fevr"),
                ("mars",),
                ("avril", "avr"),
                ("mai",),
                ("juin",),
                ("juillet", "juil"),
                ("aout",),
                ("septembre", "sept"),
                ("octobre", "oct"),
                ("novembre", "nov"),
                ("decembre", "dec"),
            ]
        )
        for name in names
    },
}
# Words after which a month alone names a month: "in June", "en juin".
_MONTH_ALONE_AFTER = {
    "en": "in|during|since|before|after|until|early|late|mid|last|of|from",
    "fr": "en|depuis|avant|apres|jusqu'en|debut|fin|mi|de|d'",
}


@dataclass(frozen=True)
class Span:
    """Whole days from `start` to `end` included."""

    start: date
    end: date


@dataclass(frozen=True)
class _Patterns:
    iso: re.Pattern[str]
    day_month_year: re.Pattern[str]
    month_day_year: re.Pattern[str]
    month_year: re.Pattern[str]
    month_alone: re.Pattern[str]


@lru_cache(maxsize=4)
def _patterns(language: str) -> _Patterns:
    months = "|".join(sorted(_MONTHS[language], key=len, reverse=True))
    month = rf"(?P<month>{months})\.?"
    day = r"(?P<day>\d{1,2})(?:st|nd|rd|th|er)?"
    year = r"(?P<year>\d{4})"
    return _Patterns(
        iso=re.compile(r"\b(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})\b"),
        day_month_year=re.compile(rf"\b{day}\s+(?:of\s+)?{month},?\s+{year}\b"),
        month_day_year=re.compile(rf"\b{month}\s+{day},?\s+{year}\b"),
        month_year=re.compile(rf"\b{month},?\s+{year}\b"),
        month_alone=re.compile(
            rf"(?:^|\s)(?:{_MONTH_ALONE_AFTER[language]})\s*-?\s*(?P<month>{months})\b(?!\.?,?\s+\d)"
        ),
    )


def date_spans(text: str, language: str, now: datetime) -> list[Span]:
    """The dates and months that `text` names, at most 4, in order of appearance."""
    language = language if language in _MONTHS else "en"
    months = _MONTHS[language]
    patterns = _patterns(language)
    folded = fold_accents(text)
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, Span]] = []

    def free(match: re.Match[str]) -> bool:
        return all(match.end() <= a or match.start() >= b for a, b in taken)

    for pattern in (patterns.iso, patterns.day_month_year, patterns.month_day_year):
        for match in pattern.finditer(folded):
            if not free(match):
                continue
            raw_month = match["month"]
            month_number = int(raw_month) if raw_month.isdigit() else months[raw_month]
            try:
                day = date(int(match["year"]), month_number, int(match["day"]))
            except ValueError:
                continue
            taken.append(match.span())
            found.append((match.start(), Span(day, day)))
    for match in patterns.month_year.finditer(folded):
        if free(match):
            taken.append(match.span())
            found.append((match.start(), _month_span(int(match["year"]), months[match["month"]])))
    today = now.date()
    for match in patterns.month_alone.finditer(folded):
        if free(match):
            month_number = months[match["month"]]
            year = today.year if month_number <= today.month else today.year - 1
            taken.append(match.span())
            found.append((match.start(), _month_span(year, month_number)))
    return [span for _, span in sorted(found, key=lambda f: f[0])][:4]


def _month_span(year: int, month: int) -> Span:
    return Span(date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1]))


def span_bounds(span: Span, tz: object) -> tuple[float, float]:
    """(start, end) of the span as epoch seconds in timezone `tz`, end exclusive."""
    start = datetime.combine(span.start, datetime.min.time(), tzinfo=tz)  # type: ignore[arg-type]
    end = datetime.combine(span.end + timedelta(days=1), datetime.min.time(), tzinfo=tz)  # type: ignore[arg-type]
    return start.timestamp(), end.timestamp()
