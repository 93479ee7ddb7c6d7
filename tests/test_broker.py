"""The quick start's file-system broker: a message appears in the queue folder only once it is
complete, so a worker never reads half a message."""

from kombu import Connection

from config.broker import SCHEME


def test_messages_are_renamed_into_the_queue_folder_whole(tmp_path, monkeypatch):
    import config.broker

    seen_while_writing: list[list[str]] = []
    real_fdopen = config.broker.os.fdopen

    class Spy:
        """The file being written; notes which messages a worker could pick up meanwhile."""

        def __init__(self, *args):
            self.file = real_fdopen(*args)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.file.close()

        def write(self, data):
            seen_while_writing.append([p.name for p in tmp_path.glob("*.msg")])
            return self.file.write(data)

    monkeypatch.setattr(config.broker.os, "fdopen", Spy)

    folders = {
        "data_folder_in": str(tmp_path),
        "data_folder_out": str(tmp_path),
        "processed_folder": str(tmp_path / "processed"),
        "control_folder": str(tmp_path / "control"),
    }
    with Connection(f"{SCHEME}://", transport_options=folders) as connection:
        queue = connection.SimpleQueue("jobs")
        queue.put({"task": "one", "body": "x" * 100_000})

        assert seen_while_writing == [[]]
        names = [p.name for p in tmp_path.iterdir() if p.is_file()]
        assert len(names) == 1
        assert names[0].endswith(".jobs.msg")
        assert queue.get(timeout=1).payload == {"task": "one", "body": "x" * 100_000}
        assert not any(p.is_file() for p in tmp_path.iterdir())
        queue.close()
