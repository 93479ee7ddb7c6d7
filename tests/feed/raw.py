"""Engine.IO 4 spoken by hand, over a websocket or long-polling, so that a test can send the feed
anything at all: python-socketio's client only sends what is valid.

A frame is a text packet (``str``), a binary packet (``bytes``), or text whose bytes are not
UTF-8 (``NotUtf8``). Over long-polling each frame is one POST (a binary one as ``b`` + base64, as
Engine.IO 4 encodes it there); a POST body may hold several packets separated by ``\\x1e``."""

import base64
import contextlib
import json
import time
from typing import Any, Protocol
from urllib.parse import urlsplit

import requests
import websocket

from tests.feed.harness import WAIT_SECONDS

RECORD_SEPARATOR = "\x1e"
ENGINE_CLOSE = "1"


class NotUtf8(bytes):
    """A text frame (or POST body) of these bytes, which are not UTF-8."""


Frame = str | bytes


class ClosedError(Exception):
    """The server closed the connection (or the Engine.IO session)."""


class Transport(Protocol):
    sid: str
    handshake: dict[str, Any]

    def send(self, frame: Frame) -> None:
        """Send, whatever the server answers (one that closed the connection is not an error);
        a long-polling POST the server does not answer raises requests.Timeout, one it fails
        (5xx) AssertionError."""

    def next_packet(self, timeout: float = WAIT_SECONDS) -> Frame:
        """The next packet the server sent. Raises ClosedError, or TimeoutError."""

    def close(self) -> None: ...


def _handshake(packet: str) -> dict[str, Any]:
    assert packet.startswith("0{"), packet[:200]
    return dict(json.loads(packet[1:]))


class WebSocketTransport:
    def __init__(self, base_url: str, *, sid: str = "") -> None:
        host = urlsplit(base_url).netloc
        url = f"ws://{host}/socket.io/?EIO=4&transport=websocket" + (f"&sid={sid}" if sid else "")
        self.ws = websocket.create_connection(url, timeout=WAIT_SECONDS)
        # An upgrade continues a polling session: no handshake of its own.
        self.handshake = {} if sid else _handshake(str(self.ws.recv()))
        self.sid = sid or str(self.handshake["sid"])

    def send(self, frame: Frame) -> None:
        opcode = websocket.ABNF.OPCODE_TEXT
        if isinstance(frame, bytes) and not isinstance(frame, NotUtf8):
            opcode = websocket.ABNF.OPCODE_BINARY
        with contextlib.suppress(websocket.WebSocketException, OSError):
            self.ws.send(frame, opcode)

    def next_packet(self, timeout: float = WAIT_SECONDS) -> Frame:
        self.ws.settimeout(timeout)
        try:
            packet = self.ws.recv()
        except websocket.WebSocketTimeoutException:
            raise TimeoutError from None
        except (websocket.WebSocketException, OSError) as exc:
            raise ClosedError(repr(exc)) from None
        if not self.ws.connected:
            raise ClosedError("closing handshake")
        return packet  # type: ignore[no-any-return]

    def close(self) -> None:
        with contextlib.suppress(websocket.WebSocketException, OSError):
            self.ws.close(timeout=1)


class PollingTransport:
    def __init__(self, base_url: str) -> None:
        self.url = f"{base_url}/socket.io/"
        self.http = requests.Session()
        self.received: list[str] = []
        self.sid = ""
        answer = self.http.get(self.url, params=self._query(), timeout=WAIT_SECONDS)
        self.handshake = _handshake(answer.text)
        self.sid = str(self.handshake["sid"])

    def _query(self) -> dict[str, str]:
        query = {"EIO": "4", "transport": "polling"}
        return query | ({"sid": self.sid} if self.sid else {})

    def send(self, frame: Frame) -> None:
        text = isinstance(frame, NotUtf8 | str)
        body = frame if text else "b" + base64.b64encode(frame).decode()
        try:
            answer = self.http.post(self.url, params=self._query(), data=body, timeout=WAIT_SECONDS)
        except requests.Timeout:
            raise  # the server held the request: not a refusal
        except requests.ConnectionError:
            return  # the server refused the body before reading it all, and closed
        if answer.status_code >= 500:
            raise AssertionError(f"the server failed: {answer.status_code} {answer.text[:200]}")

    def next_packet(self, timeout: float = WAIT_SECONDS) -> Frame:
        give_up = time.monotonic() + timeout
        while not self.received:
            left = give_up - time.monotonic()
            if left <= 0:
                raise TimeoutError
            try:
                answer = self.http.get(self.url, params=self._query(), timeout=left)
            except requests.Timeout:
                raise TimeoutError from None
            except requests.RequestException as exc:
                raise ClosedError(repr(exc)) from None
            if answer.status_code >= 500:
                raise AssertionError(f"the server failed: {answer.status_code} {answer.text[:200]}")
            if answer.status_code != 200:
                raise ClosedError(f"{answer.status_code} {answer.text[:200]}")
            self.received = answer.text.split(RECORD_SEPARATOR)
        packet = self.received.pop(0)
        return base64.b64decode(packet[1:]) if packet.startswith("b") else packet

    def close(self) -> None:
        self.send(ENGINE_CLOSE)
        self.http.close()


TRANSPORTS = {"websocket": WebSocketTransport, "polling": PollingTransport}


def socketio_connect(transport: Transport, auth: dict[str, str] | None) -> str:
    """Socket.IO CONNECT on the main namespace; the server's answer (``40{"sid":...}``)."""
    transport.send("40" + (json.dumps(auth) if auth else ""))
    return expect(transport, lambda packet: packet.startswith("40"))


def expect(transport: Transport, wanted: Any, timeout: float = WAIT_SECONDS) -> str:
    """The first text packet for which ``wanted(packet)`` holds (pings are answered)."""
    give_up = time.monotonic() + timeout
    while True:
        left = give_up - time.monotonic()
        if left <= 0:
            raise TimeoutError
        packet = transport.next_packet(left)
        if packet == "2":
            transport.send("3")
        elif isinstance(packet, str) and wanted(packet):
            return packet


def closed_by_server(transport: Transport, timeout: float = WAIT_SECONDS) -> bool:
    """Whether the server closes the session within ``timeout``: an Engine.IO CLOSE packet, or
    the connection (or session) gone. Other packets are skipped."""
    try:
        expect(transport, lambda packet: packet == ENGINE_CLOSE, timeout)
    except ClosedError:
        return True
    except TimeoutError:
        return False
    return True
