"""The one round trip to the shared state a merchant or client request makes before anything else
(docs/decisions.md, "Per-request path"): the service switches (maintenance, the sandbox clock),
the auth epoch that says whether the callers this process keeps are still valid, the market
version cached market reads are kept under, and, when this process already knows who calls, the
request's count in its rate-limit window."""

from dataclasses import dataclass

from core.market_version import market_version_received, market_version_shared_key
from core.selectors import service_settings_received, service_settings_shared_key
from merchants.ratelimits import Window, auth_epoch_bump, shared_read
from merchants.selectors import CALLERS


@dataclass(frozen=True)
class Gate:
    maintenance: bool
    hits: int | None  # the request's count in the window given, None when not counted


def request_gate(*, window: Window | None) -> Gate:
    """Read the switches, the epoch and the market version, and count the request in ``window``
    (the window of the merchant the kept rows name) if those rows are still valid: the epoch is
    the one they were kept under. The switches and the version serve the rest of the request
    (``core.selectors``, ``core.market_version``)."""
    try:
        read = shared_read(
            settings_key=service_settings_shared_key(),
            market_version_key=market_version_shared_key(),
            expected_epoch=CALLERS.epoch,
            window=window,
        )
    except Exception:
        # A change committed meanwhile may have failed to move the epoch: keep nothing from
        # before the outage.
        CALLERS.clear()
        raise
    switches = service_settings_received(read.settings)
    market_version_received(read.market_version)
    if CALLERS.bump_owed:
        CALLERS.clear()  # this request reads its caller afresh; the next adopts the new epoch
        auth_epoch_bump()
        CALLERS.bump_owed = False
    else:
        CALLERS.epoch_seen(read.epoch)
    return Gate(maintenance=switches.maintenance, hits=read.hits)
