"""The hostile packets every feed socket gets: each Engine.IO packet type (open, close, ping,
pong, message, upgrade, noop) and each Socket.IO packet type (CONNECT, DISCONNECT, EVENT, ACK,
CONNECT_ERROR, BINARY_EVENT, BINARY_ACK), empty, malformed, huge, nested 100,000 deep (and as
deep as fits in a message), with binary attachments, and what is not a packet at all."""

from dataclasses import dataclass

from core.api.jsonbody import MAX_DEPTH
from tests.feed.raw import Frame, NotUtf8

DEEP = "[" * 100_000 + "]" * 100_000
DEEP_OBJECT = '{"a":' * 100_000 + "1" + "}" * 100_000
# As deep as fits in a message of the documented limit (16 KiB, docs/feed.md): refused for its
# depth, not its size.
DEEPEST_FITTING = "[" * 8_000 + "]" * 8_000
OVER_DEPTH = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
HUGE = "a" * 1_000_001  # over the limit, and over python-engineio's own default of 1,000,000
BIG_INTEGER = "9" * 5_000
SUBSCRIBE = '"subscribe",{"market":{"game":"730"}}'
PLACEHOLDER = '{"_placeholder":true,"num":0}'


@dataclass(frozen=True)
class Attack:
    name: str
    frames: tuple[Frame, ...]
    # Over long-polling: sent on a websocket that upgrades the polling session (Engine.IO's
    # probe and UPGRADE packets). Over a websocket: sent as any other frames.
    upgrade: bool = False


def _attack(name: str, *frames: Frame, upgrade: bool = False) -> Attack:
    return Attack(name, frames, upgrade)


ENGINE_IO = [
    _attack("open", "0"),
    _attack("open with a handshake", '0{"sid":"x","upgrades":[]}'),
    _attack("open nested 100,000 deep", "0" + DEEP),
    _attack("close", "1"),
    _attack("close with nested data", "1" + DEEPEST_FITTING),
    _attack("ping", "2"),
    _attack("ping probe", "2probe"),
    _attack("ping nested as deep as fits", "2" + DEEPEST_FITTING),
    _attack("ping huge", "2" + HUGE),
    _attack("pong", "3"),
    _attack("pong nested as deep as fits", "3" + DEEPEST_FITTING),
    _attack("message empty", "4"),
    _attack("message nested 100,000 deep", "4" + DEEP),
    _attack("message of objects nested 100,000 deep", "4" + DEEP_OBJECT),
    _attack("message nested as deep as fits", "4" + DEEPEST_FITTING),
    _attack("message huge", "4" + HUGE),
    _attack("message huge string", '4"' + "a" * 16_000 + '"'),
    _attack("upgrade", "5"),
    _attack("upgrade nested as deep as fits", "5" + DEEPEST_FITTING),
    _attack("noop", "6"),
    _attack("noop nested as deep as fits", "6" + DEEPEST_FITTING),
    _attack("unknown packet type", "7"),
    _attack("not a packet type", "x"),
    _attack("empty frame", ""),
    _attack("NUL", "\x00"),
    _attack("negative packet type", "-1"),
    _attack("many packets in one", "\x1e".join(["6"] * 5_000)),
    _attack("binary", b"\x00\x01"),
    _attack("binary empty", b""),
    _attack("binary nested 100,000 deep", DEEP.encode()),
    _attack("binary huge", b"\xff" * 1_000_001),
    _attack("text that is not UTF-8", NotUtf8(b"42[\xff\xfe]")),
    _attack("probe nested 100,000 deep", "2" + DEEP, upgrade=True),
    _attack("probe nested as deep as fits", "2" + DEEPEST_FITTING, upgrade=True),
    _attack("binary probe", b"2probe", upgrade=True),
    _attack("upgrade without a probe", "5", upgrade=True),
    _attack("upgrade, then nested 100,000 deep", "2probe", "5", "42" + DEEP, upgrade=True),
    _attack("upgrade nested", "2probe", "5" + DEEPEST_FITTING, upgrade=True),
]

SOCKET_IO = [
    # CONNECT
    _attack("CONNECT", "40"),
    _attack("CONNECT with an empty auth", "40{}"),
    _attack("CONNECT twice", "40", "40"),
    _attack("CONNECT auth nested as deep as fits", '40{"apiKey":' + DEEPEST_FITTING + "}"),
    _attack("CONNECT nested 100,000 deep", "40" + DEEP),
    _attack("CONNECT auth an array", "40[]"),
    _attack("CONNECT auth a string", '40"tsk_x"'),
    _attack("CONNECT auth a huge integer", "40" + "9" * 200),
    _attack("CONNECT auth malformed", "40{"),
    _attack("CONNECT key huge", '40{"apiKey":"' + "k" * 16_000 + '"}'),
    _attack("CONNECT key with NUL", '40{"apiKey":"tsk_\\u0000"}'),
    _attack("CONNECT key a lone surrogate", '40{"apiKey":"\\ud800"}'),
    _attack("CONNECT key an array", '40{"apiKey":["tsk_x"]}'),
    _attack("CONNECT another namespace", "40/other,{}"),
    _attack("CONNECT a huge namespace", "40/" + "n" * 16_000 + ",{}"),
    _attack("CONNECT namespace with a query", "40/?apiKey=x,{}"),
    # DISCONNECT
    _attack("DISCONNECT", "41"),
    _attack("DISCONNECT nested 100,000 deep", "41" + DEEP),
    _attack("DISCONNECT another namespace", "41/other,"),
    _attack("DISCONNECT with data", '41{"reason":"x"}'),
    _attack("EVENT after DISCONNECT", "41", f"42[{SUBSCRIBE}]"),
    # EVENT
    _attack("EVENT empty", "42"),
    _attack("EVENT empty array", "42[]"),
    _attack("EVENT an object", "42{}"),
    _attack("EVENT a string", '42"subscribe"'),
    _attack("EVENT named by a number", "42[1]"),
    _attack("EVENT named null", "42[null]"),
    _attack("EVENT named by an array", "42[[1]]"),
    _attack("EVENT without data", '421["subscribe"]'),
    _attack("EVENT data over the depth limit", f'421["subscribe",{OVER_DEPTH}]'),
    _attack("EVENT nested 100,000 deep", "42" + DEEP),
    _attack("EVENT of objects nested 100,000 deep", "42" + DEEP_OBJECT),
    _attack("EVENT nested as deep as fits", "42" + DEEPEST_FITTING),
    _attack("EVENT huge", f'42[{SUBSCRIBE},"{HUGE}"]'),
    _attack("EVENT a huge integer", f'42["subscribe",{{"market":{{"game":{BIG_INTEGER}}}}}]'),
    _attack("EVENT a huge ack id", "42" + "9" * 120 + f"[{SUBSCRIBE}]"),
    _attack("EVENT a game that is an array", '421["subscribe",{"market":{"game":["730"]}}]'),
    _attack("EVENT a huge name", '42["' + "e" * 16_000 + '"]'),
    _attack("EVENT a lone surrogate", '421["subscribe","\\ud800"]'),
    _attack("EVENT connect", '42["connect",{"REMOTE_ADDR":"10.0.0.1"},{"apiKey":"tsk_x"}]'),
    _attack("EVENT disconnect", '42["disconnect"]'),
    _attack("EVENT connect_error", '42["connect_error",{}]'),
    _attack("EVENT message", '42["message","x"]'),
    _attack("EVENT to another namespace", f"42/other,[{SUBSCRIBE}]"),
    # ACK
    _attack("ACK empty", "43"),
    _attack("ACK of an unknown id", "430[]"),
    _attack("ACK a huge id", "43" + "9" * 99 + "[]"),
    _attack("ACK nested 100,000 deep", "431" + DEEP),
    _attack("ACK malformed", "431["),
    _attack("ACK an object", "431{}"),
    # CONNECT_ERROR (only servers send it)
    _attack("CONNECT_ERROR", "44"),
    _attack("CONNECT_ERROR with data", '44{"message":"x"}'),
    _attack("CONNECT_ERROR nested 100,000 deep", "44" + DEEP),
    # BINARY_EVENT
    _attack("BINARY_EVENT", f'451-["subscribe",{PLACEHOLDER}]', b"x"),
    _attack("BINARY_EVENT without its attachment", f'451-["subscribe",{PLACEHOLDER}]'),
    _attack("BINARY_EVENT 10-digit attachment count", '459999999999-["subscribe"]'),
    _attack("BINARY_EVENT nested 100,000 deep", "451-" + DEEP),
    _attack("BINARY_EVENT text as attachment", f'451-["subscribe",{PLACEHOLDER}]', "42[]"),
    _attack("BINARY_EVENT placeholder too far", '451-["s",{"_placeholder":true,"num":7}]', b"x"),
    _attack("BINARY_EVENT placeholder not a number", '451-["s",{"_placeholder":true,"num":"x"}]'),
    _attack(
        "BINARY_EVENT attachment flood",
        f'45999-["subscribe",{PLACEHOLDER}]',
        *[b"\x00" * 15_000] * 50,
    ),
    # BINARY_ACK
    _attack("BINARY_ACK", f"461-0[{PLACEHOLDER}]", b"x"),
    _attack("BINARY_ACK nested 100,000 deep", "461-0" + DEEP),
    # Not a Socket.IO packet type
    _attack("Socket.IO packet type 7", "47"),
    _attack("Socket.IO packet type 9", "49[]"),
    _attack("Socket.IO packet type x", "4x"),
    _attack("Socket.IO packet type -1", "4-1"),
]

BATTERY = ENGINE_IO + SOCKET_IO
