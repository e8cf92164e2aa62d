"""The LTI pages, under /lti/ (lti/urls.py): the JWKS, the OIDC login initiation, the launch
(resource link and deep linking), and the deep-linking picker's answer. They are shown in the
LMS's frame (lti.frames). Every refusal is a page saying why, with a 4xx: never a 500."""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

from django import forms
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from lti_tool.models import LtiLaunch
from pylti1p3.deep_link_resource import DeepLinkResource
from pylti1p3.exception import LtiException, OIDCException

from accounts.models import User
from core.errors import ApplicationError
from lti import oidc
from lti.handoff import handoff_issue
from lti.keys import tool_jwks, tool_key_ensure
from lti.launch import TOPIC_PARAMETER, launch_apply
from lti.people import Refused, role_for

logger = logging.getLogger(__name__)

# What pylti1p3 may raise on a malformed request besides its own exceptions (a JWT whose parts
# are not the JSON objects it expects): a refused launch, never a 500.
_MALFORMED = (LtiException, OIDCException, ValueError, TypeError, KeyError, AttributeError)


def _page(request: HttpRequest, message: str, *, status: int, return_url: str | None = None) -> HttpResponse:
    return render(
        request,
        "lti/message.html",
        {"title": _("Tutor"), "message": message, "return_url": return_url, "back": _("Back to the course")},
        status=status,
    )


@require_GET
def jwks(request: HttpRequest) -> JsonResponse:
    """The tool's public keys, where platforms check its signatures."""
    return JsonResponse(tool_jwks())


@csrf_exempt
@require_http_methods(["GET", "POST"])
def login(request: HttpRequest) -> HttpResponse:
    """The platform's OIDC login initiation: on to its authorisation URL."""
    try:
        tool_key_ensure()
        return oidc.login_redirect(request)
    except _MALFORMED as exc:
        logger.info("LTI login refused: %s", exc)
        return _page(request, _("This LMS is not set up for the tutor (%(reason)s).") % {"reason": exc}, status=400)


@csrf_exempt
@require_POST
def launch(request: HttpRequest) -> HttpResponse:
    """The platform's launch: a resource link opens the student's chat or the teacher's class
    (with a one-time code in the fragment, lti.handoff); a deep-linking request (an instructor
    adding the tutor to a course) shows the topic picker."""
    try:
        lti_launch = oidc.launch_validate(request)
    except _MALFORMED as exc:
        logger.info("LTI launch refused: %s", exc)
        return _page(request, _("This launch could not be checked (%(reason)s).") % {"reason": exc}, status=400)
    if not (lti_launch.is_resource_launch or lti_launch.is_deep_link_launch):
        return _refused(lti_launch, request, _("The tutor does not offer this kind of launch."), status=400)
    try:
        landing = launch_apply(launch=lti_launch)
    except Refused as exc:
        return _refused(lti_launch, request, str(exc), status=403)
    except ApplicationError as exc:  # a race with another launch of the same person (a Conflict)
        return _refused(lti_launch, request, exc.message, status=exc.status_code)
    if lti_launch.is_deep_link_launch:
        return _picker(request, launch_id=lti_launch.get_launch_id())
    code = handoff_issue(
        user=landing.person, classroom_id=landing.classroom_id, conversation_id=landing.conversation_id
    )
    page = "web:student" if landing.person.role == User.Role.STUDENT else "web:teacher"
    return HttpResponseRedirect(reverse(page) + "#lti=" + code)


def _refused(lti_launch: LtiLaunch, request: HttpRequest, message: str, *, status: int) -> HttpResponse:
    """A refusal page, with a link back to the course when the LMS gave one (http or https only)."""
    return_url = lti_launch.get_return_url(lti_errormsg=message)
    if return_url and urlsplit(return_url).scheme not in ("http", "https"):
        return_url = None
    return _page(request, message, status=status, return_url=return_url)


class DeepLinkForm(forms.Form):
    launch_id = forms.CharField(max_length=100)
    topic = forms.CharField(max_length=200)
    title = forms.CharField(max_length=200)


def _picker(
    request: HttpRequest, *, launch_id: str, form: DeepLinkForm | None = None, status: int = 200
) -> HttpResponse:
    data = form.data if form is not None else {}
    return render(
        request,
        "lti/deep_link.html",
        {
            "title": _("A tutor for your course"),
            "launch_id": launch_id,
            "topic": data.get("topic", ""),
            "link_title": data.get("title", ""),
            "error": _("Give a topic and a title.") if form is not None else "",
        },
        status=status,
    )


@csrf_exempt
@require_POST
def deep_link_respond(request: HttpRequest) -> HttpResponse:
    """The picker's answer: back to the platform with a signed deep-linking response holding one
    `ltiResourceLink` to the launch URL, its topic in the custom parameters. No CSRF cookie can
    live in the frame: the form carries the launch's id, 128 random bits (oidc.launch_restore)."""
    launch_id = request.POST.get("launch_id", "")
    lti_launch = oidc.launch_restore(request, launch_id) if launch_id.startswith("lti1p3-launch-") else None
    if lti_launch is None or not lti_launch.is_deep_link_launch:
        return _page(request, _("This page has expired: open it again from your course."), status=400)
    try:
        instructor = role_for(lti_launch.roles_claim or []) == User.Role.TEACHER
    except Refused:
        instructor = False
    if not instructor:
        return _page(request, _("Only a course's instructors add the tutor to a course."), status=403)
    form = DeepLinkForm(request.POST)
    if not form.is_valid():
        return _picker(request, launch_id=launch_id, form=form, status=400)
    resource = (
        DeepLinkResource()
        .set_type("ltiResourceLink")
        .set_url(request.build_absolute_uri(reverse("lti:launch")))
        .set_title(form.cleaned_data["title"])
        .set_custom_params({TOPIC_PARAMETER: form.cleaned_data["topic"]})
    )
    deep_link = lti_launch.get_message_launch().get_deep_link()
    return_url = str(deep_link._deep_link_settings["deep_link_return_url"])
    response = render(
        request,
        "lti/deep_link_response.html",
        {
            "title": _("A tutor for your course"),
            "return_url": return_url,
            "jwt": deep_link.get_response_jwt([resource]),
        },
    )
    parts = urlsplit(return_url)
    response._csp_update = {"form-action": [f"{parts.scheme}://{parts.netloc}"]}  # type: ignore[attr-defined]
    return response
