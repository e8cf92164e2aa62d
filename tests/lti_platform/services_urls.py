"""The platform's LTI Advantage services (NRPS, AGS, OAuth2 token): none yet."""

urlpatterns: list[object] = []
