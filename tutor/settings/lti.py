"""LTI 1.3 (lti/): the tutor as a tool of the schools' LMS (docs/lti.md)."""

from __future__ import annotations

from .env import env_float, env_int

# Grade passback (lti.grades): retries of a quiz score the course's platform did not take
# (network, a 5xx or 429), the first after this many seconds, doubled at each retry, give or take
# 20% (8 retries: about 85 minutes in all). A sweep every 5 minutes sends the lost ones again.
LTI_SCORE_MAX_RETRIES = env_int("LTI_SCORE_MAX_RETRIES", 8, minimum=0)
LTI_SCORE_BACKOFF_SECONDS = env_float("LTI_SCORE_BACKOFF_SECONDS", 10.0, minimum=0.0)
