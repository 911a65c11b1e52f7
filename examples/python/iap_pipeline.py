"""A game backend's client of iap-pipeline's intake: Python 3.8+, the standard library only.

Copy this file into your backend. It signs every request with your key (IAP_CLIENT_KEYS_FILE),
afresh on each attempt; reads the intake's answers as dicts; raises PipelineError with the
intake's status and machine-readable code; and sends a request again when the intake stored
nothing (a 503 or 429 that passes: Redis unavailable, the queue full, a rate) or when the same
request was signed twice within one second (replayed_request): a submission sent again is the
same ticket, never a second grant. WebhookVerifier checks a webhook delivery's X-IAP-Signature.

The shapes are those of docs/http-api.md; docs/signing-vectors.json holds the signing cases
this module is tested on (test_vectors.py), and quickstart.py runs it end to end.
"""

import hashlib
import hmac
import json
import time
import urllib.error
import urllib.parse
import urllib.request

__all__ = ["PipelineClient", "PipelineError", "WebhookVerifier", "sign", "TERMINAL"]

#: A ticket in one of these states will not change again (``held`` waits for an operator).
TERMINAL = frozenset({"granted", "duplicate", "rejected", "dead", "applied"})

_SEGMENT_SAFE = "!$&'()*+,;=:@"


def sign(secret: str, timestamp: str, method: str, target: str, body: bytes) -> str:
    """Hex HMAC-SHA256, keyed by the secret's UTF-8 bytes, of ``timestamp \\n method \\n target \\n body``.

    ``target`` is the path and query exactly as sent (``/v1/receipts/<t>?wait=20``)."""
    message = f"{timestamp}\n{method}\n{target}\n".encode() + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


class PipelineError(Exception):
    """The intake refused a request: ``status``, ``code`` (``missing_field``, ``bad_signature``, ...)
    and ``message``; ``retry_after`` in seconds on a 503 or 429."""

    def __init__(self, status: int, code: str, message: str = "", retry_after=None):
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code, self.message, self.retry_after = status, code, message, retry_after

    @property
    def retryable(self) -> bool:
        """Nothing was stored and the cause passes; a ``*_not_configured`` 503 is the settings."""
        return self.status in (503, 429) and not self.code.endswith("_not_configured")


class WebhookVerifier:
    """Checks ``X-IAP-Signature: t=<unix s>,v1=<hex>[,v1=<hex>]`` over the raw body, before parsing it.

    Valid when ``t`` is within ``tolerance`` seconds of now and any ``v1`` is the HMAC-SHA256 of
    ``"<t>." + body`` with any of ``secrets`` (two while you rotate). A garbled or missing header is
    ``False``, never an exception; comparisons are constant time."""

    def __init__(self, secrets, tolerance: int = 300):
        self._keys = [s.encode() for s in ([secrets] if isinstance(secrets, str) else secrets)]
        self.tolerance = tolerance

    def is_valid(self, header, raw_body: bytes, now=None) -> bool:
        timestamp, signatures = None, []
        for part in (header or "").split(","):
            name, sep, value = part.partition("=")
            if not sep:
                continue
            if name == "t" and value.isascii() and value.isdigit() and len(value) <= 12:
                timestamp = int(value)
            elif name == "v1":
                signatures.append(value)
        now = int(time.time()) if now is None else int(now)
        if timestamp is None or not signatures or abs(now - timestamp) > self.tolerance:
            return False
        message = f"{timestamp}.".encode() + raw_body
        expected = [hmac.new(key, message, hashlib.sha256).hexdigest() for key in self._keys]
        return any(hmac.compare_digest(e.encode(), s.encode("utf-8", "replace")) for e in expected for s in signatures)


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


class PipelineClient:
    """``PipelineClient("https://iap.example.com", key_id="backend-1", secret="...")``.

    Without ``key_id`` and ``secret`` requests go unsigned (an intake run open on a private network)."""

    def __init__(self, base_url: str, key_id=None, secret=None, timeout: float = 15, max_attempts: int = 3,
                 longest_pause: float = 5):
        self.base_url = base_url.rstrip("/")
        self.key_id, self.secret = key_id, secret
        self.timeout, self.max_attempts, self.longest_pause = timeout, max(1, max_attempts), longest_pause
        self._opener = urllib.request.build_opener(_NoRedirects)

    # -- receipts --------------------------------------------------------------------------

    def submit(self, user_id: str, *, receipt_data=None, signed_transaction=None, transaction_id=None,
               signed_app_transaction=None, bundle_id=None, currency=None, product_id=None,
               only_transaction_id=None) -> dict:
        """``POST /v1/receipts`` with exactly one piece of evidence. Returns ``{"ticket", "status",
        "is_new"}``: ``is_new`` is False when the same evidence was sent before (same ticket)."""
        evidence = {"receipt_data": receipt_data, "signed_transaction": signed_transaction,
                    "transaction_id": transaction_id, "signed_app_transaction": signed_app_transaction}
        given = {k: v for k, v in evidence.items() if v is not None}
        if len(given) != 1:
            raise ValueError("give exactly one of " + ", ".join(evidence))
        if only_transaction_id is not None:
            if receipt_data is None:
                raise ValueError("only_transaction_id filters a receipt")
            given["transaction_id"] = only_transaction_id
        body = dict(given, user_id=user_id, bundle_id=bundle_id, currency=currency, product_id=product_id)
        return self._submission(*self._call("POST", "/v1/receipts", body))

    def ticket(self, ticket_id: str, wait=None) -> dict:
        """``GET /v1/receipts/{ticket}``; ``wait`` (0 to 30 s): answered once settled or when it ends."""
        query = "" if wait is None else f"?wait={max(0, min(30, int(wait)))}"
        return self._call("GET", f"/v1/receipts/{_segment(ticket_id)}{query}", wait=wait or 0)[1]

    def settled(self, ticket_id: str, within: float = 120) -> dict:
        """Long-polls until the ticket is terminal or held, or ``within`` seconds passed (then as it is)."""
        deadline = time.monotonic() + within
        while True:
            left = deadline - time.monotonic()
            ticket = self.ticket(ticket_id, wait=max(0, min(30, left)))
            if ticket.get("status") in TERMINAL or ticket.get("status") == "held" or left <= 0:
                return ticket

    # -- users -----------------------------------------------------------------------------

    def entitlements(self, user_id: str) -> list:
        return self._call("GET", f"{_user(user_id)}/entitlements")[1].get("entitlements", [])

    def user(self, user_id: str, limit=None, before=None) -> dict:
        query = urllib.parse.urlencode({k: v for k, v in {"limit": limit, "before": before}.items() if v is not None})
        return self._call("GET", _user(user_id) + (f"?{query}" if query else ""))[1]

    def set_app_account_token(self, user_id: str, token: str) -> dict:
        return self._call("PUT", f"{_user(user_id)}/app-account-token", {"app_account_token": str(token).lower()})[1]

    def sync(self, user_id: str, signed_app_transaction: str) -> dict:
        """``POST /v1/users/{id}/sync`` at login: what Apple has that the books do not is granted."""
        return self._submission(*self._call("POST", f"{_user(user_id)}/sync", {"signed_app_transaction": signed_app_transaction}))

    def set_consent(self, user_id: str, consented: bool) -> dict:
        return self._call("PUT", f"{_user(user_id)}/consent", {"consented": bool(consented)})[1]

    def set_consumption(self, user_id: str, transaction_id: str, delivery_status: str, percentage=None) -> dict:
        body = {"delivery_status": delivery_status, "consumption_percentage": percentage}
        return self._call("PUT", f"{_user(user_id)}/purchases/{_segment(transaction_id)}/consumption", body)[1]

    def spend(self, user_id: str, since: str) -> dict:
        return self._call("GET", f"{_user(user_id)}/spend?since={_segment(since)}")[1]

    def erase(self, user_id: str) -> dict:
        return self._call("DELETE", _user(user_id))[1]

    def offer_signature(self, kind: str, user_id: str, product_id: str, offer_id=None, transaction_id=None,
                        app_transaction_id=None, bundle_id=None) -> dict:
        body = {"kind": kind, "user_id": user_id, "product_id": product_id, "offer_id": offer_id,
                "transaction_id": transaction_id, "app_transaction_id": app_transaction_id, "bundle_id": bundle_id}
        return self._call("POST", "/v1/offers/signatures", body)[1]

    # -- the exchange ----------------------------------------------------------------------

    def _call(self, method: str, target: str, body=None, wait: float = 0):
        data = b"" if body is None else json.dumps(
            {k: v for k, v in body.items() if v is not None}, separators=(",", ":"), ensure_ascii=False).encode()
        for attempt in range(1, self.max_attempts + 1):
            status, answer, retry_after = self._send(method, target, data, self.timeout + wait)
            if 200 <= status < 300:
                return status, answer
            error = answer.get("error") if isinstance(answer, dict) else None
            error = error if isinstance(error, dict) else {}
            failure = PipelineError(status, error.get("code", f"http_{status}"), error.get("message", ""), retry_after)
            if attempt == self.max_attempts:
                raise failure
            if failure.code == "replayed_request":
                time.sleep(1.005 - time.time() % 1)  # signed again in the next second, it differs
            elif failure.retryable:
                time.sleep(min(retry_after or 1, self.longest_pause))
            else:
                raise failure

    def _send(self, method: str, target: str, data: bytes, timeout: float):
        request = urllib.request.Request(self.base_url + target, data=data or None, method=method)
        if data:
            request.add_header("Content-Type", "application/json")
        if self.key_id is not None and self.secret is not None:
            timestamp = str(int(time.time()))
            request.add_header("X-IAP-Key", self.key_id)
            request.add_header("X-IAP-Timestamp", timestamp)
            request.add_header("X-IAP-Signature", sign(self.secret, timestamp, method, target, data))
        try:
            with self._opener.open(request, timeout=timeout) as response:
                status, raw, headers = response.status, response.read(), response.headers
        except urllib.error.HTTPError as refusal:
            status, raw, headers = refusal.code, refusal.read(), refusal.headers
        try:
            answer = json.loads(raw) if raw else {}
        except ValueError:
            answer = {}
        retry_after = headers.get("Retry-After")
        return status, answer, int(retry_after) if retry_after and retry_after.isdigit() else None

    @staticmethod
    def _submission(status: int, answer: dict) -> dict:
        if "ticket" not in answer:
            raise PipelineError(status, "no_ticket", "the intake answered without a ticket")
        return {"ticket": answer["ticket"], "status": answer.get("status"), "is_new": status == 202}


def _segment(value: str) -> str:
    """One path segment: what RFC 3986 allows stays, the rest is percent-encoded."""
    return urllib.parse.quote(value, safe=_SEGMENT_SAFE)


def _user(user_id: str) -> str:
    return f"/v1/users/{_segment(user_id)}"
