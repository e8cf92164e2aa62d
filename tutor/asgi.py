"""The ASGI application, served by uvicorn (scripts/serve.sh: `make serve`, `make run`).

Django answers HTTP (its handler with each request's thread kept for reuse:
tutor.request_threads), except under /mcp/: the MCP server of the student memory (memory.mcp,
docs/mcp.md). The ASGI lifespan (which Django does not handle) warms the process up before
uvicorn accepts connections (tutor.startup), sets its garbage collector for a long life
(tutor.collector), keeps the MCP session manager running for the process's life, and installs
the drain (tutor.server.Drain): once the process is told to stop, each new request is answered
503 at once while the ones in progress end.
"""

import os
from typing import Any

import django
from asgiref.sync import sync_to_async
from django.conf import settings

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tutor.settings.base")
django.setup(set_prefix=False)  # as django.core.asgi.get_asgi_application does

from tutor.request_threads import ASGIHandler  # noqa: E402

django_application: Any = ASGIHandler()

if settings.SERVE_STATIC:
    # /static/: the web app's scripts (/app/), the API docs' and the admin's assets, read from
    # the apps' static folders. A deployment with a CDN or a proxy serving collectstatic's
    # output turns it off.
    from tutor.static import StaticFilesHandler

    django_application = StaticFilesHandler(django_application)

# Imported once the apps are loaded (django.setup above): they read the models.
from conversations.turn import drive  # noqa: E402
from memory.mcp import MCPHttpApp  # noqa: E402
from tutor import collector  # noqa: E402
from tutor.server import drain  # noqa: E402

mcp_application = MCPHttpApp()


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "http":
        if drain.started:  # the process is stopping: a 503 at once, never a hang (tutor.server.Drain)
            await drain.refuse(send)
        elif mcp_application.handles(scope["path"]):
            await drain.track(mcp_application(scope, receive, send))
        else:
            await drain.track(django_application(scope, receive, send))
        return
    if scope["type"] != "lifespan":
        await django_application(scope, receive, send)
        return
    async with mcp_application.running():
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                from tutor.startup import warm_up

                await sync_to_async(warm_up, thread_sensitive=False)()
                collector.settle()
                drain.install(busy=drive.turns_running, on_deadline=drive.turns_interrupt)
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                break
    await send({"type": "lifespan.shutdown.complete"})
