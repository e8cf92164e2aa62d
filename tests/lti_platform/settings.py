"""Settings of the test LMS (tests/lti_platform), a Django project of its own run as its own
process by tests/lti/conftest.py's `lti_platform` fixture, configured by its environment. It
keeps no database: its courses, members and links are JSON files in LTI_PLATFORM_STATE_DIR."""

import os

SECRET_KEY = "test-lms-not-secret"
DEBUG = False
ALLOWED_HOSTS = ["*"]
ROOT_URLCONF = "tests.lti_platform.urls"
INSTALLED_APPS: list[str] = []
MIDDLEWARE: list[str] = []
DATABASES: dict[str, object] = {}
USE_TZ = True
LOGGING_CONFIG = None

LTI_PLATFORM_URL = os.environ["LTI_PLATFORM_URL"]  # this process's base URL, without a final /
LTI_PLATFORM_ISSUER = os.environ["LTI_PLATFORM_ISSUER"]
LTI_PLATFORM_CLIENT_ID = os.environ["LTI_PLATFORM_CLIENT_ID"]
LTI_PLATFORM_DEPLOYMENT_ID = os.environ["LTI_PLATFORM_DEPLOYMENT_ID"]
LTI_PLATFORM_PRIVATE_KEY = os.environ["LTI_PLATFORM_PRIVATE_KEY"]
LTI_PLATFORM_PUBLIC_KEY = os.environ["LTI_PLATFORM_PUBLIC_KEY"]
LTI_PLATFORM_STATE_DIR = os.environ["LTI_PLATFORM_STATE_DIR"]
LTI_TOOL_LOGIN_URL = os.environ["LTI_TOOL_LOGIN_URL"]
LTI_TOOL_LAUNCH_URL = os.environ["LTI_TOOL_LAUNCH_URL"]
LTI_TOOL_DEEP_LINK_URL = os.environ["LTI_TOOL_DEEP_LINK_URL"]
LTI_TOOL_JWKS_URL = os.environ["LTI_TOOL_JWKS_URL"]
