"""The offline first line: regular expressions over a normalised text, French and English, no
model and no network. It always runs, first, on every student message and every tutor reply.

Contract:

- `screen(text)` never raises and always answers (`answered=True`). It emits at most one
  `Signal` per category: the most severe rule of that category, its `rule` naming every rule
  of that category and severity that fired, joined by "+" (`fr.self_harm.intent+...`).
- Self-harm *instructions* (asking for or giving methods, doses) fire rules whose name
  contains "instructions": the guard fails a tutor reply on those, not on a caring reply that
  names a help line.
- Rules look for the student speaking about themselves (first person) or about a person;
  hyperbole and idioms ("ce devoir me tue", "dying to", "kill this exam", "mourir de rire") are
  removed from the text before the rules run, and a rule's `unless` pattern, searched around
  its match, silences it (history, games, being told to "go kill myself").
- `language_of(text)` is "fr", "en" or None from stop words; the rules of both languages run on
  every text whatever it says (students mix languages).

The labelled set and the measured recall and false positives: tests/safety/, docs/safety.md.
"""

from __future__ import annotations

import re
import time
import unicodedata
from dataclasses import dataclass

from safety.offline_rules import IDIOMS, SPECS
from safety.types import BackendResult, Category, Severity, Signal, rank


def _words(*lines: str) -> frozenset[str]:
    return frozenset(" ".join(lines).split())


@dataclass(frozen=True)
class Rule:
    """One pattern over the normalised text; `unless` is searched in the match's neighbourhood
    (WINDOW characters either side) and silences the rule when found. `gate`: word beginnings
    of which every match holds one; the pattern runs only on a text with a word starting with
    one of them (see safety.offline_rules)."""

    name: str
    category: Category
    severity: Severity
    pattern: re.Pattern[str]
    unless: re.Pattern[str] | None
    gate: frozenset[str]


WINDOW = 40

# ---------------------------------------------------------------------------------------------
# Normalisation

# Right and left single quotes, grave and acute accents, modifier apostrophe; ligatures.
_QUOTES = {"\u2019": "'", "\u2018": "'", "`": "'", "\u00b4": "'", "\u02bc": "'", "\u0153": "oe", "\u00e6": "ae"}
_REPEATS = re.compile(r"([a-z])\1\1+")
_TOKEN = re.compile(r"[a-z0-9']+")
_CONTRACTED = {"ca": "can", "wo": "will", "ai": "is"}
_EN_SUFFIX = {"re": "are", "ll": "will", "ve": "have", "d": "would"}
_ELIDED = {"j": "je", "m": "me", "t": "te", "l": "le", "s": "se", "d": "de", "n": "ne", "c": "ce", "qu": "que"}

# SMS and spoken spellings, word for word (after accents and apostrophes are gone).
_WORDS = {
    # French
    "jveux": "je veux",
    "jveu": "je veux",
    "veu": "veux",
    "chui": "je suis",
    "chuis": "je suis",
    "jsuis": "je suis",
    "jsui": "je suis",
    "jss": "je suis",
    "sui": "suis",
    "plu": "plus",
    "jvais": "je vais",
    "jvai": "je vais",
    "jpeux": "je peux",
    "jpeu": "je peux",
    "jme": "je me",
    "jmen": "je me en",
    "jsp": "je sais pas",
    "jai": "je ai",
    "g": "je ai",
    "pa": "pas",
    "koi": "quoi",
    "pk": "pourquoi",
    "pq": "pourquoi",
    "ke": "que",
    "tt": "tout",
    "tjrs": "toujours",
    "tjr": "toujours",
    "vrmt": "vraiment",
    "pr": "pour",
    "ms": "mais",
    "mn": "mon",
    "ptn": "putain",
    "slt": "salut",
    "ya": "il y a",
    "jamai": "jamais",
    "medocs": "medicaments",
    "medoc": "medicament",
    "jpp": "je en peux plus",
    "jpense": "je pense",
    "jdois": "je dois",
    "jcompte": "je compte",
    "jvoudrais": "je voudrais",
    "jprefere": "je prefere",
    "jsais": "je sais",
    "jcrois": "je crois",
    "jsens": "je sens",
    "jen": "je en",
    "cb": "combien",
    "cmb": "combien",
    "mtn": "maintenant",
    "tlm": "tout le monde",
    "pcq": "parce que",
    "pck": "parce que",
    # English
    "im": "i am",
    "ive": "i have",
    "dont": "do not",
    "cant": "can not",
    "cannot": "can not",
    "wont": "will not",
    "didnt": "did not",
    "doesnt": "does not",
    "isnt": "is not",
    "wouldnt": "would not",
    "couldnt": "could not",
    "shouldnt": "should not",
    "havent": "have not",
    "wanna": "want to",
    "gonna": "going to",
    "gotta": "got to",
    "u": "you",
    "r": "are",
    "kms": "kill myself",
    "kys": "kill yourself",
    "unalive": "kill",
    "unaliving": "killing",
    "rn": "right now",
    "bc": "because",
    "cuz": "because",
    "ppl": "people",
    "pls": "please",
    "plz": "please",
    "thx": "thanks",
    "youre": "you are",
    "theyre": "they are",
    "wtf": "what the",
    "whats": "what is",
    "theres": "there is",
    "imma": "i am going to",
    "ima": "i am going to",
    "finna": "going to",
    "tmrw": "tomorrow",
    "tmr": "tomorrow",
    "tonite": "tonight",
    "2nite": "tonight",
}


def normalise(text: str) -> str:
    """Casefolded, accents stripped, apostrophes unified, letters repeated three times or more
    squeezed to one, contractions and elisions expanded, SMS spellings spelled out, words
    separated by single spaces (punctuation, emoji and other non-Latin letters dropped)."""
    text = text.casefold()
    if not text.isascii():
        for quote, plain in _QUOTES.items():
            text = text.replace(quote, plain)
        text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = _REPEATS.sub(r"\1", text)
    words: list[str] = []
    for token in _TOKEN.findall(text):
        if "'" in token:
            words.extend(_apostrophe(token))
        else:
            words.append(_WORDS.get(token, token))
    return " ".join(words)


def _apostrophe(token: str) -> list[str]:
    """A token with apostrophes as words: "don't" -> "do not", "i'm" -> "i am", "you're" -> "you
    are", "j'ai" -> "je ai", "qu'on" -> "que on"; other apostrophes separate words."""
    head, _, tail = token.partition("'")
    if tail == "t" and head.endswith("n"):
        return [_CONTRACTED.get(head[:-1], head[:-1]), "not"]
    if head == "i" and tail == "m":
        return ["i", "am"]
    first = [_ELIDED[head]] if head in _ELIDED else [_WORDS.get(head, head)] if head else []
    if tail in _EN_SUFFIX and head not in _ELIDED:
        return [*first, _EN_SUFFIX[tail]]
    if "'" in tail:
        return [*first, *_apostrophe(tail)]
    return [*first, _WORDS.get(tail, tail)] if tail else first


# ---------------------------------------------------------------------------------------------
# ---------------------------------------------------------------------------------------------
# The rules (safety.offline_rules) and their gates

_IDIOMS = re.compile("|".join(IDIOMS))
_KEY = re.compile(r"[a-z]{2,5}")


def _compile(spec_keys: str, pattern: str, name: str) -> frozenset[str]:
    """A rule's gate from its keys; a key must be two to five letters and appear in the pattern."""
    keys = frozenset(spec_keys.split())
    bad = sorted(k for k in keys if not _KEY.fullmatch(k) or k not in pattern)
    if not keys or bad:
        raise ValueError(f"rule {name}: keys must be 2-5 letters found in its pattern: {bad or 'none'}")
    return keys


RULES: tuple[Rule, ...] = tuple(
    Rule(
        spec.name,
        spec.category,
        spec.severity,
        re.compile(spec.pattern),
        re.compile(spec.unless) if spec.unless else None,
        _compile(spec.keys, spec.pattern, spec.name),
    )
    for spec in SPECS
)


def _text_keys(text: str) -> set[str]:
    """Every prefix of two to five characters of every word, to meet gate keys of any length."""
    keys: set[str] = set()
    for word in text.split():
        keys.update((word[:2], word[:3], word[:4], word[:5]))
    return keys


def _fires(rule: Rule, text: str) -> bool:
    for match in rule.pattern.finditer(text):
        if rule.unless is None:
            return True
        window = text[max(0, match.start() - WINDOW) : match.end() + WINDOW]
        if not rule.unless.search(window):
            return True
    return False


def _fired(normalised: str, *, gated: bool) -> dict[Category, list[Rule]]:
    """The rules that fire on a normalised text, by category (`gated=False`: every rule runs,
    for checking the gates)."""
    keys = _text_keys(normalised)
    candidates = [rule for rule in RULES if not gated or not rule.gate.isdisjoint(keys)]
    fired: dict[Category, list[Rule]] = {}
    if candidates:
        text = _IDIOMS.sub(" _ ", normalised)
        for rule in candidates:
            if _fires(rule, text):
                fired.setdefault(rule.category, []).append(rule)
    return fired


def screen(text: str) -> BackendResult:
    """The offline line's verdict on `text` (see the module's contract)."""
    started = time.perf_counter()
    fired = _fired(normalise(text), gated=True)
    signals = []
    for category, rules in fired.items():
        top = max(rank(r.severity) for r in rules)
        names = [r.name for r in rules if rank(r.severity) == top]
        signals.append(
            Signal(
                category=category,
                severity=rules[[rank(r.severity) for r in rules].index(top)].severity,
                score=1.0,
                rule="+".join(names),
            )
        )
    return BackendResult(
        backend="offline",
        answered=True,
        signals=signals,
        scores={s.category.value: s.score for s in signals},
        ms=round((time.perf_counter() - started) * 1000),
    )


# ---------------------------------------------------------------------------------------------
# Language

_FR_WORDS = _words(
    "je tu il elle on nous vous ils elles le la les un une des du de au aux et est pas que qui quoi pour dans avec",
    "sur mon ma mes ton ta ce cette ca suis ai veux vais comment pourquoi mais ou plus tres trop moi toi faire fait",
    "bien merci oui non cest jai",
)
_EN_WORDS = _words(
    "i you he she it we they the a an to is are was were and of my me your in on at for with what how why do does",
    "did can not this that have has be am im dont its just so really please thanks yes no about from",
)
_FR_LETTERS = re.compile(r"[éèêàùçâîôûëï]")
_RAW_WORDS = re.compile(r"[a-zà-ÿ]+")


def language_of(text: str) -> str | None:
    """The language of `text`, "fr" or "en", when one language's stop words (and, for French,
    accented letters) clearly outnumber the other's; None when neither has any or they tie."""
    lowered = text.casefold()
    words = _RAW_WORDS.findall(lowered.replace("'", " ").replace("\u2019", " "))
    fr = sum(w in _FR_WORDS for w in words) + min(2, len(_FR_LETTERS.findall(lowered)))
    en = sum(w in _EN_WORDS for w in words)
    if fr == en:
        return None
    return "fr" if fr > en else "en"
