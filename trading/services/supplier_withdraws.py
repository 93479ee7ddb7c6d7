"""Items bought into our account at a supplier that holds them (DMarket's own inventory, offer
type ``dmarket``) withdrawn to our bot's Steam inventory, each exactly once.

The request (``SupplierWithdraw``, with our ``request_id``) is written in the transaction that
learnt from the supplier's inventory that the item may be withdrawn, so nothing is lost if the
worker dies; the follow sweep then sends the due ones, each claimed by a compare-and-set update
committed before the supplier is asked. DMarket does not promise that a repeated ``requestId``
is ignored, so a request is never simply sent again: an answer lost on the way (or an attempt
that died) leaves the request ``unknown`` until the inventory tells where the item is. Gone on
its way to our bot: it was withdrawn. Still held for us a while later: nothing happened, and it
is asked for again under the same ``request_id``."""

from datetime import timedelta

from core import clock
from trading.marketplace.suppliers.accounts import supplier_call
from trading.marketplace.suppliers.base import (
    SupplierHolding,
    SupplierOutcomeUnknownError,
    SupplierRefusedError,
    SupplierUnavailableError,
    WithdrawRequest,
)
from trading.marketplace.suppliers.clients import supplier_clients
from trading.models import SupplierOrder, SupplierWithdraw

# An attempt's hold on its request: longer than a call takes (the read timeout).
CLAIM = timedelta(minutes=2)
# The supplier unreachable (nothing was sent): asked again after this long.
UNREACHED_RETRY = timedelta(minutes=1)
# The item still held for us this long after an answer was lost or a refusal: asked again.
HELD_AFTER_LOST = timedelta(minutes=5)
HELD_AFTER_REFUSED = timedelta(minutes=10)
# A transfer the supplier accepted whose item never left our account at the supplier.
HELD_AFTER_SENT = timedelta(minutes=30)
BATCH = 50


def supplier_withdraw_expect(*, order: SupplierOrder, class_ref: str) -> None:
    """The supplier's inventory shows the item held for us and withdrawable (caller's
    transaction, the order locked): its request is written (due now), or, written before and
    the item still there long after it was answered, lost or refused, due again under the
    same ``request_id``."""
    now = clock.now()
    row = SupplierWithdraw.objects.filter(order=order).first()
    if row is None:
        SupplierWithdraw.objects.create(
            order=order,
            request_id=f"w-{order.reference}",
            asset_ref=order.listing.get("asset_ref", ""),
            class_ref=class_ref,
            game=order.listing["game"],
            next_attempt_at=now,
            created_at=now,
            updated_at=now,
        )
        return
    waited = {
        SupplierWithdraw.State.UNKNOWN: HELD_AFTER_LOST,
        SupplierWithdraw.State.REFUSED: HELD_AFTER_REFUSED,
        SupplierWithdraw.State.SENT: HELD_AFTER_SENT,
    }.get(SupplierWithdraw.State(row.state))
    if waited is not None and now - row.updated_at >= waited:
        SupplierWithdraw.objects.filter(pk=row.pk, state=row.state).update(
            state=SupplierWithdraw.State.DUE,
            class_ref=class_ref or row.class_ref,
            reason=f"still held for us after {row.state}",
            next_attempt_at=now,
            updated_at=now,
        )


def supplier_withdraw_left(*, order: SupplierOrder) -> None:
    """The item left our account at the supplier (on its way to our bot, or there): whatever
    became of the last answer, the withdrawal happened."""
    SupplierWithdraw.objects.filter(
        order=order,
        state__in=[SupplierWithdraw.State.UNKNOWN, SupplierWithdraw.State.REFUSED],
    ).update(
        state=SupplierWithdraw.State.SENT,
        reason="the item left our account at the supplier",
        updated_at=clock.now(),
    )


def supplier_withdraws_send() -> int:
    """Send the due requests (network calls, no transaction open); an attempt that died while
    claimed leaves its request ``unknown``, never sent again blind. Returns how many the
    supplier took."""
    now = clock.now()
    SupplierWithdraw.objects.filter(
        state=SupplierWithdraw.State.SENDING, next_attempt_at__lte=now
    ).update(
        state=SupplierWithdraw.State.UNKNOWN,
        reason="the attempt ended without an answer",
        next_attempt_at=None,
        updated_at=now,
    )
    due = list(
        SupplierWithdraw.objects.select_related("order")
        .filter(state=SupplierWithdraw.State.DUE, next_attempt_at__lte=now)
        .order_by("next_attempt_at")[:BATCH]
    )
    clients = supplier_clients()
    taken = 0
    for row in due:
        client = clients.get(row.order.supplier_id)
        if not isinstance(client, SupplierHolding) or not _claimed(row):
            continue
        taken += _send(row, client, row.order.supplier_id)
    return taken


def _claimed(row: SupplierWithdraw) -> bool:
    now = clock.now()
    return bool(
        SupplierWithdraw.objects.filter(
            pk=row.pk, state=SupplierWithdraw.State.DUE, next_attempt_at=row.next_attempt_at
        ).update(
            state=SupplierWithdraw.State.SENDING,
            attempts=row.attempts + 1,
            next_attempt_at=now + CLAIM,
            updated_at=now,
        )
    )


def _send(row: SupplierWithdraw, client: SupplierHolding, name: str) -> int:
    request = WithdrawRequest(
        request_id=row.request_id,
        asset_ref=row.asset_ref,
        class_ref=row.class_ref,
        game=row.game,
    )
    fields: dict[str, object]
    try:
        transfer_id = supplier_call(name, "withdraw", lambda: client.withdraw(request))
    except SupplierOutcomeUnknownError as exc:
        fields = {"state": SupplierWithdraw.State.UNKNOWN, "reason": str(exc)[:200]}
    except SupplierUnavailableError as exc:
        fields = {
            "state": SupplierWithdraw.State.DUE,
            "reason": f"not sent: {exc}"[:200],
            "next_attempt_at": clock.now() + UNREACHED_RETRY,
        }
    except SupplierRefusedError as exc:
        fields = {"state": SupplierWithdraw.State.REFUSED, "reason": str(exc)[:200]}
    else:
        fields = {"state": SupplierWithdraw.State.SENT, "transfer_id": transfer_id, "reason": ""}
    fields.setdefault("next_attempt_at", None)
    SupplierWithdraw.objects.filter(pk=row.pk, state=SupplierWithdraw.State.SENDING).update(
        updated_at=clock.now(), **fields
    )
    return int(fields["state"] == SupplierWithdraw.State.SENT)
