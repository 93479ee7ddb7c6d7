import uvicorn
from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

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

    def handle(self, *args: object, **options: object) -> None:
        uvicorn.run(
            FeedServer().asgi_app(),
            host=str(options["host"]),
            port=int(str(options["port"])),
            lifespan="on",
            # The client address comes from the peer and NUM_PROXIES, as in the API.
            proxy_headers=False,
            access_log=False,
            # A websocket frame over the feed's limit closes the socket before it is kept.
            ws_max_size=MAX_MESSAGE_BYTES,
            log_level=settings.LOG_LEVEL.lower(),
        )
