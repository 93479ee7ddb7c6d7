"""A release that moves a cached class bumps ``CACHE_FORMAT``: what the previous release cached
is then never read. Seen when trading was reorganised by flow: the price book's reference had
been pickled as ``trading.selectors.prices.BookRef``, and every read of it failed."""

import pickle

import pytest
from django.core.cache import cache

from config.settings import CACHE_FORMAT

# A pickle (protocol 0: GLOBAL module, name; STOP) of the class as the previous release named it.
GONE = b"ctrading.selectors.prices\nBookRef\n."


def test_a_pickle_of_a_moved_class_cannot_be_read():
    with pytest.raises(ModuleNotFoundError):
        pickle.loads(GONE)


def test_what_the_previous_format_cached_is_never_read():
    redis = cache._cache.get_client(write=True)  # type: ignore[attr-defined]
    redis.set(cache.make_key("prices-ref:730", version=CACHE_FORMAT - 1), GONE)

    assert cache.get("prices-ref:730") is None
    with pytest.raises(ModuleNotFoundError):
        cache.get("prices-ref:730", version=CACHE_FORMAT - 1)
