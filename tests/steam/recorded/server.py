"""The recorded Steam on a local HTTP port: one server for the Web API, the login service and
the community (the adapter's three hosts all point at it). Before each answer Steam's own
time-driven changes are made (``RecordedSteam.settle``); tests can make the next requests
answer 429 (rate limiting, ``Retry-After``) or 502 with EResult 20 (ServiceUnavailable in
``x-eresult``: node-steam-tradeoffer-manager lib/webapi.js reads it on any status)."""

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.steam.recorded.auth import r_auth
from tests.steam.recorded.community import r_inventory, r_mobileconf, r_offer_action, r_send
from tests.steam.recorded.econ import r_bans, r_econ
from tests.steam.recorded.world import RecordedSteam

ROUTES = (
    ("/IAuthenticationService/", r_auth),
    ("/IEconService/", r_econ),
    ("/ISteamUser/GetPlayerBans", r_bans),
    ("/inventory/", r_inventory),
    ("/tradeoffer/new/send", r_send),
    ("/tradeoffer/", r_offer_action),
    ("/mobileconf/", r_mobileconf),
)


@dataclass(frozen=True)
class Request:
    cookies: dict[str, str]
    headers: dict[str, str]  # names in lower case


def handle(steam: RecordedSteam, method: str, path: str, params: dict[str, str], request: Request):
    """-> (status, body, headers); a ``str`` body is sent as it is, anything else as JSON."""
    with steam.lock:
        steam.calls.append((method, path, params))
        steam.settle()
        if steam.rate_limit_next > 0:
            steam.rate_limit_next -= 1
            return 429, None, {"Retry-After": "0"}
        down = next((part for part, n in steam.unavailable_paths.items() if n and part in path), "")
        if steam.unavailable_next > 0 or down:
            if down:
                steam.unavailable_paths[down] -= 1
            else:
                steam.unavailable_next -= 1
            return 502, None, {"x-eresult": "20"}
        together = steam.offer_polls_together if "GetTradeOffers" in path else None
    if together is not None:
        together.wait(30)  # raises (a 500 for the caller) if the others never come
        with steam.lock:
            steam.polls_met += 1
    for prefix, route in ROUTES:
        if path.startswith(prefix):
            return route(steam, method, path, params, request)
    return 404, None, {}


class _Handler(BaseHTTPRequestHandler):
    steam: RecordedSteam

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _serve(self, method: str) -> None:
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length).decode() if length else ""
        form = {k: v[-1] for k, v in parse_qs(raw).items()}
        cookies = {}
        for part in (self.headers.get("Cookie") or "").split(";"):
            name, _, value = part.strip().partition("=")
            if name:
                cookies[name] = value
        headers = {name.lower(): value for name, value in self.headers.items()}
        status, body, extra = handle(
            self.steam, method, url.path, {**query, **form}, Request(cookies, headers)
        )
        data = (body if isinstance(body, str) else json.dumps(body)).encode()
        try:
            self.send_response(status)
            if "Content-Type" not in extra:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in extra.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the caller went away (a killed worker)

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")


@contextmanager
def recorded_steam() -> Iterator[RecordedSteam]:
    steam = RecordedSteam()
    handler = type("Handler", (_Handler,), {"steam": steam})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    steam.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield steam
    finally:
        if steam.send_release is not None:
            steam.send_release.set()
        server.shutdown()
        server.server_close()
