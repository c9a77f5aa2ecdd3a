"""Object-store servers for the tests, on 127.0.0.1.

Starts, in one process:

* an S3-compatible server (moto in server mode) with the buckets named by ``--bucket``
  (empty: tests put their objects; moto accepts any credentials);
* an HTTP server answering ``Range`` requests for the files under ``--http-root``, with two
  misbehaving paths for fault tests: ``/no-range/<path>`` answers every request with the
  whole file (status 200, ``Range`` ignored) and ``/cut/<path>`` announces the whole length
  but closes the connection halfway through the body.

* with ``--auth-bucket NAME``, a second moto S3 server (its own process) that checks
  signatures: it holds bucket NAME and one IAM user allowed ``s3:*``, whose access key and
  secret it reports; any other credentials are refused as by AWS.

When all listen, prints one JSON line ``{"s3": "http://127.0.0.1:…", "http": "http://…"}``
(plus ``"auth_s3"``, ``"auth_key"``, ``"auth_secret"`` with ``--auth-bucket``) and serves
until its standard input is closed (the test process that started it exited), then stops. By hand::

    python3 -m venv target/test-venv
    target/test-venv/bin/pip install -r tools/test-servers/requirements.txt
    target/test-venv/bin/python tools/test-servers/serve.py --http-root tests/data
"""

import argparse
import json
import logging
import os
import sys
import threading
from functools import partial
from http.server import ThreadingHTTPServer

from moto.server import ThreadedMotoServer
from RangeHTTPServer import RangeRequestHandler


class Handler(RangeRequestHandler):
    """Range-aware static files, plus the two fault paths."""

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass

    def _fault_file(self, prefix):
        rel = self.path[len(prefix):].split("?", 1)[0].lstrip("/")
        path = os.path.realpath(os.path.join(self.directory, rel))
        root = os.path.realpath(self.directory)
        if not path.startswith(root + os.sep) or not os.path.isfile(path):
            self.send_error(404)
            return None
        with open(path, "rb") as f:
            return f.read()

    def _serve_fault(self, head_only):
        for prefix, cut in (("/no-range/", False), ("/cut/", True)):
            if self.path.startswith(prefix):
                data = self._fault_file(prefix)
                if data is None:
                    return True
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if not head_only:
                    self.wfile.write(data[: len(data) // 2] if cut else data)
                    self.wfile.flush()
                if cut:
                    self.close_connection = True
                return True
        return False

    def do_GET(self):
        if not self._serve_fault(head_only=False):
            super().do_GET()

    def do_HEAD(self):
        if not self._serve_fault(head_only=True):
            super().do_HEAD()


def serve_authenticated_s3(bucket, conn):
    """Run in a fresh interpreter, started with ``INITIAL_NO_AUTH_ACTION_COUNT=4`` in its
    environment (moto reads it when imported, and counts requests process-wide): the first
    four requests (making the user, its key, its policy and the bucket) go unchecked; every
    later one must be signed with the user's key."""
    import boto3
    from moto.server import ThreadedMotoServer as Moto

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = Moto(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    anonymous = dict(endpoint_url=endpoint, aws_access_key_id="setup", aws_secret_access_key="setup", region_name="us-east-1")
    iam = boto3.client("iam", **anonymous)
    iam.create_user(UserName="reader")
    key = iam.create_access_key(UserName="reader")["AccessKey"]
    policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}
    iam.put_user_policy(UserName="reader", PolicyName="s3", PolicyDocument=json.dumps(policy))
    boto3.client("s3", **anonymous).create_bucket(Bucket=bucket)
    conn.send({"auth_s3": endpoint, "auth_key": key["AccessKeyId"], "auth_secret": key["SecretAccessKey"]})
    conn.recv()  # until the parent says stop (or dies: then recv raises)
    server.stop()


class Server(ThreadingHTTPServer):
    """Threads per request; a client hanging up (as the fault tests do) is no error."""

    daemon_threads = True

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http-root", required=True, help="directory the HTTP server serves")
    parser.add_argument("--bucket", action="append", default=[], help="an S3 bucket to create (repeatable)")
    parser.add_argument("--auth-bucket", help="also start an S3 server that checks credentials, with this bucket")
    args = parser.parse_args()

    urls = {}
    auth = None
    if args.auth_bucket:
        import multiprocessing

        spawn = multiprocessing.get_context("spawn")
        ours, theirs = spawn.Pipe()
        auth = spawn.Process(target=serve_authenticated_s3, args=(args.auth_bucket, theirs), daemon=True)
        # The child's moto reads this at import; ours has already read its own setting.
        os.environ["INITIAL_NO_AUTH_ACTION_COUNT"] = "4"
        auth.start()
        del os.environ["INITIAL_NO_AUTH_ACTION_COUNT"]
        urls.update(ours.recv())

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    s3 = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    s3.start()
    s3_host, s3_port = s3.get_host_and_port()
    if args.bucket:
        import boto3

        client = boto3.client(
            "s3",
            endpoint_url=f"http://{s3_host}:{s3_port}",
            aws_access_key_id="test",
            aws_secret_access_key="test",
            region_name="us-east-1",
        )
        for bucket in args.bucket:
            client.create_bucket(Bucket=bucket)

    handler = partial(Handler, directory=os.path.abspath(args.http_root))
    http = Server(("127.0.0.1", 0), handler)
    threading.Thread(target=http.serve_forever, daemon=True).start()

    urls.update(s3=f"http://{s3_host}:{s3_port}", http=f"http://127.0.0.1:{http.server_port}")
    print(json.dumps(urls), flush=True)
    # Serve until the parent closes our standard input (or exits).
    sys.stdin.read()
    http.shutdown()
    s3.stop()
    if auth is not None:
        ours.send("stop")
        auth.join(timeout=10)


if __name__ == "__main__":
    main()
