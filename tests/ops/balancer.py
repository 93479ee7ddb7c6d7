"""A round-robin TCP load balancer on a free loopback port, as a reverse proxy in front of
several nodes would be: each new client connection goes to the next backend, bytes are piped
both ways unchanged. The race suite opens one connection per request, so its bursts are spread
evenly over the nodes."""

import contextlib
import itertools
import socket
import threading
from collections import Counter


class Balancer:
    def __init__(self, backends: list[tuple[str, int]]) -> None:
        self.backends = backends
        self._next = itertools.cycle(range(len(backends)))
        self._lock = threading.Lock()
        self.connections: Counter[int] = Counter()  # per backend index
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(256)
        self.port: int = self.listener.getsockname()[1]
        self._stopped = threading.Event()
        threading.Thread(target=self._accept, daemon=True, name="balancer").start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self._lock:
                index = next(self._next)
                self.connections[index] += 1
            threading.Thread(target=self._serve, args=(client, index), daemon=True).start()

    def _serve(self, client: socket.socket, index: int) -> None:
        try:
            backend = socket.create_connection(self.backends[index], timeout=60)
        except OSError:
            client.close()
            return
        backend.settimeout(None)
        threading.Thread(target=_pipe, args=(backend, client), daemon=True).start()
        _pipe(client, backend)

    def stop(self) -> None:
        self._stopped.set()
        self.listener.close()


def _pipe(source: socket.socket, target: socket.socket) -> None:
    """Copy until either side closes; then close both (the other pipe ends with them)."""
    try:
        while chunk := source.recv(65536):
            target.sendall(chunk)
    except OSError:
        pass
    finally:
        for end in (source, target):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
            end.close()
