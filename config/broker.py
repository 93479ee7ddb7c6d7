"""The quick start's broker: kombu's file-system transport, except that each message is written
under a temporary name and renamed into the queue folder. Kombu writes in place, and a worker
that picks the file up mid-write reads an empty message and stops with a JSONDecodeError."""

import os
import tempfile
import uuid
from time import monotonic
from typing import Any

from kombu.transport import TRANSPORT_ALIASES, filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

SCHEME = "atomicfs"


class Channel(filesystem.Channel):
    def _put(self, queue: str, payload: dict[str, Any], **kwargs: Any) -> None:  # type: ignore[override]
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        # Same folder, so the rename is atomic; readers skip names not ending in ".<queue>.msg".
        fd, temporary = tempfile.mkstemp(dir=self.data_folder_out, suffix=".part")
        with os.fdopen(fd, "wb") as file:
            file.write(str_to_bytes(dumps(payload)))
        os.replace(temporary, os.path.join(self.data_folder_out, name))


class Transport(filesystem.Transport):
    Channel = Channel


TRANSPORT_ALIASES[SCHEME] = "config.broker:Transport"
