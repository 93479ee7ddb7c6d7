from django.apps import AppConfig


class FeedConfig(AppConfig):
    """The real-time feed: the Socket.IO process (``manage.py feed``) that pushes trades, crypto
    deposits and the market to merchants' sockets (docs/feed.md)."""

    name = "feed"
    verbose_name = "Real-time feed"
