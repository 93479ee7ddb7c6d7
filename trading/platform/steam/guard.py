"""Steam Guard mobile authenticator codes, from a bot's secrets:

- login codes: TOTP over HMAC-SHA1 with the shared secret, 30-second steps, five characters from
  Steam's own alphabet (DoctorMcKay/node-steam-totp ``generateAuthCode``; bukson/steampy
  ``guard.generate_one_time_code``);
- confirmation keys: base64 HMAC-SHA1 with the identity secret over the time (8 bytes, big
  endian) followed by the tag (``conf``/``list``, ``allow``, ``cancel``, ``details``)
  (node-steam-totp ``getConfirmationKey``; steampy ``guard.generate_confirmation_key``);
- the device id the confirmation endpoints ask for: ``android:`` and a UUID-shaped SHA-1 of the
  Steam id (node-steam-totp ``getDeviceID``).
"""

import base64
import hashlib
import hmac
import struct

CODE_ALPHABET = "23456789BCDFGHJKMNPQRTVWXY"
CODE_LENGTH = 5
STEP_SECONDS = 30


def login_code(shared_secret: str, at: int) -> str:
    digest = hmac.new(
        base64.b64decode(shared_secret), struct.pack(">Q", at // STEP_SECONDS), hashlib.sha1
    ).digest()
    offset = digest[19] & 0x0F
    value = struct.unpack(">I", digest[offset : offset + 4])[0] & 0x7FFFFFFF
    code = []
    for _ in range(CODE_LENGTH):
        value, index = divmod(value, len(CODE_ALPHABET))
        code.append(CODE_ALPHABET[index])
    return "".join(code)


def confirmation_key(identity_secret: str, at: int, tag: str) -> str:
    message = struct.pack(">Q", at) + tag.encode()
    digest = hmac.new(base64.b64decode(identity_secret), message, hashlib.sha1).digest()
    return base64.b64encode(digest).decode()


def device_id(steam_id: str) -> str:
    hexed = hashlib.sha1(steam_id.encode()).hexdigest()  # noqa: S324 (an id, not security)
    return f"android:{hexed[:8]}-{hexed[8:12]}-{hexed[12:16]}-{hexed[16:20]}-{hexed[20:32]}"
