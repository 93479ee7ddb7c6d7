"""Example requests and answers of the identity verification operations in the OpenAPI document,
as the sandbox provider gives them. ``tests/test_openapi_docs.py`` checks them against their
operations' schemas."""

DOSSIER_ID = "dsr_431c9291ac1d3b8f917540fd"

START_REQUEST = {"email": "ann.lee@example.com"}

STARTED = {
    "captureUrl": "https://capture.idv-sandbox.invalid/session/uvu1TWjl1KYopKvGX9vwlsGZbF-JEhLM",
    "dossierId": DOSSIER_ID,
    "sdkToken": "sandbox-sdk-uvu1TWjl1KYopKvGX9vwlsGZbF-JEhLM",
}

ACCEPTED_PROCESS = {
    "dossierId": DOSSIER_ID,
    "status": "ACCEPTED",
    "startedAt": "2026-11-23T14:35:01.460Z",
    "completedAt": "2026-11-23T14:41:37.498Z",
}

VERIFIED = {
    "verificationLevel": 3,
    "email": "ann.lee@example.com",
    "latestProcess": ACCEPTED_PROCESS,
    "linkedIdentity": {
        "identityId": "0b4f4564-8e48-4af1-a151-1078b1f7fc2a",
        "linkedAt": "2026-11-23T14:41:37.498Z",
    },
}

LINK_REQUEST = {"email": "ann.lee@example.com"}

# A second platform account of the same person, linked without a process of its own.
LINKED = {
    "verificationLevel": 3,
    "email": "ann.lee@example.com",
    "latestProcess": None,
    "linkedIdentity": {
        "identityId": "0b4f4564-8e48-4af1-a151-1078b1f7fc2a",
        "linkedAt": "2026-11-24T09:12:05.036Z",
    },
}
