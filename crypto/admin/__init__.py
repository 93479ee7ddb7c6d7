"""The staff console of crypto: the money pages (``money``: deposits, cashouts, allocations,
token accounts, review thresholds, flagged senders) and the real chains' bookkeeping (``evm``,
``solana``)."""

from crypto.admin import board, evm, money, solana  # noqa: F401 (each registers its pages)
