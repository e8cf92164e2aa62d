"""The test LMS's URLs: its keyset, course pages that launch the tool in a frame, the OIDC
authorisation endpoint, the deep-linking return, a debug view of its state, and the LTI
Advantage services of services_urls.py."""

from django.urls import include, path
from django.views.decorators.csrf import csrf_exempt

from tests.lti_platform import views

urlpatterns = [
    path("jwks/", views.jwks),
    path("course/<str:context_id>/<str:user_id>/", views.course_page),
    path("course/<str:context_id>/<str:user_id>/deep-link/", views.deep_link_page),
    path("authorize/", csrf_exempt(views.authorize)),
    path("deep-link-return/", csrf_exempt(views.deep_link_return)),
    path("debug/links/<str:context_id>/", views.debug_links),
    path("", include("tests.lti_platform.services_urls")),
]
