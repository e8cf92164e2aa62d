"""The tool's client of a platform's LTI Advantage services: pylti1p3's ServiceConnector for a
registration (its OAuth2 token by a client assertion signed with the tool's key), on an HTTP
session whose every request has a time limit, so that a platform that does not answer fails the
try instead of holding a worker."""

from __future__ import annotations

from typing import Any

import requests
from lti_tool.models import LtiRegistration
from pylti1p3.service_connector import REQUESTS_USER_AGENT, ServiceConnector

from lti.keys import tool_key_ensure

TIMEOUT_SECONDS = 30


class _TimedSession(requests.Session):
    def request(self, method: str | bytes, url: str | bytes, *args: Any, **kwargs: Any) -> requests.Response:
        kwargs.setdefault("timeout", TIMEOUT_SECONDS)
        return super().request(method, url, *args, **kwargs)


def service_connector(registration: LtiRegistration) -> ServiceConnector:
    """The client of `registration`'s platform, signing with the tool's newest key (made if none)."""
    tool_key_ensure()
    session = _TimedSession()
    session.headers["User-Agent"] = REQUESTS_USER_AGENT
    return ServiceConnector(registration.to_registration(), requests_session=session)
