"""python3 -m unittest contrib/balance/test_augur_balance.py (no torch, no munge)."""

import hashlib
import http.server
import json
import os
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(__file__))
import augur_balance as ab  # noqa: E402


class Handler(http.server.BaseHTTPRequestHandler):
    seen = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.seen.append((self.command, self.path, self.headers["Authorization"], body))
        req = json.loads(body)
        out = json.dumps({"job_id": 7, "plan": {"shares": [3, 1], "version": 1}, "n": len(req["steps"])}).encode()
        self.send_response(200)
        self.end_headers()
        self.wfile.write(out)

    def do_GET(self):
        self.seen.append((self.command, self.path, self.headers["Authorization"], b""))
        self.send_response(403)
        self.end_headers()
        self.wfile.write(b'{"error":"job 7 is not yours"}')

    def log_message(self, *a):
        pass


class ClientTest(unittest.TestCase):
    def setUp(self):
        self.srv = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()
        url = "http://127.0.0.1:%d" % self.srv.server_address[1]
        self.c = ab.BalanceClient(url, 7, signer=lambda text: "CRED(" + text + ")")
        Handler.seen.clear()

    def tearDown(self):
        self.srv.shutdown()
        self.srv.server_close()

    def test_report_signs_method_path_and_body(self):
        ans = self.c.report([{"rank": 0, "seconds": 1.0}], world_size=2, global_batch=4)
        self.assertEqual(ans["plan"]["shares"], [3, 1])
        method, path, auth, body = Handler.seen[0]
        want = "MUNGE CRED(augur-balance/1 POST /v1/jobs/7/steps %s)" % hashlib.sha256(body).hexdigest()
        self.assertEqual((method, path, auth), ("POST", "/v1/jobs/7/steps", want))
        self.assertEqual(ab.shares_for(ans, 2, 4), [3, 1])

    def test_refusal_is_balance_error(self):
        with self.assertRaisesRegex(ab.BalanceError, "not yours"):
            self.c.plan()

    def test_shares_fallback(self):
        self.assertEqual(ab.shares_for(None, 3, 10), [4, 3, 3])
        self.assertEqual(ab.shares_for({"plan": {"shares": [1, 1]}}, 2, 4), [2, 2])


if __name__ == "__main__":
    unittest.main()
