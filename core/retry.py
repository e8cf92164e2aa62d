"""The retry delay every background task uses for a transient failure (a model or storage down)."""

from __future__ import annotations

import random


def backoff_seconds(base: float, retries: int) -> float:
    """Exponential backoff with jitter: `base` x 2^retries, give or take 20%, so that the tasks of
    one outage do not all come back at the same moment."""
    return float(base * (2**retries) * random.uniform(0.8, 1.2))
