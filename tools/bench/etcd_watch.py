#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""etcd's own watch latency, the baseline for the SRD's pushes
(tools/bench/registry.sh): one etcd member on loopback (Debian's
etcd-server, durable commits as the SRD's SQLite), W watchers on one key
prefix through its JSON gateway (/v3/watch, one HTTP stream each, a
thread each), then CHANGES puts 200 ms apart: for each, the time from
sending the put to every watcher having its event. Prints p50/p99/max in
the same form as bench_registry.

usage: etcd_watch.py [WATCHERS [CHANGES]]
"""
import base64
import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

WATCHERS = int(sys.argv[1]) if len(sys.argv) > 1 else 100
CHANGES = int(sys.argv[2]) if len(sys.argv) > 2 else 50


def b64(s):
    return base64.b64encode(s.encode()).decode()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Watcher(threading.Thread):
    """One watch stream; seen[rev] is when this watcher got revision rev."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port, self.seen, self.created = port, {}, threading.Event()
        self.cond = threading.Condition()

    def run(self):
        c = http.client.HTTPConnection("127.0.0.1", self.port)
        body = json.dumps({"create_request": {"key": b64("/bench/"),
                                              "range_end": b64("/bench0")}})
        c.request("POST", "/v3/watch", body, {"Content-Type": "application/json"})
        r = c.getresponse()
        dec, buf = json.JSONDecoder(), ""
        while True:
            chunk = r.read1(65536).decode()
            if not chunk:
                return
            buf += chunk
            while True:
                buf = buf.lstrip()
                try:
                    msg, end = dec.raw_decode(buf)
                except ValueError:
                    break
                buf = buf[end:]
                res = msg.get("result", {})
                if res.get("created"):
                    self.created.set()
                for ev in res.get("events", []):
                    rev = int(ev["kv"]["mod_revision"])
                    with self.cond:
                        self.seen[rev] = time.monotonic()
                        self.cond.notify_all()


def put(port, key, value):
    c = http.client.HTTPConnection("127.0.0.1", port)
    c.request("POST", "/v3/kv/put", json.dumps({"key": b64(key), "value": b64(value)}),
              {"Content-Type": "application/json"})
    r = json.loads(c.getresponse().read())
    c.close()
    return int(r["header"]["revision"])


def main():
    d = tempfile.mkdtemp(prefix="dmsc-etcdwatch.")
    cport, pport = free_port(), free_port()
    client, peer = "http://127.0.0.1:%d" % cport, "http://127.0.0.1:%d" % pport
    log = open(os.path.join(d, "etcd.log"), "w")
    etcd = subprocess.Popen(
        ["etcd", "--name", "m0", "--data-dir", os.path.join(d, "m0"),
         "--listen-client-urls", client, "--advertise-client-urls", client,
         "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
         "--initial-cluster", "m0=" + peer, "--log-level", "warn"],
        stdout=subprocess.DEVNULL, stderr=log)
    rc = 1
    try:
        for _ in range(200):
            try:
                put(cport, "/warmup", "x")
                break
            except (OSError, http.client.HTTPException, KeyError):
                time.sleep(0.05)
        ws = [Watcher(cport) for _ in range(WATCHERS)]
        for w in ws:
            w.start()
        for w in ws:
            if not w.created.wait(30):
                sys.exit("etcd_watch: a watch was not created in 30 s")
        lat = []
        for i in range(CHANGES):
            time.sleep(0.2)
            t0 = time.monotonic()
            rev = put(cport, "/bench/lat-%d" % i, "fc00::%x" % i)
            for w in ws:
                with w.cond:
                    if not w.cond.wait_for(lambda: rev in w.seen, 10):
                        sys.exit("etcd_watch: change %d did not reach every watcher in 10 s" % i)
                    lat.append((w.seen[rev] - t0) * 1e3)
        lat.sort()
        print("etcd %s watch latency: %d changes to %d watchers: p50 %.2f ms, p99 %.2f ms, max %.2f ms" % (
            subprocess.run(["etcd", "--version"], capture_output=True, text=True)
            .stdout.split()[2], CHANGES, WATCHERS, statistics.median(lat),
            lat[len(lat) * 99 // 100], lat[-1]))
        rc = 0
    finally:
        etcd.terminate()
        etcd.wait()
        log.close()
        if rc == 0:
            shutil.rmtree(d)
        else:
            print("# kept %s" % d)
    return rc


if __name__ == "__main__":
    sys.exit(main())
