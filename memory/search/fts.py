"""The analysis of memory text for full-text search, the same on both databases.

One analysis pipeline in Python, so that a ranking measured on one database holds on the other:
words are lower-cased, stop words of the student's language dropped, each word stemmed with the
Snowball stemmer of that language (the stemmers PostgreSQL's own `english` and `french`
configurations use) and its accents folded (`élève` and `eleve` match). The analysed text is
what each database's index holds (memory.search.backend: FTS5 on SQLite, an inverted index
ranked by BM25 on PostgreSQL).

Only active memories are indexed. The memory services keep the index in sync on write, edit and
archive, inside the same transaction as the memory row, so the two can never disagree after a
commit or a rollback.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import snowballstemmer

LANGUAGES = {"en": "english", "fr": "french"}
DEFAULT_LANGUAGE = "en"

_WORD = re.compile(r"\w+", re.UNICODE)

# Short stop word lists (accents folded). BM25 would give these words little weight anyway;
# leaving them out keeps the index and the OR queries small.
_STOP_WORDS = {
    "en": frozenset(
        """a about above after again all am an and any are as at be because been before being below
        between both but by can could did do does doing down during each few for from further had has
        have having he her here hers herself him himself his how i if in into is it its itself just me
        more most my myself no nor not now of off on once only or other our ours ourselves out over own
        same she should so some such than that the their theirs them themselves then there these they
        this those through to too under until up very was we were what when where which while who whom
        why will with would you your yours yourself yourselves s t d ll m re ve""".split()  # noqa: SIM905
    ),
    "fr": frozenset(
        """a ai aie aient aies ait as au aux avaient avais avait avec avez aviez avions avons ayant ce
        ceci cela ces cet cette d dans de des du elle elles en es est et etaient etais etait etant ete
        etes etiez etions eu eue eues eux fut il ils j je l la le les leur leurs lui m ma mais me meme
        mes moi mon n ne nos notre nous on ont ou par pas pour qu que quel quelle quelles quels qui s sa
        sans se sera serait ses si son sont sur t ta te tes toi ton tu un une vos votre vous y c quand
        comment pourquoi quoi ou""".split()  # noqa: SIM905
    ),
}


def fold_accents(text: str) -> str:
    """Lower-case and strip diacritics: 'Élève' -> 'eleve', 'cœur' -> 'coeur'."""
    text = text.lower().replace("œ", "oe").replace("æ", "ae").replace("ß", "ss")
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@lru_cache(maxsize=4)
def _stemmer(language: str) -> Any:
    return snowballstemmer.stemmer(LANGUAGES.get(language, LANGUAGES[DEFAULT_LANGUAGE]))


@lru_cache(maxsize=200_000)
def _stem(word: str, language: str) -> str:
    return fold_accents(_stemmer(language).stemWord(word))


# The longest term indexed, in characters: a longer word is cut to its first MAX_TERM_CHARS
# characters, before stemming (so the stemmer and its cache never hold a pasted blob) and again
# after (folding can lengthen a word: 'ﬃ' -> 'ffi'). The longest words of English and French
# dictionaries are under 50 characters; anything longer is a hash, an encoded blob or a held key,
# which its first 100 characters still identify. At most 4 bytes a character, a term stays far
# below what a PostgreSQL btree entry can hold (about 2,700 bytes: the memory_posting and
# memory_term_stats keys), which a 2,700-character word overflowed. Queries are analysed by the
# same function, so a long word in a query matches the same cut term.
MAX_TERM_CHARS = 100


def analyse(text: str, language: str) -> list[str]:
    """The index terms of `text`: stop words dropped, stemmed, accents folded, in order; none
    longer than MAX_TERM_CHARS."""
    language = language if language in LANGUAGES else DEFAULT_LANGUAGE
    stop = _STOP_WORDS[language]
    terms = []
    for word in _WORD.findall(text.lower()):
        word = word[:MAX_TERM_CHARS]
        if word.isdigit():
            terms.append(word)
            continue
        if len(word) < 2 or fold_accents(word) in stop:
            continue
        term = _stem(word, language).replace("_", "")[:MAX_TERM_CHARS]
        if term:
            terms.append(term)
    return terms


def memory_text(title: str, content: str) -> str:
    return f"{title}\n{content}"


@dataclass(frozen=True)
class IndexRow:
    memory_id: int
    student_id: int
    text: str
    language: str


def query_terms(query: str, language: str) -> list[str]:
    """The distinct index terms of a query, in order: what a lexical search looks up."""
    return list(dict.fromkeys(analyse(query, language)))
