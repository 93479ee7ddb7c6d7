"""The service's settings (DJANGO_SETTINGS_MODULE=config.settings), read from the environment by
one module per concern and composed here; each setting is defined in one of them only.

With DATABASE_URL unset the service runs in quick-start mode (config.settings.base): each
concern then keeps its files under VAR_DIR (the SQLite file, the cache, the broker, the feed's
spool, the generated secret key). A module reads only the modules above it in this list.
"""

from config.settings.api import *  # noqa: F403
from config.settings.base import *  # noqa: F403
from config.settings.cache_broker import *  # noqa: F403
from config.settings.chains import *  # noqa: F403
from config.settings.console import *  # noqa: F403
from config.settings.database import *  # noqa: F403
from config.settings.feed import *  # noqa: F403
from config.settings.ops import *  # noqa: F403
from config.settings.outside import *  # noqa: F403
from config.settings.security import *  # noqa: F403
