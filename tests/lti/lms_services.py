"""The test LMS's LTI Advantage services (tests/lti_platform/services.py) as the tests see them:
a course's members set, and the line items and scores the tool sent read back, through the
LMS's debug endpoints; and an LMS course whose people launch the tool, for the roster sync's and
the grades' tests."""

from __future__ import annotations

from typing import Any

import httpx2

from tests.lti.conftest import INSTRUCTOR, LEARNER, MENTOR, LtiPlatform
from tests.lti.test_launch import COURSE, launched, redeem

__all__ = ["COURSE", "INSTRUCTOR", "LEARNER", "MENTOR", "launched", "redeem"]


def member(sub: str, role: str, status: str = "Active", **fields: Any) -> dict[str, Any]:
    """An NRPS member of the course."""
    return {"user_id": sub, "roles": [role], "status": status, **fields}


def members_replace(platform: LtiPlatform, members: list[dict[str, Any]], course: str = COURSE) -> None:
    resp = httpx2.put(f"{platform.url}/debug/members/{course}/", json=members)
    assert resp.status_code == 200, resp.text


def scores(platform: LtiPlatform) -> dict[str, Any]:
    """The scores the LMS kept (`scores`) and the posts it answered 500 (`failed`)."""
    return dict(httpx2.get(f"{platform.url}/debug/scores/").json())


def lineitems(platform: LtiPlatform) -> list[dict[str, Any]]:
    return list(httpx2.get(f"{platform.url}/debug/lineitems/").json())


def scores_fail(platform: LtiPlatform, count: int) -> None:
    """The LMS answers its next `count` score posts 500."""
    assert httpx2.post(f"{platform.url}/debug/fail-scores/", json={"count": count}).status_code == 200
