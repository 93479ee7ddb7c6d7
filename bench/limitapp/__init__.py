"""A minimal Django + DRF app: the limits every endpoint of the service is measured against."""

# Accounts, one per api key ``limit-key-<n>``; bench/limits.py creates their rows.
ACCOUNTS = 64
