"""The test platform's LTI Advantage service endpoints (tests/lti_platform/services.py), included
at the harness's root by its urls.py. A line item's paths are served with and without a trailing
slash: the tool appends `/scores` and `/results` to a line item's id, as AGS says."""

from django.urls import path
from django.views.decorators.csrf import csrf_exempt

from tests.lti_platform import services

ITEM = "contexts/<str:context_id>/lineitems/<int:number>"

urlpatterns = [
    path("token/", csrf_exempt(services.token)),
    path("contexts/<str:context_id>/memberships/", services.memberships),
    path("contexts/<str:context_id>/lineitems/", csrf_exempt(services.lineitems)),
    *[
        path(f"{ITEM}{suffix}{slash}", csrf_exempt(view))
        for suffix, view in (("", services.lineitem), ("/scores", services.scores), ("/results", services.results))
        for slash in ("", "/")
    ],
    path("debug/members/<str:context_id>/", csrf_exempt(services.debug_members)),
    path("debug/scores/", services.debug_scores),
    path("debug/lineitems/", services.debug_lineitems),
    path("debug/fail-scores/", csrf_exempt(services.debug_fail_scores)),
]
