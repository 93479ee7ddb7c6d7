"""Webhooks: the transactional outbox the domain writes to (``outbox``), its delivery with
leases and one row per attempt (``delivery``), Standard Webhooks signatures (``signing``), the
SSRF-guarded egress to callback URLs (``egress``), the callback URL test (``callbacks``) and
the Celery tasks that run deliveries and the sweep (``tasks``)."""
