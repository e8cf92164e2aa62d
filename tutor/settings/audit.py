"""The access log (audit/): who read a student's records, kept for its own period (docs/privacy.md)."""

from __future__ import annotations

from .env import env_int

# How long an access entry is kept: three school years by default, so that a family or a
# student asking what was read of them during their years in a school, or a complaint to a data
# protection authority, finds the answer (docs/privacy.md#access-log).
ACCESS_LOG_DAYS = env_int("ACCESS_LOG_DAYS", 3 * 365, minimum=1)
