"""Building blocks of the API (core.api)."""

from __future__ import annotations

from accounts.apis import UserOutput
from core.api import represent


def test_represent_shows_a_row_as_a_new_serializer_would(school):
    """`represent` answers what `Serializer(row).data` answers, for one row and the next."""
    for user in (school["alice"], school["teacher_a"]):
        assert represent(UserOutput, user) == UserOutput(user).data
