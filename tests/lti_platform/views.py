"""The test LMS's pages, built on lti1p3platform (a platform implementation of LTI 1.3 by
others): a course page frames the tool through lti1p3platform's OIDC login initiation, its
authorisation endpoint answers with lti1p3platform's signed launch (a resource link, or a deep
linking request for an instructor), and the deep-linking return checks the tool's signed
response with lti1p3platform and adds the link to the course.

State, as JSON files in LTI_PLATFORM_STATE_DIR that the tests write and read:
- `contexts.json`: {context id: {"title", "label", "section_sourcedid"}};
- `members-<context>.json`: the course's NRPS members ({"user_id", "roles", "name", "given_name",
  "family_name", "email", "lis_person_sourcedid", "status"}), shared with services.py;
- `links-<context>.json`: {resource link id: {"title", "custom"}}, deep-linked ones added.

A course page's query says what to launch: `?link=<id>`; `ttl=<seconds>` sets the id_token's
lifetime (negative: already expired); `deployment=<id>` launches through another deployment.
"""

from __future__ import annotations

import importlib
import json
import typing as t
from pathlib import Path
from urllib.parse import urlencode

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.utils.html import escape
from lti1p3platform.framework.django.message_launch import DjangoLTI1P3MessageLaunch
from lti1p3platform.framework.django.oidc_login import DjangoAPIOIDCLogin
from lti1p3platform.framework.django.request import DjangoRequest
from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.registration import Registration

COURSE_OFFERING = "http://purl.imsglobal.org/vocab/lis/v2/course#CourseOffering"


def _setting(name: str) -> t.Any:
    """One of the harness's settings (settings.py, from the fixture's environment)."""
    return getattr(settings, name)


def _state_file(name: str) -> Path:
    return Path(_setting("LTI_PLATFORM_STATE_DIR")) / name


def _read(name: str, default: t.Any) -> t.Any:
    path = _state_file(name)
    return json.loads(path.read_text()) if path.exists() else default


def _write(name: str, value: t.Any) -> None:
    path = _state_file(name)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(value, indent=2))
    tmp.replace(path)


class PlatformConf(LTI1P3PlatformConfAbstract):
    """The one registration of the tool with this platform, from the settings."""

    def init_platform_config(self, **kwargs: t.Any) -> None:
        pass

    def get_registration_by_params(self, **kwargs: t.Any) -> Registration:
        return (
            Registration()
            .set_iss(_setting("LTI_PLATFORM_ISSUER"))
            .set_client_id(_setting("LTI_PLATFORM_CLIENT_ID"))
            .set_deployment_id(_setting("LTI_PLATFORM_DEPLOYMENT_ID"))
            .set_oidc_login_url(_setting("LTI_TOOL_LOGIN_URL"))
            .set_launch_url(_setting("LTI_TOOL_LAUNCH_URL"))
            .set_deeplink_launch_url(_setting("LTI_TOOL_DEEP_LINK_URL"))
            .set_tool_key_set_url(_setting("LTI_TOOL_JWKS_URL"))
            .set_platform_private_key(_setting("LTI_PLATFORM_PRIVATE_KEY"))
            .set_platform_public_key(_setting("LTI_PLATFORM_PUBLIC_KEY"))
        )


def _platform() -> PlatformConf:
    conf = PlatformConf()
    conf.get_registration()
    return conf


class Login(DjangoAPIOIDCLogin):
    """The platform's OIDC login initiation; the message hint carries what to launch (JSON)."""

    def set_lti_message_hint(self, **kwargs: t.Any) -> None:
        self._lti_message_hint = json.dumps(kwargs)


def jwks(request: HttpRequest) -> JsonResponse:
    return JsonResponse(_platform().get_jwks())


def _frame(request: HttpRequest, context_id: str, user_id: str, *, deep_link: bool) -> HttpResponse:
    context = _read("contexts.json", {}).get(context_id)
    if context is None:
        return HttpResponseBadRequest("unknown course")
    hint: dict[str, t.Any] = {"context": context_id, "deep_link": deep_link}
    for name in ("link", "deployment"):
        if name in request.GET:
            hint[name] = request.GET[name]
    if "ttl" in request.GET:
        hint["ttl"] = int(request.GET["ttl"])
    login = Login(request, _platform())
    login.set_lti_message_hint(**hint)
    if deep_link:
        login.set_deeplinking_launch_url()
    url = login.prepare_preflight_url(user_id)
    return HttpResponse(
        f"<!doctype html><html><head><title>{escape(context['title'])}</title></head><body>"
        f"<h1>{escape(context['title'])}</h1>"
        f'<p id="preflight" hidden>{escape(url)}</p>'
        f'<iframe id="tool" name="tool" title="Tutor" src="{escape(url)}" width="1100" height="860"></iframe>'
        "</body></html>"
    )


def course_page(request: HttpRequest, context_id: str, user_id: str) -> HttpResponse:
    """A course's page for one member, launching the resource link `?link=` in a frame."""
    return _frame(request, context_id, user_id, deep_link=False)


def deep_link_page(request: HttpRequest, context_id: str, user_id: str) -> HttpResponse:
    """An instructor adding content from the tool: a deep linking request in a frame."""
    return _frame(request, context_id, user_id, deep_link=True)


def _services() -> t.Any:
    """tests/lti_platform/services.py (NRPS and AGS), when there is one."""
    try:
        return importlib.import_module("tests.lti_platform.services")
    except ImportError:
        return None


class Launch(DjangoLTI1P3MessageLaunch):
    """The launch of the hint's course and link as the member `login_hint` names."""

    def prepare_launch(self, preflight_response: dict[str, t.Any]) -> None:
        assert self._registration is not None
        hint = json.loads(preflight_response["lti_message_hint"])
        context_id = hint["context"]
        user_id = preflight_response["login_hint"]
        context = _read("contexts.json", {})[context_id]
        members = _read(f"members-{context_id}.json", [])
        member = next(m for m in members if m["user_id"] == user_id)
        self.set_user_data(user_id, member["roles"], full_name=member.get("name"), email_address=member.get("email"))
        self.set_launch_context_claim(
            context_id, context_types=[COURSE_OFFERING], context_title=context["title"], context_label=context["label"]
        )
        lis = {"person_sourcedid": member.get("lis_person_sourcedid") or ""}
        if context.get("section_sourcedid"):
            lis["course_section_sourcedid"] = context["section_sourcedid"]
        self.set_extra_claims(
            {
                "given_name": member.get("given_name", ""),
                "family_name": member.get("family_name", ""),
                "https://purl.imsglobal.org/spec/lti/claim/lis": lis,
            }
        )
        base = _setting("LTI_PLATFORM_URL")
        self.set_launch_presentation_claim(
            document_target="iframe", return_url=f"{base}/course/{context_id}/{user_id}/"
        )
        services = _services()
        if services is not None:
            self.set_extra_claims({**services.nrps_claim(context_id), **services.ags_claim(context_id)})
        if hint.get("deep_link"):
            query = urlencode({"context": context_id})
            self.set_dl(f"{base}/deep-link-return/?{query}", title=context["title"], accept_types={"ltiResourceLink"})
        else:
            link_id = hint["link"]
            link = _read(f"links-{context_id}.json", {})[link_id]
            self.set_resource_link_claim(link_id, title=link["title"])
            if link.get("custom"):
                self.set_custom_parameters_claim(link["custom"])
        if "ttl" in hint:
            self.set_id_token_expiration(hint["ttl"])
        if "deployment" in hint:
            self._registration.set_deployment_id(hint["deployment"])


def authorize(request: HttpRequest) -> HttpResponse:
    """The OIDC authorisation endpoint: the signed launch, posted to the tool by a form."""
    response: HttpResponse = Launch(DjangoRequest(request), _platform()).lti_launch()
    return response


def deep_link_return(request: HttpRequest) -> HttpResponse:
    """The tool's deep-linking response (checked against the tool's JWKS): its resource links
    join the course, under new ids, with their custom parameters."""
    context_id = request.GET["context"]
    items = _platform().validate_deeplinking_resp({"JWT": request.POST["JWT"]})
    links = _read(f"links-{context_id}.json", {})
    added = []
    for item in items:
        link_id = f"dl-{len(links) + 1}"
        links[link_id] = {"title": item.get("title", ""), "custom": item.get("custom") or {}, "url": item.get("url")}
        added.append(link_id)
    _write(f"links-{context_id}.json", links)
    return HttpResponse(
        "<!doctype html><html><body><h1>Content added</h1>"
        f'<pre id="added">{escape(json.dumps({"links": added, "items": items}))}</pre></body></html>'
    )


def debug_links(request: HttpRequest, context_id: str) -> JsonResponse:
    return JsonResponse(_read(f"links-{context_id}.json", {}))
