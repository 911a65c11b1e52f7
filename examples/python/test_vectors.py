"""The module against docs/signing-vectors.json (the cases the intake's and the Swift client's tests read).

Run from anywhere: python3 -m unittest examples/python/test_vectors.py"""

import json
import pathlib
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from iap_pipeline import PipelineClient, WebhookVerifier, _segment, sign  # noqa: E402

VECTORS = json.loads((pathlib.Path(__file__).resolve().parents[2] / "docs" / "signing-vectors.json").read_text("utf-8"))


class SigningVectors(unittest.TestCase):
    def test_each_signed_request_is_signed_so(self):
        cases = VECTORS["requests"]["signed"]
        self.assertGreaterEqual(len(cases), 5)
        for case in cases:
            with self.subTest(case["name"]):
                got = sign(case["secret"], case["timestamp"], case["method"], case["target"], case["body"].encode())
                self.assertEqual(got, case["signature"])

    def test_each_refused_request_has_another_signature(self):
        for case in VECTORS["requests"]["refused"]:
            with self.subTest(case["name"]):
                got = sign(case["secret"], case["timestamp"], case["method"], case["target"], case["body"].encode())
                self.assertNotEqual(got, case["signature"])

    def test_a_receiver_accepts_exactly_the_valid_deliveries(self):
        tolerance = VECTORS["webhooks"]["tolerance_s"]
        cases = VECTORS["webhooks"]["checked"]
        self.assertTrue(any(c["valid"] for c in cases) and not all(c["valid"] for c in cases))
        for case in cases:
            with self.subTest(case["name"]):
                verifier = WebhookVerifier(case["secrets"], tolerance=tolerance)
                self.assertEqual(verifier.is_valid(case["header"], case["body"].encode(), now=case["now"]), case["valid"])
        self.assertFalse(WebhookVerifier("a-secret-0123456789").is_valid(None, b"{}"))

    def test_the_pipelines_own_deliveries_verify(self):
        for case in VECTORS["webhooks"]["signed"]:
            with self.subTest(case["name"]):
                verifier = WebhookVerifier([case["secret"]])
                self.assertTrue(verifier.is_valid(case["header"], case["body"].encode(), now=case["timestamp"]))
                if case["previous_secret"]:
                    previous = WebhookVerifier([case["previous_secret"]])
                    self.assertTrue(previous.is_valid(case["header"], case["body"].encode(), now=case["timestamp"]))

    def test_a_user_id_is_one_segment_encoded_only_where_it_must_be(self):
        self.assertEqual(_segment("player 42"), "player%2042")
        self.assertEqual(_segment("a/b?c#d%"), "a%2Fb%3Fc%23d%25")
        self.assertEqual(_segment("Az09-._~:@!$&'()*+,;="), "Az09-._~:@!$&'()*+,;=")

    def test_submit_takes_exactly_one_piece_of_evidence(self):
        client = PipelineClient("http://127.0.0.1:9")
        with self.assertRaises(ValueError):
            client.submit("p", receipt_data="x", signed_transaction="y")
        with self.assertRaises(ValueError):
            client.submit("p")


if __name__ == "__main__":
    unittest.main()
