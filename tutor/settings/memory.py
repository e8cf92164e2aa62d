"""Student memory: what the prompt loads, the memory lifecycle (docs/memory-lifecycle.md), and
the embeddings recall uses. Recall's tuning is code, not configuration
(memory.search.recall.config.RecallConfig)."""

from __future__ import annotations

from .env import env_bool, env_choice, env_float, env_int, env_str, env_url

# The prompt: the MEMORY_LOAD_COUNT latest memories plus up to MEMORY_RELEVANT_COUNT recalled for
# the student's message, deduplicated, within MEMORY_TOKEN_BUDGET tokens for the whole memory block.
MEMORY_LOAD_COUNT = env_int("MEMORY_LOAD_COUNT", 10)
MEMORY_RELEVANT_COUNT = env_int("MEMORY_RELEVANT_COUNT", 10)
MEMORY_TOKEN_BUDGET = env_int("MEMORY_TOKEN_BUDGET", 2000)

# The memory lifecycle (docs/memory-lifecycle.md).
# Facts and approaches (the semantic and procedural tiers) extracted from each new episodic
# memory by the summary model, in the background; at most MEMORY_TIER_COUNT of them, the most
# confident first, open the prompt's memory block (within MEMORY_TOKEN_BUDGET).
MEMORY_EXTRACTION_ENABLED = env_bool("MEMORY_EXTRACTION_ENABLED", True)
MEMORY_FACT_MIN_CONFIDENCE = env_float("MEMORY_FACT_MIN_CONFIDENCE", 0.5)
MEMORY_TIER_COUNT = env_int("MEMORY_TIER_COUNT", 10)
# The model's supersession and merge decisions are applied at this confidence or more.
MEMORY_SUPERSEDE_MIN_CONFIDENCE = env_float("MEMORY_SUPERSEDE_MIN_CONFIDENCE", 0.7)
MEMORY_MERGE_MIN_CONFIDENCE = env_float("MEMORY_MERGE_MIN_CONFIDENCE", 0.7)
# Consolidation: active memories of one tier whose vectors are at least this similar (cosine)
# form a cluster the model is asked to merge; every MEMORY_CONSOLIDATION_INTERVAL_HOURS.
MEMORY_CONSOLIDATION_SIMILARITY = env_float("MEMORY_CONSOLIDATION_SIMILARITY", 0.92)
MEMORY_CONSOLIDATION_INTERVAL_HOURS = env_float("MEMORY_CONSOLIDATION_INTERVAL_HOURS", 24.0)
MEMORY_CONSOLIDATION_MAX_CLUSTER = env_int("MEMORY_CONSOLIDATION_MAX_CLUSTER", 20)

# The student card (memory.card, docs/card.md): its limit in tokens as the prompt shows it, and
# the confidence from which a change extraction proposes (an accommodation aside) is applied.
MEMORY_CARD_MAX_TOKENS = 300
MEMORY_CARD_AUTO_APPLY_CONFIDENCE = 0.9

# --- Embeddings (memory.search.embeddings) ----------------------------------------------------------------
# auto: the local model if requirements-embeddings.txt is installed, else none (lexical recall).
EMBEDDINGS_BACKEND = env_choice("EMBEDDINGS_BACKEND", "auto", ("auto", "local", "openai", "none"))
# The openai backend's endpoint; Ollama http://127.0.0.1:11434/v1.
EMBEDDINGS_BASE_URL = env_url("EMBEDDINGS_BASE_URL", schemes=("http", "https"))
EMBEDDINGS_API_KEY = env_str("EMBEDDINGS_API_KEY", secret=True)
EMBEDDINGS_MODEL = env_str("EMBEDDINGS_MODEL", "text-embedding-3-small")  # Ollama: nomic-embed-text
# manage.py embeddings_server: EMBEDDINGS_MODEL=all-MiniLM-L6-v2 shares the local backend's vectors.
EMBEDDINGS_TIMEOUT_SECONDS = env_float("EMBEDDINGS_TIMEOUT_SECONDS", 5.0)
# ONNX Runtime threads of the local model per process. 1: on two threads a query waits for both cores,
# which a busy machine rarely has free (docs/recall.md). 0: one per core.
EMBEDDINGS_LOCAL_THREADS = env_int("EMBEDDINGS_LOCAL_THREADS", 1)
# The local backend embeds queries with the model's int8 query side (memory.search.embeddings,
# LocalEmbedder.embed_query): same model name, memories still in fp32. false: queries in fp32.
EMBEDDINGS_QUERY_INT8 = env_bool("EMBEDDINGS_QUERY_INT8", True)
# openai backend: texts per request; a larger batch is sent as several requests.
EMBEDDINGS_REQUEST_MAX_INPUTS = env_int("EMBEDDINGS_REQUEST_MAX_INPUTS", 128)
# Recent query vectors each process keeps (memory.search.embeddings.embed_queries; 0 = off).
EMBEDDINGS_QUERY_CACHE_SIZE = env_int("EMBEDDINGS_QUERY_CACHE_SIZE", 1024)
EMBEDDINGS_BATCH_SIZE = env_int("EMBEDDINGS_BATCH_SIZE", 64)
EMBEDDINGS_MAX_RETRIES = env_int("EMBEDDINGS_MAX_RETRIES", 5)
EMBEDDINGS_RETRY_BACKOFF_SECONDS = env_float("EMBEDDINGS_RETRY_BACKOFF_SECONDS", 30.0)
EMBEDDINGS_SWEEP_BATCH = env_int("EMBEDDINGS_SWEEP_BATCH", 500)
# The bytes of decoded vectors each process keeps (memory.search.vector_cache), least recently used
# student out. A 1,000-memory student takes about 13-16 MB with its sentences. On PostgreSQL a
# student left out, or whose vectors alone exceed this, is ranked in the database
# (memory.search.vector_search) instead.
EMBEDDINGS_CACHE_BYTES = env_int("EMBEDDINGS_CACHE_BYTES", 256 * 1024 * 1024)
# numpy's BLAS threads per process (memory.apps.limit_blas_threads); 0 leaves OpenBLAS's default
# (one per core), which makes recall's small products wait for every core on a loaded machine.
NUMPY_BLAS_THREADS = env_int("NUMPY_BLAS_THREADS", 1)
