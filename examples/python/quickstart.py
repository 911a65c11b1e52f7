"""docs/quickstart.md in one script: a test purchase at apple-sim, submitted signed, long-polled,
its `granted` webhook received and verified, refunded at apple-sim, its `revoked` webhook seen.

Start the pipeline first (docs/quickstart.md), then: python3 examples/python/quickstart.py
(`--receiver`: only the webhook receiver, printing each verified event, for the curl steps.)
Settings (environment; the defaults are workers/run's and the quickstart's):
  IAP_URL (http://127.0.0.1:8080), IAP_KEY_ID (backend-1), IAP_SECRET, APPLE_SIM_URL
  (http://127.0.0.1:9090), WEBHOOK_PORT (8090; the pipeline's IAP_WEBHOOK_URL is
  http://127.0.0.1:<port>/hook), IAP_WEBHOOK_SECRET, BUNDLE_ID (com.example.game), PRODUCT_ID
  (com.example.game.gold100), USER_ID (player-42). Exits 0 when every step held, 1 otherwise.
"""

import http.server
import json
import os
import pathlib
import queue
import sys
import threading
import time
import urllib.request

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from iap_pipeline import PipelineClient, WebhookVerifier  # noqa: E402

env = os.environ.get
IAP_URL = env("IAP_URL", "http://127.0.0.1:8080")
SIM = env("APPLE_SIM_URL", "http://127.0.0.1:9090")
PORT = int(env("WEBHOOK_PORT", "8090"))
BUNDLE = env("BUNDLE_ID", "com.example.game")
PRODUCT = env("PRODUCT_ID", "com.example.game.gold100")
USER = env("USER_ID", "player-42")
events = queue.Queue()
verifier = WebhookVerifier([env("IAP_WEBHOOK_SECRET", "")])


class Receiver(http.server.BaseHTTPRequestHandler):
    """Your backend's webhook: check the signature over the raw body first, then store the event
    once by X-IAP-Event-Id (deliveries are at least once), then answer 2xx."""

    seen = set()

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if not verifier.is_valid(self.headers.get("X-IAP-Signature"), raw):
            self.send_response(401)
            self.end_headers()
            return
        event_id = self.headers.get("X-IAP-Event-Id")
        if event_id not in Receiver.seen:
            Receiver.seen.add(event_id)
            events.put(json.loads(raw))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


def apple_sim(path, body):
    request = urllib.request.Request(SIM + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=15) as response:
        return json.loads(response.read() or b"{}")


def event(kind, transaction_id, within=60):
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            found = events.get(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            break
        if found.get("type") == kind and found.get("transaction_id") == transaction_id:
            return found
    raise SystemExit(f"FAILED: no {kind} event for {transaction_id} within {within} s")


def receive_only():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"receiving on http://127.0.0.1:{PORT}/hook; Ctrl-C stops")
    while True:
        found = events.get()
        print(f"verified {found['type']}: {json.dumps(found, ensure_ascii=False)}", flush=True)


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    client = PipelineClient(IAP_URL, key_id=env("IAP_KEY_ID", "backend-1"), secret=env("IAP_SECRET"))

    # 1. A test purchase: apple-sim signs a StoreKit 2 transaction as the App Store would.
    transaction_id = str(2_000_000_000_000_000 + int(time.time() * 1000) % 1_000_000_000_000)
    purchase = apple_sim("/control/transactions", {
        "transactionId": transaction_id, "originalTransactionId": transaction_id, "bundleId": BUNDLE,
        "productId": PRODUCT, "purchaseDate": int(time.time() * 1000), "quantity": 1, "type": "Consumable",
        "environment": "Production"})
    print(f"1. purchased {PRODUCT} at apple-sim: transaction {transaction_id}")

    # 2. Submitted signed; the answer is at once, a ticket.
    submission = client.submit(USER, signed_transaction=purchase["signedTransaction"])
    print(f"2. submitted: ticket {submission['ticket']} ({submission['status']})")

    # 3. Long-polled until it settles.
    ticket = client.settled(submission["ticket"])
    print(f"3. ticket {ticket['status']}: {[t['outcome'] for t in ticket.get('transactions', [])]}")
    if ticket["status"] != "granted":
        raise SystemExit(f"FAILED: the ticket ended {ticket}")

    # 4. The webhook: a granted event, signature checked.
    granted = event("granted", transaction_id)
    print(f"4. webhook granted: event {granted['id']}, unit {granted['unit']}, quantity {granted['quantity']}")

    # 5. Apple refunds it: apple-sim signs a REFUND notification and sends it to the intake.
    apple_sim("/control/notification-url", {"url": IAP_URL + "/v1/notifications/apple"})
    sent = apple_sim("/control/notifications", {"type": "REFUND", "transaction_id": transaction_id})
    print(f"5. refunded at apple-sim: notification {sent.get('uuid')}")

    # 6. The webhook: a revoked event for the same purchase.
    revoked = event("revoked", transaction_id)
    print(f"6. webhook revoked: event {revoked['id']}, revocation {revoked.get('revocation_type')}")
    print("OK: purchased, submitted, granted once, webhook verified, refunded, revoked")
    server.shutdown()


if __name__ == "__main__":
    try:
        receive_only() if "--receiver" in sys.argv[1:] else main()
    except KeyboardInterrupt:
        pass
