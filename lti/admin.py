"""The LTI rows in the Django admin, scoped like the API (accounts.admin_tenancy): django-lti's
own registration admin is replaced, since it shows every school's platforms to anyone."""

from __future__ import annotations

from django.contrib import admin
from lti_tool.models import LtiRegistration

admin.site.unregister(LtiRegistration)
