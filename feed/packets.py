"""What the feed reads from a socket, bounded before it is parsed (docs/feed.md, "Limits").

Nothing a client legitimately sends the feed is large or deep: a key, ``subscribe`` with
``{ market: { game } }`` (three levels), pings. So:

- a message (a websocket frame, or a long-polling POST body) is at most MAX_MESSAGE_BYTES:
  uvicorn closes a websocket whose frame is larger before keeping it (``ws_max_size``) and
  Engine.IO refuses a larger POST before reading it (``max_http_buffer_size``, which it also
  announces to clients as ``maxPayload``);
- its JSON is parsed by ``BoundedJson.loads`` (python-engineio and python-socketio take it as
  their ``json`` module), which refuses arrays and objects nested deeper than the API's
  MAX_DEPTH by a linear scan before the parser recurses, as the API does with request bodies;
- a packet must carry what its type may carry, by the rules of the reference parser
  (socket.io-parser's ``isPayloadValid``, socketio/socket.io
  packages/socket.io-parser/lib/index.ts), which python-socketio does not check: a CONNECT an
  object or nothing, a DISCONNECT nothing, an EVENT an array named by a number or by a string
  that is not a reserved event, an ACK an array. python-socketio hands an EVENT named
  ``connect`` or ``disconnect`` to the server's own connect and disconnect handlers, with the
  client's data as their arguments: a socket could have itself admitted again with an environ
  of its own, its address included (past a key's allow-list), or leave the merchant's socket
  count while staying open;
- binary attachments are refused (``FeedPacket``): nothing the feed serves takes one, and
  python-socketio would keep every attachment a packet announces (up to 10 digits of them)
  until the last arrived.

A refused message closes its socket only (``FeedServer``)."""

import json
from typing import Any

from engineio import json as engineio_json
from socketio import packet as sio_packet

from core.api.jsonbody import MAX_DEPTH, nesting_exceeds

MAX_MESSAGE_BYTES = 16 * 1024

_BINARY = (sio_packet.BINARY_EVENT, sio_packet.BINARY_ACK)
# socket.io-parser's RESERVED_EVENTS: names with a meaning of their own on either side.
RESERVED_EVENTS = frozenset(
    {"connect", "connect_error", "disconnect", "disconnecting", "newListener", "removeListener"}
)


class BoundedJson:
    """python-engineio's JSON (integers of at most 100 digits) behind the feed's bounds."""

    @staticmethod
    def loads(text: str | bytes, **options: Any) -> Any:
        raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
        if len(raw) > MAX_MESSAGE_BYTES:
            raise ValueError(f"The message is over {MAX_MESSAGE_BYTES} bytes.")
        if nesting_exceeds(raw, MAX_DEPTH):
            raise ValueError(f"Arrays and objects nest deeper than {MAX_DEPTH} levels.")
        return engineio_json.loads(text, **options)

    dumps = staticmethod(json.dumps)


def _payload_valid(packet_type: int, data: Any) -> bool:
    if packet_type == sio_packet.CONNECT:
        return data is None or isinstance(data, dict)
    if packet_type == sio_packet.DISCONNECT:
        return data is None
    if packet_type == sio_packet.EVENT:
        name = data[0] if isinstance(data, list) and data else None
        if isinstance(name, str):
            return name not in RESERVED_EVENTS
        return isinstance(name, int | float) and not isinstance(name, bool)
    if packet_type == sio_packet.ACK:
        return isinstance(data, list)
    return False  # CONNECT_ERROR (only servers send it) and unknown types


class FeedPacket(sio_packet.Packet):
    """A Socket.IO packet as a client may send it to the feed: no binary attachment, and a
    payload its type may carry."""

    def decode(self, encoded_packet: str | bytes) -> int:
        attachments = int(super().decode(encoded_packet) or 0)
        if attachments or self.packet_type in _BINARY:
            raise ValueError("The feed takes no binary attachments.")
        if not _payload_valid(self.packet_type, self.data):
            raise ValueError(f"Not a payload a packet of type {self.packet_type} may carry.")
        return attachments
