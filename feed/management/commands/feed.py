import uvicorn
from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from core.metrics.store import role_start
from feed.front import front_app
from feed.front_server import FrontProtocol
from feed.packets import MAX_MESSAGE_BYTES
from feed.server import FeedServer


class Command(BaseCommand):
    help = (
        "Serve the real-time feed: Socket.IO (Engine.IO 4) at /socket.io/, reading the feed bus "
        "(docs/feed.md). Run as many as needed behind the reverse proxy."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8001)
        parser.add_argument(
            "--api-upstream",
            default="",
            help=(
                "The quick start's front (bin/start): serve the API's own port, forwarding every "
                "request but /socket.io/ to this web server (unix:PATH or http://HOST:PORT). "
                "Production puts its reverse proxy there instead."
            ),
        )

    def handle(self, *args: object, **options: object) -> None:
        role_start("feed")
        server = FeedServer()
        upstream = str(options["api_upstream"] or "")
        uvicorn.run(
            front_app(server, api_upstream=upstream) if upstream else server.asgi_app(),
            host=str(options["host"]),
            port=int(str(options["port"])),
            # The front faces clients with no proxy before it: a request's head bounded in size
            # and time (feed/front_server.py). Behind production's proxy, uvicorn's default.
            http=FrontProtocol if upstream else "auto",
            lifespan="on",
            # The client address comes from the peer and NUM_PROXIES, as in the API.
            proxy_headers=False,
            access_log=False,
            # In front of gunicorn, the answers carry gunicorn's own Server and Date.
            server_header=not upstream,
            date_header=not upstream,
            # A websocket frame over the feed's limit closes the socket before it is kept.
            ws_max_size=MAX_MESSAGE_BYTES,
            # uvicorn's own lines (its start, errors) through settings.LOGGING like the feed's:
            # LOG_FORMAT, each with its requestId; uvicorn would set up its own text handlers.
            log_config=None,
            log_level=settings.LOG_LEVEL.lower(),
        )
