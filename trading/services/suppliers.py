"""The supplier marketplaces' side of the world, moved by beat: listings polled into the local
snapshot (each change told to the market), bought trades followed to their end (delivered,
accepted, or cancelled by the supplier and refunded once), balances read, staff's switch.
Network calls happen outside transactions; every change re-checks state under its locks."""

import threading
from collections.abc import Callable, Iterable
from datetime import timedelta
from itertools import groupby

from django.conf import settings
from django.db import close_old_connections, transaction

from core import clock
from core.market_version import market_version_bump
from trading.market.services import market_resync
from trading.marketplace.base import PurchaseOutcomeUnknownError
from trading.marketplace.suppliers.accounts import supplier_call, supplier_row, supplier_usable
from trading.marketplace.suppliers.base import (
    ListingChange,
    OrderRef,
    SupplierClient,
    SupplierOffer,
    SupplierOutcomeUnknownError,
    SupplierUnavailableError,
    listing_id_of,
)
from trading.marketplace.suppliers.clients import supplier_clients
from trading.marketplace.suppliers.marketplace import (
    listings_changed,
    market_price,
    order_reconcile,
    supplier_listing_of,
)
from trading.marketplace.suppliers.waxpeer_socket import WaxpeerSocket
from trading.models import (
    CatalogItem,
    Supplier,
    SupplierListing,
    SupplierOrder,
)
from trading.services.supplier_orders import WAITING_RECHECK, supplier_order_apply
from trading.services.supplier_withdraws import supplier_withdraws_send

# Requests per supplier per poll run (each covers ``names_per_call`` catalog items).
POLL_REQUESTS = 5
FOLLOW_BATCH = 100
UNAVAILABLE_RECHECK = timedelta(seconds=60)
SWITCH_OFF_BATCH = 5000
LISTING_FIELDS = (
    "supplier_ref",
    "asset_ref",
    "price",
    "supplier_price",
    "phase",
    "paint_index",
    "wear",
    "paint_seed",
    "offer_type",
    "seen_at",
)

CatalogRow = tuple[str, int, str, int]  # id, game, market hash name, popularity


def supplier_listings_poll(*, name: str, requests: int = POLL_REQUESTS) -> int:
    """Poll the next slice of the catalog at one supplier (by name, walking the catalog in id
    order and starting over at its end); returns how many listings changed."""
    client = supplier_clients().get(name)
    account = supplier_row(name)
    if client is None or not supplier_usable(account):
        return 0
    size = client.names_per_call
    items: list[CatalogRow] = list(
        CatalogItem.objects.filter(game__in=client.games, pk__gt=account.poll_cursor)
        .order_by("pk")
        .values_list("pk", "game", "market_hash_name", "popularity")[: requests * size]
    )
    cursor = account.poll_cursor
    changed = 0
    for batch in _batches(items, size):
        try:
            offers = supplier_call(name, "poll", _offers_call(client, batch))
        except (SupplierUnavailableError, SupplierOutcomeUnknownError):
            break  # the rest of the slice is polled next time
        changed += supplier_listings_replace(name=name, items=batch, offers=offers)
        cursor = batch[-1][0]
    else:
        if len(items) < requests * size:
            cursor = ""  # the end of the catalog: start over
    Supplier.objects.filter(pk=name).update(poll_cursor=cursor, last_poll_at=clock.now())
    return changed


def _offers_call(
    client: SupplierClient, batch: list[CatalogRow]
) -> Callable[[], dict[str, list[SupplierOffer]]]:
    return lambda: client.offers(game=batch[0][1], names=[row[2] for row in batch])


def _batches(items: list[CatalogRow], size: int) -> Iterable[list[CatalogRow]]:
    """Runs of at most ``size`` items of one game (a request asks about one game)."""
    for _, same_game in groupby(items, key=lambda row: row[1]):
        run = list(same_game)
        for start in range(0, len(run), size):
            yield run[start : start + size]


def supplier_listings_replace(
    *, name: str, items: list[CatalogRow], offers: dict[str, list[SupplierOffer]]
) -> int:
    """The supplier's listings of these items become what it just answered: new ones appear,
    changed ones are repriced, missing ones go; each change is told to the market."""
    now = clock.now()
    fresh: dict[str, SupplierListing] = {}
    for item_id, game, market_hash_name, popularity in items:
        for offer in offers.get(market_hash_name, []):
            listing_id = listing_id_of(name, offer.ref)
            fresh[listing_id] = SupplierListing(
                id=listing_id,
                supplier_id=name,
                supplier_ref=offer.ref,
                asset_ref=offer.asset_ref,
                item_id=item_id,
                game=game,
                market_hash_name=market_hash_name,
                popularity=popularity,
                price=market_price(offer.price),
                supplier_price=offer.price,
                phase=offer.phase,
                paint_index=offer.paint_index,
                wear=offer.wear,
                paint_seed=offer.paint_seed,
                offer_type=offer.offer_type,
                seen_at=now,
            )
    with transaction.atomic():
        existing = {
            row.id: row
            for row in SupplierListing.objects.select_for_update().filter(
                supplier_id=name, item_id__in=[row[0] for row in items]
            )
        }
        # A listing we are buying or bought stays out: the supplier lists it until it is sent.
        ours = set(
            SupplierOrder.objects.filter(
                listing_id__in=list(fresh), state__in=SupplierOrder.LIVE
            ).values_list("listing_id", flat=True)
        )
        appeared = [row for i, row in fresh.items() if i not in existing and i not in ours]
        repriced = [
            row
            for i, row in fresh.items()
            if i in existing and existing[i].supplier_price != row.supplier_price
        ]
        gone = [row for i, row in existing.items() if i not in fresh or i in ours]
        SupplierListing.objects.bulk_create(appeared, ignore_conflicts=True)
        SupplierListing.objects.bulk_update(repriced, LISTING_FIELDS)
        SupplierListing.objects.filter(id__in=[row.id for row in gone]).delete()
        listings_changed(
            appeared=[supplier_listing_of(row) for row in appeared],
            repriced=[supplier_listing_of(row) for row in repriced],
            gone=[supplier_listing_of(row) for row in gone],
        )
    return len(appeared) + len(repriced) + len(gone)


def supplier_listing_change(*, name: str, change: ListingChange) -> int:
    """A supplier's socket told of one listing: the supplier's listings of that item become
    what they were with that change, through the same replacement a poll makes (so the market
    hears of it the same way, and a listing we are buying stays out). Returns how many
    listings changed (0 for an item not in the catalog, or a supplier switched off)."""
    account = supplier_row(name)
    if not account.enabled:
        return 0
    item = CatalogItem.objects.filter(
        game=change.game, market_hash_name=change.offer.market_hash_name
    ).first()
    if item is None:
        return 0
    with transaction.atomic():
        listed = {
            row.supplier_ref: _offer_of(row)
            for row in SupplierListing.objects.select_for_update().filter(
                supplier_id=name, item_id=item.pk
            )
        }
        if change.gone:
            listed.pop(change.offer.ref, None)
        else:
            listed[change.offer.ref] = change.offer
        return supplier_listings_replace(
            name=name,
            items=[(item.pk, item.game, item.market_hash_name, item.popularity)],
            offers={item.market_hash_name: list(listed.values())},
        )


def _offer_of(row: SupplierListing) -> SupplierOffer:
    return SupplierOffer(
        ref=row.supplier_ref,
        market_hash_name=row.market_hash_name,
        price=row.supplier_price,
        asset_ref=row.asset_ref,
        phase=row.phase,
        paint_index=row.paint_index,
        wear=row.wear,
        paint_seed=row.paint_seed,
        offer_type=row.offer_type,
    )


def supplier_socket_state(*, name: str, connected: bool) -> None:
    """The supplier's socket is subscribed (shown to staff), or down (polling alone then)."""
    supplier_row(name)
    Supplier.objects.filter(pk=name).update(socket_connected_at=clock.now() if connected else None)


def waxpeer_socket_serve(
    *, stop: threading.Event, reconnect_max: float = 30.0, silence_max: float = 300.0
) -> None:
    """Keep Waxpeer's listing socket connected until ``stop``, each change applied as
    ``supplier_listing_change`` (``manage.py supplier_socket``). Raises LookupError when Waxpeer
    is not configured here."""
    client = supplier_clients().get("waxpeer")
    if client is None:
        raise LookupError("Waxpeer is not configured (MARKETPLACE, WAXPEER_API_KEY)")

    def changed(change: ListingChange) -> None:
        close_old_connections()  # a long-lived process: drop connections the server closed
        supplier_listing_change(name=client.name, change=change)

    def state(connected: bool) -> None:
        close_old_connections()
        supplier_socket_state(name=client.name, connected=connected)

    socket = WaxpeerSocket(
        url=settings.WAXPEER_SOCKET_URL,
        path=settings.WAXPEER_SOCKET_PATH,
        api_key=settings.WAXPEER_API_KEY,
        games=client.games,
        on_change=changed,
        on_state=state,
        reconnect_max=reconnect_max,
        silence_max=silence_max,
    )
    try:
        socket.run(stop)
    finally:
        state(False)


def supplier_orders_follow() -> int:
    """Ask the suppliers about the orders due (lost answers to reconcile, bought trades to
    follow) and move each withdrawal item accordingly; returns how many items moved."""
    now = clock.now()
    due = list(
        SupplierOrder.objects.filter(
            state__in=SupplierOrder.FOLLOWED, next_check_at__lte=now
        ).order_by("next_check_at")[:FOLLOW_BATCH]
    )
    clients = supplier_clients()
    for order in due:
        client = clients.get(order.supplier_id)
        if order.state in (SupplierOrder.State.SENDING, SupplierOrder.State.UNKNOWN) and client:
            try:
                order_reconcile(order, client)
            except PurchaseOutcomeUnknownError:
                _recheck([order], UNAVAILABLE_RECHECK)
    bought = [o for o in due if o.state in (SupplierOrder.State.BOUGHT, SupplierOrder.State.SENT)]
    moved = 0
    for (name, game), group in groupby(
        sorted(bought, key=lambda o: (o.supplier_id, o.listing["game"])),
        key=lambda o: (o.supplier_id, o.listing["game"]),
    ):
        orders = list(group)
        moved += _follow(clients.get(name), orders, game)
    supplier_withdraws_send()
    return moved


def _follow(client: SupplierClient | None, orders: list[SupplierOrder], game: int) -> int:
    if client is None:
        _recheck(orders, UNAVAILABLE_RECHECK)
        return 0
    refs = [
        OrderRef(o.reference, o.listing.get("asset_ref", ""), o.supplier_order_id) for o in orders
    ]
    try:
        trades = supplier_call(client.name, "trade_status", lambda: client.trades(refs, game=game))
    except (SupplierUnavailableError, SupplierOutcomeUnknownError):
        _recheck(orders, UNAVAILABLE_RECHECK)
        return 0
    moved = 0
    for order in orders:
        trade = trades.get(order.reference)
        if trade is None:
            _recheck([order], WAITING_RECHECK)
        else:
            moved += supplier_order_apply(order=order, trade=trade)
    return moved


def _recheck(orders: list[SupplierOrder], after: timedelta) -> None:
    SupplierOrder.objects.filter(pk__in=[o.pk for o in orders]).update(
        next_check_at=clock.now() + after
    )


def supplier_balances_check() -> int:
    """Read each supplier account's balance (shown to staff; a buy it cannot pay is not sent)."""
    checked = 0
    for name, client in supplier_clients().items():
        try:
            balance = supplier_call(name, "balance", client.balance)
        except (SupplierUnavailableError, SupplierOutcomeUnknownError):
            continue
        supplier_row(name)
        Supplier.objects.filter(pk=name).update(balance=balance, balance_checked_at=clock.now())
        checked += 1
    return checked


def supplier_switch(*, name: str, enabled: bool) -> int:
    """Staff turn a supplier on or off. Off: no new buys, its listings leave the market (the
    market's subscribers refetch); orders already placed are followed to their end. On: the
    next polls bring its listings back. Returns how many listings left."""
    supplier_row(name)
    Supplier.objects.filter(pk=name).update(enabled=enabled, poll_cursor="")
    removed = 0
    if enabled:
        return removed
    games: set[int] = set()
    while True:
        with transaction.atomic():
            batch = list(
                SupplierListing.objects.filter(supplier_id=name).values_list("id", "game")[
                    :SWITCH_OFF_BATCH
                ]
            )
            if not batch:
                break
            SupplierListing.objects.filter(id__in=[row[0] for row in batch]).delete()
        removed += len(batch)
        games.update(row[1] for row in batch)
    if games:
        with transaction.atomic():
            market_resync(games=sorted(games))
            transaction.on_commit(market_version_bump)
    return removed
