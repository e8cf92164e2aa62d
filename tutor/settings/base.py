"""Settings shared by every environment, read from the environment: the entry point
(DJANGO_SETTINGS_MODULE=tutor.settings.base), made of one module per concern.

Every variable is listed in `.env.example` with a safe development value, and parsed by
`tutor.settings.env`: a value that does not parse stops start-up with ImproperlyConfigured naming
the variable; secrets may come from `<NAME>_FILE`. This module is the development default: it
runs on an embedded SQLite database and a filesystem Celery broker, so `make run` needs no
external service. `tutor.settings.production` adds security settings and refuses to start
without a secret key.
"""

from __future__ import annotations

from .api import *  # noqa: F403
from .audit import *  # noqa: F403
from .celery import *  # noqa: F403
from .conversations import *  # noqa: F403
from .django import *  # noqa: F403
from .email import *  # noqa: F403
from .env import *  # noqa: F403
from .files import *  # noqa: F403
from .learning import *  # noqa: F403
from .llm import *  # noqa: F403
from .logs import *  # noqa: F403
from .lti import *  # noqa: F403
from .memory import *  # noqa: F403
from .observability import *  # noqa: F403
from .safety import *  # noqa: F403
from .security import *  # noqa: F403
from .services import *  # noqa: F403
from .sso import *  # noqa: F403
from .throttles import *  # noqa: F403
from .webhooks import *  # noqa: F403
