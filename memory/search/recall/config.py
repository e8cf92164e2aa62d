"""Recall's tuning, as recall's callers name it: memory.search.tuning (apart from recall, so that
the engines, which recall reaches through the factory, read it without an import circle)."""

from memory.search.tuning import RecallConfig, decay

__all__ = ["RecallConfig", "decay"]
