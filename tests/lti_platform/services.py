"""The test platform's LTI Advantage services, built on lti1p3platform's own classes: the OAuth2
token endpoint (client credentials with a JWT client assertion signed by the tool's key, checked
against the tool's JWKS URL), Names and Role Provisioning (a course's memberships) and Assignment
and Grade Services (line items, scores, results).

The platform keeps its course members, the line items the tool made and every score it received
as JSON files in LTI_PLATFORM_STATE_DIR, under a file lock, so that the tests (another process)
set the roster and read back what the tool sent through the debug endpoints (services_urls.py):
`PUT debug/members/<context>/`, `GET debug/scores/`, `GET debug/lineitems/`, and
`POST debug/fail-scores/` makes the next score posts answer 500 (a platform having a bad moment).
"""

from __future__ import annotations

import fcntl
import json
import typing as t
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import jwt
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from lti1p3platform.ags import LtiAgs
from lti1p3platform.exceptions import LineItemNotFoundException, LtiException, LtiServiceException
from lti1p3platform.framework.django.request import DjangoRequest
from lti1p3platform.framework.django.response import wrap_json_resp
from lti1p3platform.lineitem import TLineItem
from lti1p3platform.membership import Context
from lti1p3platform.nrps import LtiNrps
from lti1p3platform.response import Response
from lti1p3platform.score import TScore, UpdateScoreStatus
from lti1p3platform.service_connector import (
    AssignmentsGradesService,
    NamesRoleProvisioningService,
    TPage,
)

from tests.lti_platform.views import PlatformConf


def _setting(name: str) -> t.Any:
    """One of the harness's settings (tests/lti_platform/settings.py, from the fixture's environment)."""
    return getattr(settings, name)


# --- State --------------------------------------------------------------------------------------


def _state_dir() -> Path:
    path = Path(_setting("LTI_PLATFORM_STATE_DIR"))
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextmanager
def _locked() -> Iterator[Path]:
    folder = _state_dir()
    with (folder / "services.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield folder


@contextmanager
def state() -> Iterator[dict[str, t.Any]]:
    """The services' own state, read and written under an exclusive lock: `lineitems` ([line
    item with its `context`]), `scores` ([received score with its `lineitem`]), `failed` (score
    posts answered 500) and `fail_next` (how many more to answer 500)."""
    with _locked() as folder:
        path = folder / "services.json"
        data = json.loads(path.read_text()) if path.exists() else {}
        data.setdefault("lineitems", [])
        data.setdefault("scores", [])
        data.setdefault("failed", [])
        data.setdefault("fail_next", 0)
        yield data
        _write(path, data)


def members(context_id: str, replace: list[dict[str, t.Any]] | None = None) -> list[dict[str, t.Any]]:
    """A course's NRPS members, `members-<context>.json` (which the launch pages read too);
    `replace` writes them first."""
    with _locked() as folder:
        path = folder / f"members-{context_id}.json"
        if replace is not None:
            _write(path, replace)
        return list(json.loads(path.read_text())) if path.exists() else []


def _write(path: Path, value: t.Any) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(value, indent=2))
    tmp.replace(path)


def base_url() -> str:
    return str(_setting("LTI_PLATFORM_URL")).rstrip("/")


def memberships_url(context_id: str) -> str:
    return f"{base_url()}/contexts/{context_id}/memberships/"


def lineitems_url(context_id: str) -> str:
    return f"{base_url()}/contexts/{context_id}/lineitems/"


def nrps_claim(context_id: str) -> dict[str, t.Any]:
    """The launch's Names and Role Provisioning claim for this course."""
    return LtiNrps(context_memberships_url=memberships_url(context_id)).get_lti_nrps_launch_claim()


def ags_claim(context_id: str) -> dict[str, t.Any]:
    """The launch's Assignment and Grade Services claim for this course: the tool may manage
    line items, read results and post scores."""
    return LtiAgs(lineitems_url=lineitems_url(context_id), allow_creating_lineitems=True).get_lti_ags_launch_claim()


# --- The platform's registration of the tool ---------------------------------------------------


def platform() -> PlatformConf:
    """The platform's side of its one tool registration (views.PlatformConf): its issuer and
    keys, the tool's client id and JWKS URL (fetched at each token request, as lti1p3platform does)."""
    config = PlatformConf()
    config.get_registration()
    return config


def _error(message: str, status: int) -> JsonResponse:
    return JsonResponse({"error": message}, status=status)


def token(request: HttpRequest) -> HttpResponse:
    """POST token/: an access token for the requested scopes, to a tool whose client assertion
    is signed by a key of its JWKS, names the tool as issuer and subject, and this endpoint as
    audience (RFC 7523; lti1p3platform checks the signature and the grant)."""
    if request.method != "POST":
        return _error("method not allowed", 405)
    config = platform()
    form = request.POST.dict()
    assertion = form.get("client_assertion", "")
    try:
        claims = config.tool_validate_and_decode(assertion)
        client_id = _setting("LTI_PLATFORM_CLIENT_ID")
        if claims.get("iss") != client_id or claims.get("sub") != client_id:
            return _error("invalid_client", 401)
        if claims.get("aud") not in (f"{base_url()}/token/", [f"{base_url()}/token/"]):
            return _error("invalid_client", 401)
        answer = config.get_access_token(form)
    except (LtiException, jwt.PyJWTError) as exc:
        return _error(f"invalid_client: {exc}", 401)
    except Exception as exc:  # lti1p3platform's MissingRequiredClaim, UnsupportedGrantType
        return _error(f"invalid_request: {type(exc).__name__} {exc}", 400)
    return JsonResponse(dict(answer))


def _answer(
    service: NamesRoleProvisioningService | AssignmentsGradesService, handler: t.Any, **kwargs: t.Any
) -> HttpResponse:
    """Run an lti1p3platform service handler; a bad bearer token is its 401."""
    try:
        response: Response = service.handle_resp(handler, **kwargs)
    except (LtiException, jwt.PyJWTError) as exc:
        return _error(f"Invalid LTI 1.3 authentication token: {exc}", 401)
    return wrap_json_resp(response)


# --- Names and Role Provisioning ----------------------------------------------------------------


class CourseMemberships(NamesRoleProvisioningService):
    def __init__(self, request: HttpRequest, context_id: str) -> None:
        super().__init__(DjangoRequest(request), platform(), memberships_url(context_id))
        self.context_id = context_id

    def get_member_data_page(
        self, page: int = 1, limit: int | None = None, role: str | None = None, since: str | None = None, **_: t.Any
    ) -> TPage:
        listed = members(self.context_id)
        if role:
            listed = [m for m in listed if any(r.endswith(f"#{role}") or r == role for r in m["roles"])]
        return {"content": listed, "has_next": False, "next": None}

    def get_context_by_id(self) -> Context:
        return Context(id=self.context_id, label=self.context_id, title=f"Course {self.context_id}")

    def is_resource_link_valid(self, context_id: str, resource_link_id: str) -> bool:
        return True


def memberships(request: HttpRequest, context_id: str) -> HttpResponse:
    """GET contexts/<context>/memberships/: the course's members (NRPS 2.0)."""
    service = CourseMemberships(request, context_id)
    return _answer(service, service.handle_get_members)


# --- Assignment and Grade Services --------------------------------------------------------------


def _lineitem_url(context_id: str, number: int) -> str:
    return f"{lineitems_url(context_id)}{number}"


class CourseGrades(AssignmentsGradesService):
    def __init__(self, request: HttpRequest, context_id: str, number: int | None = None) -> None:
        item = _lineitem_url(context_id, number) if number is not None else None
        super().__init__(DjangoRequest(request), platform(), lineitems_url(context_id), item)
        self.context_id = context_id

    def _items(self, data: dict[str, t.Any]) -> list[dict[str, t.Any]]:
        return [item for item in data["lineitems"] if item["context"] == self.context_id]

    @staticmethod
    def _public(item: dict[str, t.Any]) -> TLineItem:
        return t.cast(TLineItem, {k: v for k, v in item.items() if k != "context"})

    def find_lineitems(
        self,
        page: int = 1,
        limit: int | None = None,
        line_item_id: str | None = None,
        resource_link_id: str | None = None,
        resource_id: str | None = None,
        tag: str | None = None,
        **_: t.Any,
    ) -> TPage:
        with state() as data:
            items = self._items(data)
        wanted = {"id": line_item_id, "resourceLinkId": resource_link_id, "resourceId": resource_id, "tag": tag}
        items = [i for i in items if all(v is None or i.get(k) == v for k, v in wanted.items())]
        return {"content": [self._public(i) for i in items], "has_next": False, "next": None}

    def find_lineitem(self, line_item_id: str) -> TLineItem:
        with state() as data:
            for item in self._items(data):
                if item["id"] == line_item_id:
                    return self._public(item)
        raise LineItemNotFoundException(line_item_id)

    def create_lineitem(self, creation_data: TLineItem) -> TLineItem:
        if not creation_data.get("label") or not isinstance(creation_data.get("scoreMaximum"), int | float):
            raise LtiServiceException("a line item needs a label and a scoreMaximum", 400)
        with state() as data:
            number = len(data["lineitems"]) + 1
            item = {**creation_data, "id": _lineitem_url(self.context_id, number), "context": self.context_id}
            data["lineitems"].append(item)
        return self._public(item)

    def update_lineitem(self, update_data: TLineItem) -> TLineItem:
        with state() as data:
            for item in self._items(data):
                if item["id"] == update_data["id"]:
                    item.update(update_data)
                    return self._public(item)
        raise LineItemNotFoundException(update_data["id"])

    def delete_lineitem(self, line_item_id: str) -> None:
        with state() as data:
            before = len(data["lineitems"])
            data["lineitems"] = [i for i in data["lineitems"] if i["id"] != line_item_id]
            if len(data["lineitems"]) == before:
                raise LineItemNotFoundException(line_item_id)

    def update_score(self, line_item_id: str, score: TScore) -> UpdateScoreStatus:
        """Keep the score; the latest by `timestamp` is the result (an older one is refused,
        the same one again accepted: a repeat is harmless)."""
        self.find_lineitem(line_item_id)
        received = {**score, "lineitem": line_item_id}
        with state() as data:
            earlier = [s for s in data["scores"] if s["lineitem"] == line_item_id and s["userId"] == score["userId"]]
            if earlier and _when(earlier[-1]["timestamp"]) > _when(str(score["timestamp"])):
                return UpdateScoreStatus.OLD_TIMESTAMP
            data["scores"].append(received)
        return UpdateScoreStatus.SUCCESS if earlier else UpdateScoreStatus.CREATED

    def get_results(
        self, line_item_id: str, page: int = 1, limit: int | None = None, user_id: str | None = None, **_: t.Any
    ) -> TPage:
        self.find_lineitem(line_item_id)
        latest: dict[str, dict[str, t.Any]] = {}
        with state() as data:
            for s in data["scores"]:
                if s["lineitem"] == line_item_id and (user_id is None or s["userId"] == user_id):
                    latest[s["userId"]] = s
        results = [
            {
                "id": f"{line_item_id}/results/{uid}",
                "scoreOf": line_item_id,
                "userId": uid,
                "resultScore": s.get("scoreGiven"),
                "resultMaximum": s.get("scoreMaximum"),
            }
            for uid, s in latest.items()
        ]
        return {"content": results, "has_next": False, "next": None}


def _when(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def lineitems(request: HttpRequest, context_id: str) -> HttpResponse:
    """GET (list) and POST (create) contexts/<context>/lineitems/."""
    service = CourseGrades(request, context_id)
    if request.method == "POST":
        return _answer(service, service.handle_create_lineitem)
    return _answer(service, service.handle_get_lineitems)


def lineitem(request: HttpRequest, context_id: str, number: int) -> HttpResponse:
    """GET, PUT and DELETE contexts/<context>/lineitems/<n>."""
    service = CourseGrades(request, context_id, number)
    line_item_id = _lineitem_url(context_id, number)
    handler = {"PUT": service.handle_update_lineitem, "DELETE": service.handle_delete_lineitem}.get(
        request.method or "", service.handle_get_lineitem
    )
    return _answer(service, handler, line_item_id=line_item_id)


def scores(request: HttpRequest, context_id: str, number: int) -> HttpResponse:
    """POST contexts/<context>/lineitems/<n>/scores: a score for one user. While `fail_next` is
    above zero the platform answers 500 instead, and counts the post in `failed`."""
    with state() as data:
        if data["fail_next"] > 0:
            data["fail_next"] -= 1
            data["failed"].append(json.loads(request.body or b"null"))
            return _error("the platform is having a bad moment", 500)
    service = CourseGrades(request, context_id, number)
    return _answer(service, service.handle_update_score, line_item_id=_lineitem_url(context_id, number))


def results(request: HttpRequest, context_id: str, number: int) -> HttpResponse:
    """GET contexts/<context>/lineitems/<n>/results: the latest score of each user."""
    service = CourseGrades(request, context_id, number)
    return _answer(service, service.handle_get_results, line_item_id=_lineitem_url(context_id, number))


# --- Debug endpoints for the tests --------------------------------------------------------------


def debug_members(request: HttpRequest, context_id: str) -> HttpResponse:
    """GET the course's NRPS members; PUT replaces them with the JSON list given."""
    replace = json.loads(request.body) if request.method == "PUT" else None
    return JsonResponse(members(context_id, replace), safe=False)


def debug_scores(request: HttpRequest) -> HttpResponse:
    """What the platform received: the scores it kept, and the posts it answered 500."""
    with state() as data:
        return JsonResponse({"scores": data["scores"], "failed": data["failed"]})


def debug_lineitems(request: HttpRequest) -> HttpResponse:
    with state() as data:
        return JsonResponse(data["lineitems"], safe=False)


def debug_fail_scores(request: HttpRequest) -> HttpResponse:
    """POST {"count": n}: the next n score posts answer 500."""
    with state() as data:
        data["fail_next"] = int(json.loads(request.body or b"{}").get("count", 1))
        return JsonResponse({"fail_next": data["fail_next"]})
