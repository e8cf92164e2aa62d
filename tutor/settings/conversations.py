"""The chat: message limits, tool rounds, the turn's lease and deadline, compression, and the
summary written when a conversation ends."""

from __future__ import annotations

from .env import env_float, env_int

MESSAGE_MAX_CHARS = env_int("MESSAGE_MAX_CHARS", 20_000)
SAVE_MEMORY_MAX_PER_CONVERSATION = env_int("SAVE_MEMORY_MAX_PER_CONVERSATION", 5)
MAX_TOOL_ROUNDS = env_int("MAX_TOOL_ROUNDS", 3)
# A turn claims its conversation with a lease (conversations.turn.claim): renewed every third of this
# while the model answers, so a crashed process blocks a conversation for at most this long.
TURN_LEASE_SECONDS = env_float("TURN_LEASE_SECONDS", 30.0)
# How long a send waits for the conversation's previous turn before answering 503 (not stored).
TURN_WAIT_SECONDS = env_float("TURN_WAIT_SECONDS", 120.0)
# The longest a whole turn (every model round) may take before it fails as unavailable.
TURN_DEADLINE_SECONDS = env_float("TURN_DEADLINE_SECONDS", 180.0)
COMPRESSION_THRESHOLD_TOKENS = env_int("COMPRESSION_THRESHOLD_TOKENS", 150_000)
KEEP_RECENT_MESSAGES = env_int("KEEP_RECENT_MESSAGES", 14)
CONVERSATION_IDLE_MINUTES = env_int("CONVERSATION_IDLE_MINUTES", 30)
SUMMARY_MAX_RETRIES = env_int("SUMMARY_MAX_RETRIES", 5)
SUMMARY_RETRY_BACKOFF_SECONDS = env_float("SUMMARY_RETRY_BACKOFF_SECONDS", 30.0)
# A pending summary untouched for this long is re-enqueued by the periodic sweep.
SUMMARY_SWEEP_AFTER_MINUTES = env_int("SUMMARY_SWEEP_AFTER_MINUTES", 15)
# A summary requested this long ago and never started (its message lost, or never sent because
# the broker was down) is re-enqueued by the next sweep (every minute).
SUMMARY_UNSTARTED_AFTER_SECONDS = env_int("SUMMARY_UNSTARTED_AFTER_SECONDS", 60)
SUMMARY_MAX_TRANSCRIPT_TOKENS = env_int("SUMMARY_MAX_TRANSCRIPT_TOKENS", 100_000)
