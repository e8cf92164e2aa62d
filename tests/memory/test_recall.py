"""Recall: fusion, dates in the query, relation bonus, decay before fusion, the prompt's memory
budget, recall_eval."""

from __future__ import annotations

import json
import zlib
from datetime import UTC, date, datetime, timedelta

import numpy as np
import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from conversations.models import Conversation
from llm.tokens import count_tokens
from memory.block import (
    MEMORY_BLOCK_CLOSE,
    MEMORY_BLOCK_OPEN,
    MEMORY_PREAMBLE,
    format_memory,
    memory_block,
    memory_item,
)
from memory.budget import memory_block_tokens
from memory.models import AIMemory
from memory.search import embeddings, fts, postings
from memory.search.backend import search_backend
from memory.search.embeddings import query_cache
from memory.search.query_dates import Span, date_spans
from memory.search.recall import RecallConfig, recall, related_ids, topic_query, topic_text
from memory.search.recall.candidates import SemanticScores
from memory.search.recall.fusion import fuse_ranks, fuse_scores
from memory.selectors import turn_memories
from memory.services.embedding import memory_embeddings_write
from tests.memory.recall_helpers import note

# Four memories: 1 is far ahead lexically and third semantically, just behind 2 and 3.
LEXICAL = [(1, 10.0), (2, 1.2), (3, 1.1), (4, 1.0)]
SEMANTIC = [(2, 0.52), (3, 0.51), (1, 0.50), (4, 0.10)]


def _scores(pairs):
    ids = np.array(sorted(pk for pk, _ in pairs), dtype=np.int64)
    lookup = dict(pairs)
    return SemanticScores(ids, np.array([lookup[pk] for pk in ids], dtype=np.float32))


def test_score_fusion_keeps_a_clear_winner_that_rank_fusion_flattens():
    """Rank fusion sees only ranks, so a memory far ahead in one signal and third in the other
    loses to one that is second and first; standardised scores keep the gap."""
    equal = RecallConfig(lexical_weight=1.0, semantic_weight=1.0, rrf_k=5)
    rrf = fuse_ranks(LEXICAL, SEMANTIC, equal.with_(score_fusion=False))
    assert rrf[0].memory_id == 2
    fused = fuse_scores(LEXICAL, SEMANTIC, _scores(SEMANTIC), equal, student_id=0, spans=[])
    assert [h.memory_id for h in fused][:2] == [1, 2]
    assert fused[0].lexical_rank == 1 and fused[0].semantic_rank == 3
    assert min(h.score for h in fused) == 1.0  # shifted: the weakest candidate scores 1


def test_score_fusion_uses_every_candidate_s_semantic_score():
    """A memory found lexically but outside the semantic list still gets its own similarity
    (from the vector matrix), and one without a vector counts as the least similar."""
    scores = _scores([(1, 0.9), (2, 0.1), (3, 0.2)])
    config = RecallConfig(lexical_weight=1.0, semantic_weight=1.0)
    # 1, 2 and 5 tie lexically; only 2 and 3 made the semantic list; 1 is closest all the same.
    hits = fuse_scores([(1, 2.0), (2, 2.0), (5, 2.0)], [(3, 0.2), (2, 0.1)], scores, config, student_id=0, spans=[])
    by_id = {h.memory_id: h for h in hits}
    assert hits[0].memory_id == 1 and hits[0].semantic_rank is None
    # 5 has no vector: it counts as the least similar candidate, here as similar as 2.
    assert by_id[5].score == by_id[2].score


def test_a_signal_blind_to_a_memory_cannot_bury_it_below_its_floor():
    """Memory 5 shares no word with the query but is by far the closest semantically. Unfloored,
    its lexical z-score (-2) cancels that; floored at -0.4 it comes first. The floor only caps
    how far down a signal pulls: positive evidence counts in full."""
    lexical = [(1, 3.0), (2, 2.9), (3, 2.8), (4, 2.7)]
    semantic = [(5, 0.9), (1, 0.5), (2, 0.5), (3, 0.5), (4, 0.5)]
    config = RecallConfig(lexical_weight=1.0, semantic_weight=1.0, topic_weight=0.0)
    floored = fuse_scores(lexical, semantic, _scores(semantic), config, student_id=0, spans=[])
    assert floored[0].memory_id == 5
    unfloored = fuse_scores(
        lexical,
        semantic,
        _scores(semantic),
        config.with_(lexical_floor=float("inf"), semantic_floor=float("inf")),
        student_id=0,
        spans=[],
    )
    assert [h.memory_id for h in unfloored][:2] == [1, 2] and unfloored[-1].memory_id in (4, 5)
    # The other four keep their order.
    assert [h.memory_id for h in floored][1:] == [h.memory_id for h in unfloored if h.memory_id != 5]


def test_date_spans_in_english_and_french():
    now = datetime(2024, 3, 10, tzinfo=UTC)
    day = date(2023, 6, 16)
    for text in ("What did we do on 16 June, 2023?", "on June 16th, 2023", "the 16th of June 2023", "2023-06-16"):
        assert date_spans(text, "en", now) == [Span(day, day)], text
    assert date_spans("Which topics in May 2023 and in October?", "en", now) == [
        Span(date(2023, 5, 1), date(2023, 5, 31)),
        Span(date(2023, 10, 1), date(2023, 10, 31)),  # a month alone: the latest one before now
    ]
    assert date_spans("Qu'avons-nous vu le 12 mars 2024 et en décembre ?", "fr", now) == [
        Span(date(2024, 3, 12), date(2024, 3, 12)),
        Span(date(2023, 12, 1), date(2023, 12, 31)),
    ]
    assert date_spans("You may 2 times check fractions", "en", now) == []
    assert date_spans("Can you help me with fractions?", "en", now) == []


class WordsEmbedder:
    """A deterministic stand-in for an embedder: hashed bag of words, L2-normalised."""

    name = "test:words"

    def embed(self, texts: list[str], *, student_id: int | None = None) -> np.ndarray:
        matrix = np.zeros((len(texts), 64), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in fts.analyse(text, "en"):
                matrix[row, zlib.crc32(word.encode()) % 64] += 1.0
        return embeddings.normalise(matrix + 1e-3)


@pytest.mark.parametrize("strategy", ["lexical", "hybrid"])
def test_a_date_in_the_query_favours_the_memories_of_that_day(school, strategy):
    """Of two equally matching memories, the one of the named day comes first; a memory of that
    day that matches no word of the query is recalled too (it joins the candidates). With
    vectors, the candidates' dates come from the vector cache."""
    alice = school["alice"]
    at = datetime(2025, 3, 3, 15, 0, tzinfo=UTC)
    title, content = "Practised adding fractions with unlike denominators", "Common denominators first."
    other = note(alice, title, content, created_at=at - timedelta(days=40))
    same_day = note(alice, title, content, created_at=at)
    silent = note(alice, "Read a novel chapter aloud fluently", "Good expression.", created_at=at + timedelta(hours=2))
    note(alice, "Measured the angles of a triangle", "Sum is 180 degrees.", created_at=at - timedelta(days=90))
    embedder = WordsEmbedder() if strategy == "hybrid" else None
    if embedder is not None:
        memory_embeddings_write(memory_ids=[other.pk, same_day.pk, silent.pk], embedder=embedder)
    now = at + timedelta(days=30)
    query = "What fractions did we practise on 3 March 2025?"
    config = RecallConfig(relation_weight=0, semantic_depth=2)
    kwargs = {"student_id": alice.pk, "query": query, "strategy": strategy, "now": now, "embedder": embedder}
    dated = recall(**kwargs, config=config)
    assert dated.mode == strategy
    assert dated.ids[0] == same_day.pk
    assert silent.pk in dated.ids
    if strategy == "lexical":  # with the same words only the date sets the two apart
        assert dated.ids.index(silent.pk) < dated.ids.index(other.pk)
    plain = recall(**kwargs, config=config.with_(date_weight=0))
    assert silent.pk not in plain.ids


def test_topic_text_drops_the_words_most_memories_share():
    """Words whose terms are in at least half of the memories go; stop words stay; a query with
    no such word, or only such words, has no topic text."""
    dfs = {"alic": 10, "fraction": 2, "learn": 3, "elev": 9, "geometr": 1}
    topic = topic_text("What did Alice learn about fractions?", language="en", n_docs=10, dfs=dfs, share=0.5)
    assert topic == "What did learn about fractions"
    assert topic_text("Alice's fractions", language="en", n_docs=10, dfs=dfs, share=0.5) == "fractions"
    assert topic_text("What about fractions?", language="en", n_docs=10, dfs=dfs, share=0.5) is None
    assert topic_text("What did Alice do?", language="en", n_docs=10, dfs=dfs, share=0.5) is None
    # French: accents folded, stemmed like the index.
    french = topic_text("Quels élèves en géométrie ?", language="fr", n_docs=10, dfs=dfs, share=0.5)
    assert french == "Quels en géométrie"


class CountingEmbedder(WordsEmbedder):
    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: list[str], *, student_id: int | None = None) -> np.ndarray:
        self.calls.append(list(texts))
        return super().embed(texts, student_id=student_id)


def test_topic_signal_lifts_the_memory_about_the_topic(school):
    """Every memory names the student: in a short query her name weighs as much as the topic
    and pulls the memory that repeats it most. The topic text (the query without her name) sets
    the memory about fractions first; it is embedded in the same call as the query."""
    alice = school["alice"]
    chatty = note(alice, "Alice read aloud to Alice's group", "Alice chose the book, Alice asked about Alice's turn.")
    fractions = note(alice, "Alice practised fractions and decimals", "Ratios, percentages and number lines.")
    others = [
        note(alice, "Alice drew triangles in geometry", "Angles of a triangle with a protractor."),
        note(alice, "Alice learnt the water cycle", "Evaporation, clouds and rain in science class."),
        note(alice, "Alice wrote a poem about winter", "Rhymes and metaphors in the English lesson."),
    ]
    embedder = CountingEmbedder()
    memory_embeddings_write(memory_ids=[chatty.pk, fractions.pk, *[m.pk for m in others]], embedder=embedder)
    query = "Alice fractions?"
    config = RecallConfig(relation_weight=0, topic_weight=1.5)
    assert topic_query(student_id=alice.pk, query=query, language="en", config=config) == "fractions"
    too_few = config.with_(topic_min_memories=6)
    assert topic_query(student_id=alice.pk, query=query, language="en", config=too_few) is None

    embedder.calls.clear()
    without = recall(
        student_id=alice.pk, query=query, strategy="semantic", embedder=embedder, config=config.with_(topic_weight=0)
    )
    assert without.ids[0] == chatty.pk
    assert embedder.calls == [[query]]  # no topic signal, no topic text embedded

    embedder.calls.clear()
    query_cache.clear()
    with_topic = recall(student_id=alice.pk, query=query, strategy="semantic", embedder=embedder, config=config)
    assert with_topic.ids[0] == fractions.pk
    assert embedder.calls == [[query, "fractions"]]  # one call for both

    # Hybrid: on PostgreSQL the lexical search's statistics serve the topic text too (one read).
    # The same query again: its vectors come from the cache of recent queries.
    embedder.calls.clear()
    with CaptureQueriesContext(connection) as queries:
        hybrid = recall(student_id=alice.pk, query=query, strategy="hybrid", embedder=embedder, config=config)
    assert hybrid.ids[0] == fractions.pk
    assert embedder.calls == []
    if connection.vendor == "postgresql":
        assert sum("memory_term_stats" in q["sql"] for q in queries.captured_queries) == 1

    if connection.vendor == "postgresql":
        # Nothing cached in the process: no revision read; the vectors are ranked in one statement.
        assert not any("memory_studentmemoryrevision" in q["sql"] for q in queries.captured_queries)
        assert sum("memory_memoryembedding" in q["sql"] for q in queries.captured_queries) == 1

    # A query with nothing common is embedded alone (its topic is itself).
    embedder.calls.clear()
    recall(student_id=alice.pk, query="decimals", strategy="hybrid", embedder=embedder, config=config)
    assert embedder.calls == [["decimals"]]


def test_relation_bonus_brings_memories_of_the_same_conversation(school):
    """A memory sharing a conversation with the best match is lifted by the relation bonus."""
    alice = school["alice"]
    conversation = Conversation.objects.create(student=alice, last_activity_at=timezone.now())
    best = note(alice, "Worked on volcano project for science", "Built a model volcano.", conversation=conversation)
    sibling = note(alice, "Asked many questions during the session", "Curious and engaged.", conversation=conversation)
    linked = note(alice, "Prefers visual explanations with drawings", "Diagrams help.")
    AIMemory.links.through.objects.create(from_aimemory_id=best.pk, to_aimemory_id=linked.pk)
    AIMemory.links.through.objects.create(from_aimemory_id=linked.pk, to_aimemory_id=best.pk)
    note(alice, "Plays the piano in a band", "Practises weekly.")
    plain = recall(student_id=alice.pk, query="volcano", strategy="lexical", config=RecallConfig(relation_weight=0))
    assert plain.ids == [best.pk]
    boosted = recall(student_id=alice.pk, query="volcano", strategy="lexical", config=RecallConfig(relation_weight=0.5))
    assert boosted.ids[0] == best.pk and set(boosted.ids[1:]) == {sibling.pk, linked.pk}
    assert all(h.related for h in boosted.hits[1:])


def test_related_ids_follow_chains_and_links_within_the_student(school):
    """Supersession in both directions, same conversation and links are relations; an archived
    memory, another student's memory (even linked) and the seed itself are not."""
    alice, bob = school["alice"], school["bob"]
    conversation = Conversation.objects.create(student=alice, last_activity_at=timezone.now())
    old = note(alice, "Times tables up to five learnt", "Fives are solid now.")
    seed = note(alice, "Times tables up to ten learnt", "Sevens still slow.", conversation=conversation)
    newer = note(alice, "Times tables up to twelve learnt", "All fluent now.")
    sibling = note(alice, "Asked for a times tables game", "Loves quizzes.", conversation=conversation)
    archived = note(alice, "Struggled with the sevens", "Needs practice.", conversation=conversation)
    linked = note(alice, "Prefers short quizzes in class", "Five questions at a time.")
    theirs = note(bob, "Bob practised his times tables", "Bob knows his twos.")
    # Statuses left active on purpose: the relation is followed whatever wrote the link.
    AIMemory.objects.filter(pk=old.pk).update(superseded_by=seed)
    AIMemory.objects.filter(pk=seed.pk).update(superseded_by=newer)
    AIMemory.objects.filter(pk=archived.pk).update(status=AIMemory.Status.ARCHIVED)
    for target in (linked, theirs):
        AIMemory.links.through.objects.create(from_aimemory_id=seed.pk, to_aimemory_id=target.pk)
    assert related_ids(student_id=alice.pk, memory_ids=[seed.pk, linked.pk]) == {
        seed.pk: {old.pk, newer.pk, sibling.pk, linked.pk},
        linked.pk: set(),
    }
    assert related_ids(student_id=alice.pk, memory_ids=[old.pk]) == {old.pk: {seed.pk}}
    assert related_ids(student_id=bob.pk, memory_ids=[seed.pk]) == {seed.pk: set()}  # not bob's seed
    assert related_ids(student_id=alice.pk, memory_ids=[]) == {}


def test_decay_is_applied_to_each_signal_before_fusion(school):
    """With decay on, of two equally matching memories the recent one ranks first."""
    alice = school["alice"]
    now = timezone.now()
    title, content = "Practised multiplication tables at home", "Tables of seven."
    old = note(alice, title, content, created_at=now - timedelta(days=300))
    new = note(alice, title, content, created_at=now - timedelta(days=1))
    config = RecallConfig(decay_half_life_days=30, decay_floor=0.2, relation_weight=0)
    decayed = recall(student_id=alice.pk, query="multiplication", config=config, now=now)
    assert decayed.ids == [new.pk, old.pk]
    assert decayed.hits[0].lexical_rank == 1  # the decayed lexical signal was ranked, then fused


def test_prompt_memories_include_relevant_old_ones_within_the_budget(school, settings):
    """The block holds the latest memories plus the relevant old one, deduplicated, within
    MEMORY_TOKEN_BUDGET, newest first, each with its date and source."""
    alice = school["alice"]
    now = timezone.now()
    relevant = note(
        alice,
        "Afraid of speaking during oral presentations",
        "Gets anxious presenting.",
        created_at=now - timedelta(days=400),
    )
    recent = [
        note(
            alice,
            f"Completed homework set number {i}",
            f"Homework {i} done on time, neat work.",
            created_at=now - timedelta(days=i),
        )
        for i in range(12)
    ]
    settings.MEMORY_TOKEN_BUDGET = 2000
    chosen = turn_memories(student_id=alice.pk, message="I have an oral presentation tomorrow").memories
    ids = [m.pk for m in chosen]
    assert relevant.pk in ids
    assert len(ids) == len(set(ids))
    assert {m.pk for m in recent[:10]} <= set(ids)
    assert [m.created_at for m in chosen] == sorted((m.created_at for m in chosen), reverse=True)
    block = memory_block([memory_item(m) for m in chosen])
    assert count_tokens(block) <= 2000
    assert relevant.created_at.date().isoformat() in block and "note saved by the tutor" in block

    # The budget bounds the recalled extras only: the 10 latest stay whole, the extra that fits
    # goes in, and a budget too small for it leaves it out.
    settings.MEMORY_TOKEN_BUDGET = 200
    small = turn_memories(student_id=alice.pk, message="I have an oral presentation tomorrow").memories
    assert {m.pk for m in recent[:10]} <= {m.pk for m in small} and relevant.pk in [m.pk for m in small]
    settings.MEMORY_TOKEN_BUDGET = 5
    tiny = turn_memories(student_id=alice.pk, message="I have an oral presentation tomorrow").memories
    assert {m.pk for m in tiny} == {m.pk for m in recent[:10]}


def test_the_ten_latest_memories_are_always_whole_in_the_prompt(school, settings):
    """Ten notes of 200 words (far past MEMORY_TOKEN_BUDGET) are all in the prompt; only a
    small window's cap leaves out the oldest of them."""
    alice = school["alice"]
    now = timezone.now()
    words = " ".join(["fractions"] * 199) + "."
    notes = [
        note(alice, f"Long note number {i} about fractions", words, created_at=now - timedelta(days=i))
        for i in range(10)
    ]
    chosen = turn_memories(student_id=alice.pk, message="hello").memories
    assert {m.pk for m in chosen} == {m.pk for m in notes}
    capped = turn_memories(student_id=alice.pk, message="hello", max_tokens=1000).memories
    assert [m.pk for m in capped] == [m.pk for m in notes[: len(capped)]] and 0 < len(capped) < 10
    assert count_tokens(memory_block([memory_item(m) for m in capped])) <= 1000


def test_prompt_memories_fall_back_to_latest_when_recall_fails(school, settings, monkeypatch):
    """A failing recall is logged and the latest memories are used: the chat goes on."""
    from memory.search import recall as recall_module

    alice = school["alice"]
    latest = note(alice, "Completed homework set number one", "Homework done on time.")

    def broken(**kwargs):
        raise RuntimeError("index corrupted")

    monkeypatch.setattr(recall_module, "recall", broken)
    assert [m.pk for m in turn_memories(student_id=alice.pk, message="homework").memories] == [latest.pk]


def test_recall_eval_reports_every_strategy(db, tmp_path, capsys):
    """recall_eval --database-in-place reads a recall-set file and writes hit@k, all@k, MRR and
    latency as JSON, leaving the configured database as it was."""
    recall_set = {
        "source": {"dataset": "synthetic"},
        "conversations": [
            {
                "id": "c1",
                "memories": [
                    {
                        "id": "s1",
                        "created_at": "2024-01-01T10:00:00",
                        "title": "Session one",
                        "content": "Sam adopted a dog named Rex from the shelter.",
                    },
                    {
                        "id": "s2",
                        "created_at": "2024-02-01T10:00:00",
                        "title": "Session two",
                        "content": "Sam started violin lessons with a new teacher.",
                    },
                    {
                        "id": "s3",
                        "created_at": "2024-03-01T10:00:00",
                        "title": "Session three",
                        "content": "Sam and Rex went hiking in the mountains.",
                    },
                ],
                "questions": [
                    {
                        "id": "q1",
                        "question": "When did Sam start the violin?",
                        "category": "single-hop",
                        "evidence": ["s2"],
                    },
                    {
                        "id": "q2",
                        "question": "Where did Sam go with the dog Rex?",
                        "category": "multi-hop",
                        "evidence": ["s1", "s3"],
                    },
                    {"id": "q3", "question": "What car does Sam drive?", "category": "adversarial", "evidence": ["s1"]},
                ],
            }
        ],
    }
    path = tmp_path / "set.json"
    path.write_text(json.dumps(recall_set))
    out = tmp_path / "out.json"
    before = AIMemory.objects.count()
    call_command("recall_eval", str(path), "--json", str(out), "--database-in-place")
    report = json.loads(out.read_text())
    assert set(report) == {"latest", "lexical", "semantic", "hybrid", "latency_ms"}
    lexical = report["lexical"]["all-but-adversarial"]
    assert lexical["n"] == 2 and lexical["hit@1"] == 100.0 and lexical["all@3"] == 100.0
    assert {"hit@1", "hit@10", "all@10", "mrr", "tokens@10"} <= set(lexical)
    assert "adversarial" in report["hybrid"]
    assert report["latency_ms"]["hybrid"]["n"] == 3
    assert AIMemory.objects.count() == before
    assert "all-but-adversarial" in capsys.readouterr().out


def _first_turn_memory_block(client, llm, content):
    """Send `content` in a new conversation (201) and return the memory block the model saw."""
    conversation = client.post("/api/v1/conversations/", {"subject": "English"}, format="json").json()
    resp = client.post(
        f"/api/v1/conversations/{conversation['id']}/messages/",
        {"content": content, "client_message_id": "m1"},
        format="json",
    )
    assert resp.status_code == 201, resp.content
    return next(m["content"] for m in llm.calls("chat")[0]["messages"] if "<student_memories>" in m["content"])


def test_chat_turn_shows_the_relevant_old_memory_to_the_model(clients, llm, school):
    """A chat turn's memory block holds an old memory relevant to the message, with its date
    and source, beside the latest ones."""
    alice = school["alice"]
    now = timezone.now()
    old = note(
        alice,
        "Afraid of speaking during oral presentations",
        "Gets anxious presenting.",
        created_at=now - timedelta(days=400),
    )
    for i in range(12):
        note(alice, f"Completed homework set number {i}", "Homework done on time.", created_at=now - timedelta(days=i))
    block = _first_turn_memory_block(clients["alice"], llm, "I must give an oral presentation tomorrow")
    assert "Afraid of speaking during oral presentations" in block
    assert f'<memory date="{old.created_at.date().isoformat()}" source="note saved by the tutor' in block


def test_chat_turn_works_when_the_embedder_is_down(clients, llm, school, openai_embedder):
    """An embeddings endpoint failing makes recall lexical; the chat answers normally."""
    note(school["alice"], "Afraid of speaking during oral presentations", "Gets anxious presenting.")
    llm.script("embeddings", {"status": 503})
    block = _first_turn_memory_block(clients["alice"], llm, "Help me prepare my oral presentation")
    assert "Afraid of speaking" in block


@pytest.mark.parametrize("source", ["summary_task", "save_memory_tool", "teacher"])
def test_block_cost_from_stored_counts_is_an_upper_bound(source):
    """The memory block is budgeted from stored token counts; the estimate never undercounts."""
    from datetime import UTC, datetime

    from llm.tokens import count_tokens
    from memory.models import AIMemory

    memories = []
    for i, (title, content) in enumerate(
        [
            ("Fractions with unlike denominators practice", "Scored 3/5. Review common denominators."),
            ("Élève en difficulté avec les équations", "Travailler les équations du premier degré, à l'oral."),
            ("Reading comprehension goals for next term", "word " * 180),
        ]
    ):
        memory = AIMemory(
            title=title,
            content=content,
            source=source,
            source_conversation_id=None if source == "teacher" else 9_876_543_210 + i,
            created_at=datetime(2026, 12, 31, tzinfo=UTC),
        )
        memory.token_count = count_tokens(f"{title}\n{content}")
        memories.append(memory)
    actual = count_tokens(
        "\n".join(
            [MEMORY_BLOCK_OPEN, MEMORY_PREAMBLE, *(format_memory(memory_item(m)) for m in memories), MEMORY_BLOCK_CLOSE]
        )
    )
    estimate = memory_block_tokens(memories)
    assert actual <= estimate <= actual + 30 * len(memories)


@pytest.mark.postgresql_only
def test_statistics_read_once_match_the_separate_reads(school):
    """The statistics recall reads once for the lexical search and the topic signal are what
    `document_frequencies` reads, also for a student with nothing indexed or no term stored."""
    alice, bob = school["alice"], school["bob"]
    note(alice, "Fractions with pizza slices", "Halves and quarters.")
    note(alice, "Fractions on a number line", "Thirds.")
    cases = [(alice, ["fraction", "half", "volcano"]), (alice, ["volcano"]), (alice, []), (bob, ["fraction"])]
    for student, terms in cases:
        rows = postings.pg_statistics(student_id=student.pk, terms=terms)
        assert postings.pg_frequencies(rows, terms) == search_backend().document_frequencies(
            student_id=student.pk, terms=terms
        )
