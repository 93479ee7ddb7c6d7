"""Sumsub's review of an applicant as the dossier's verdict.

``reviewStatus`` is ``init``, ``pending``, ``prechecked``, ``queued``, ``completed`` or
``onHold``, and ``reviewResult.reviewAnswer`` (``GREEN`` approved, ``RED`` rejected) counts only
once it is ``completed`` (https://docs.sumsub.com/reference/get-applicant-review-status). A RED
answer's ``reviewRejectType`` is ``FINAL`` (rejected for good) or ``RETRY`` (the applicant may
resubmit: a better photo, another document), https://docs.sumsub.com/docs/receive-and-interpret-results-via-api.

RETRY keeps the dossier PENDING: the person resubmits through the same WebSDK session, Sumsub
reviews again and notifies again, and that later answer decides. FINAL, and a RED answer that
gives no type, is REJECTED: the client may start a new check at once.
"""

from typing import Any

from merchants.verification.base import Verdict


def review_verdict(*, review_status: Any, review_result: Any) -> Verdict:
    if review_status != "completed" or not isinstance(review_result, dict):
        return Verdict.PENDING
    answer = review_result.get("reviewAnswer")
    if answer == "GREEN":
        return Verdict.ACCEPTED
    if answer == "RED":
        if review_result.get("reviewRejectType") == "RETRY":
            return Verdict.PENDING
        return Verdict.REJECTED
    return Verdict.PENDING
