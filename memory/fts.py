"""Full-text search of memories, in the database's own engine.

One analysis pipeline in Python, the same on both databases, so that a ranking measured on one
holds on the other: words are lower-cased, stop words of the student's language dropped, each
word stemmed with the Snowball stemmer of that language (the stemmers PostgreSQL's own `english`
and `french` configurations use) and its accents folded (`élève` and `eleve` match). The
analysed text is what the database indexes:

- SQLite: an FTS5 table `memory_fts` (rowid = memory id), ranked by FTS5's `bm25()`. A
  `scope` column holds one token per student (`s42`), so the student filter is part of the
  full-text match itself and costs nothing per other student.
- PostgreSQL: a table `memory_search` with a `tsvector` ('simple' configuration: the text is
  already analysed) under a GIN index on (student_id, tsv) (btree_gin), ranked by Okapi BM25
  computed in SQL from the matching rows' term frequencies, with the student's own document
  count and average length (per-student statistics, like a per-student index would have).

Only active memories are indexed. The index is kept in sync by the memory services on write,
edit and archive (`memory_index` / `memory_unindex`), inside the same transaction as the
memory row, so the two can never disagree after a commit or a rollback.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import snowballstemmer
from django.db import connection

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


def analyse(text: str, language: str) -> list[str]:
    """The index terms of `text`: stop words dropped, stemmed, accents folded, in order."""
    language = language if language in LANGUAGES else DEFAULT_LANGUAGE
    stop = _STOP_WORDS[language]
    terms = []
    for word in _WORD.findall(text.lower()):
        if word.isdigit():
            terms.append(word)
            continue
        if len(word) < 2 or fold_accents(word) in stop:
            continue
        term = _stem(word, language).replace("_", "")
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


# --- Writing the index --------------------------------------------------------------------------


def memory_index(rows: Iterable[IndexRow]) -> None:
    """Insert or replace the index entries of these (active) memories."""
    prepared = [(r.memory_id, r.student_id, analyse(r.text, r.language)) for r in rows]
    if not prepared:
        return
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.executemany(
                "INSERT INTO memory_search (memory_id, student_id, tsv, doc_len) "
                "VALUES (%s, %s, to_tsvector('simple', %s), %s) "
                "ON CONFLICT (memory_id) DO UPDATE SET student_id = EXCLUDED.student_id, "
                "tsv = EXCLUDED.tsv, doc_len = EXCLUDED.doc_len",
                [(pk, student, " ".join(terms), len(terms)) for pk, student, terms in prepared],
            )
        else:
            cursor.executemany("DELETE FROM memory_fts WHERE rowid = %s", [(pk,) for pk, _, _ in prepared])
            cursor.executemany(
                "INSERT INTO memory_fts (rowid, scope, body) VALUES (%s, %s, %s)",
                [(pk, _scope(student), " ".join(terms)) for pk, student, terms in prepared],
            )


def memory_unindex(memory_ids: Iterable[int]) -> None:
    """Remove these memories from the index (archived memories are not searched)."""
    ids = [(pk,) for pk in memory_ids]
    if not ids:
        return
    table, column = ("memory_search", "memory_id") if connection.vendor == "postgresql" else ("memory_fts", "rowid")
    with connection.cursor() as cursor:
        cursor.executemany(f"DELETE FROM {table} WHERE {column} = %s", ids)  # noqa: S608 (fixed names)


def indexed_ids(student_id: int) -> set[int]:
    """Ids of a student's indexed memories (for tests and checks)."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT memory_id FROM memory_search WHERE student_id = %s", [student_id])
        else:
            cursor.execute("SELECT rowid FROM memory_fts WHERE memory_fts MATCH %s", [f"scope : {_scope(student_id)}"])
        return {int(r[0]) for r in cursor.fetchall()}


def prune_orphans() -> int:
    """Drop index entries whose memory no longer exists or is not active. Returns how many."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "DELETE FROM memory_search s WHERE NOT EXISTS (SELECT 1 FROM memory_aimemory m "
                "WHERE m.id = s.memory_id AND m.status = 'active')"
            )
        else:
            cursor.execute(
                "DELETE FROM memory_fts WHERE rowid NOT IN (SELECT id FROM memory_aimemory WHERE status = 'active')"
            )
        return max(cursor.rowcount, 0)


def _scope(student_id: int) -> str:
    return f"s{int(student_id)}"


# --- Searching ----------------------------------------------------------------------------------

BM25_K1 = 1.2
BM25_B = 0.75


def search(*, student_id: int, query: str, language: str, limit: int) -> list[tuple[int, float]]:
    """The student's active memories that match `query`, best first, as (memory id, score).

    Any query term may match (OR); the score is BM25 (higher is better on both databases).
    A query with no searchable word returns nothing.
    """
    terms = list(dict.fromkeys(analyse(query, language)))
    if not terms or limit <= 0:
        return []
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                _PG_BM25,
                {
                    "student": student_id,
                    "tsq": " | ".join(_pg_quote(t) for t in terms),
                    "terms": terms,
                    "limit": limit,
                    "k1": BM25_K1,
                    "b": BM25_B,
                },
            )
            return [(int(pk), float(score)) for pk, score in cursor.fetchall()]
        match = f"scope : {_scope(student_id)} AND body : ({' OR '.join(_fts5_quote(t) for t in terms)})"
        cursor.execute(
            "SELECT rowid, bm25(memory_fts, 0.0, 1.0) AS rank FROM memory_fts "
            "WHERE memory_fts MATCH %s ORDER BY rank LIMIT %s",
            [match, limit],
        )
        # FTS5's bm25() is negative, lower is better.
        return [(int(pk), -float(score)) for pk, score in cursor.fetchall()]


def _fts5_quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def _pg_quote(term: str) -> str:
    return "'" + term.replace("'", "''").replace("\\", "") + "'"


_PG_BM25 = """
WITH m AS (
    SELECT memory_id, doc_len, tsv FROM memory_search
    WHERE student_id = %(student)s AND tsv @@ to_tsquery('simple', %(tsq)s)
),
tf AS (
    SELECT m.memory_id, m.doc_len, u.lexeme, coalesce(array_length(u.positions, 1), 1) AS tf
    FROM m, LATERAL unnest(m.tsv) AS u(lexeme, positions, weights)
    WHERE u.lexeme = ANY(%(terms)s::text[])
),
df AS (SELECT lexeme, count(*)::float8 AS n FROM tf GROUP BY lexeme),
stats AS (
    SELECT count(*)::float8 AS total, greatest(coalesce(avg(doc_len), 1), 1)::float8 AS avgdl
    FROM memory_search WHERE student_id = %(student)s
)
SELECT tf.memory_id,
       sum(ln(1 + (stats.total - df.n + 0.5) / (df.n + 0.5))
           * tf.tf * (%(k1)s + 1)
           / (tf.tf + %(k1)s * (1 - %(b)s + %(b)s * tf.doc_len / stats.avgdl))) AS score
FROM tf JOIN df USING (lexeme) CROSS JOIN stats
GROUP BY tf.memory_id
ORDER BY score DESC, tf.memory_id DESC
LIMIT %(limit)s
"""


# --- Schema (used by the migration) --------------------------------------------------------------

SQLITE_CREATE = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts USING fts5(scope, body, tokenize = 'unicode61 remove_diacritics 2')"
)
SQLITE_DROP = "DROP TABLE IF EXISTS memory_fts"
PG_CREATE = [
    "CREATE TABLE IF NOT EXISTS memory_search ("
    # No foreign key: Django's flush (tests) truncates memory_aimemory without CASCADE and would
    # refuse. Memories are never deleted; `prune_orphans` runs after every migrate and flush.
    " memory_id bigint PRIMARY KEY,"
    " student_id bigint NOT NULL,"
    " tsv tsvector NOT NULL,"
    " doc_len integer NOT NULL)",
    "CREATE INDEX IF NOT EXISTS memory_search_student_len ON memory_search (student_id, doc_len)",
]
PG_GIN_COMPOSITE = "CREATE INDEX IF NOT EXISTS memory_search_gin ON memory_search USING gin (student_id, tsv)"
PG_GIN_PLAIN = "CREATE INDEX IF NOT EXISTS memory_search_gin ON memory_search USING gin (tsv)"
PG_DROP = "DROP TABLE IF EXISTS memory_search"
