"""The staff console's suites look at the deposit suite's world (two merchants with live callback
receivers, a bot, the owner's inventory, eager Celery) and the trades made in it."""

from tests.admin.desk import trades  # noqa: F401
from tests.deposits.conftest import (  # noqa: F401
    _eager_celery,
    ak,
    alice,
    bob,
    bob_hooks,
    bot,
    cheap,
    desk,
    door,
    hooks,
    knife,
    owner,
    world,
)
