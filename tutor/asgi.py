"""The ASGI application, served by uvicorn (scripts/serve.sh: `make serve`, `make run`)."""

import os

from django.conf import settings
from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tutor.settings.base")
application = get_asgi_application()

if settings.DEBUG:
    # The admin's static files in development; production serves collectstatic's output.
    from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler

    application = ASGIStaticFilesHandler(application)
