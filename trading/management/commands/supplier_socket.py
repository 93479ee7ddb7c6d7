import signal
import threading
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from trading.services.suppliers import waxpeer_socket_serve


class Command(BaseCommand):
    help = (
        "Keep Waxpeer's listing socket connected and apply each listing change to the market "
        "(polling goes on beside it). Run one beside the workers; stops on SIGTERM or SIGINT."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        stop = threading.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: stop.set())
        try:
            waxpeer_socket_serve(stop=stop)
        except LookupError as exc:
            raise CommandError(str(exc)) from exc
