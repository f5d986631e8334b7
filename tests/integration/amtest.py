"""Debian's real prometheus-alertmanager for tests and benches: one
instance in the coordinator's namespace, its HTTP API read through a
socket made there (no process per poll)."""

import http.client
import json
import os
import re
import shutil

import cluster as cl

AM_CONF = """route:
  receiver: none
  group_wait: 1s
receivers:
  - name: none
"""


def am_get(c, port, path):
    """(status, body) of GET path from 127.0.0.1:port in c's coordinator
    namespace."""
    s = cl.socket_in(c.ns("coord"))
    try:
        s.settimeout(5)
        s.connect(("127.0.0.1", port))
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        conn.sock = s
        conn.request("GET", path)
        r = conn.getresponse()
        return r.status, r.read().decode(errors="replace")
    finally:
        s.close()


def am_active(c, port):
    """{(alertname, subject): alert} active at that Alertmanager."""
    st, body = am_get(c, port, "/api/v2/alerts")
    if st != 200:
        return {}
    return {(a["labels"].get("alertname"), a["labels"].get("subject")): a
            for a in json.loads(body)}


def am_received(c, port, status):
    """alertmanager_alerts_received_total of that status, all versions."""
    st, body = am_get(c, port, "/metrics")
    return sum(float(m) for m in re.findall(
        r'^alertmanager_alerts_received_total\{[^}]*status="%s"[^}]*\} '
        r'(\S+)$' % status, body, re.M))


def am_start(c, d, port, conf_text=AM_CONF):
    """One Alertmanager (no cluster) on 127.0.0.1:port in c's coordinator
    namespace with conf_text as its configuration, its files under d,
    ready; None when not installed."""
    am = shutil.which("prometheus-alertmanager")
    if not am:
        return None
    conf = os.path.join(d, "am.yml")
    with open(conf, "w") as f:
        f.write(conf_text)
    store = os.path.join(d, "am-%d" % port)
    os.makedirs(store, exist_ok=True)
    p = c.spawn("coord", [am, "--config.file=" + conf,
                          "--storage.path=" + store,
                          "--web.listen-address=127.0.0.1:%d" % port,
                          "--cluster.listen-address="],
                os.path.join(d, "am-%d.log" % port), name="alertmanager")

    def ready():
        try:
            return am_get(c, port, "/-/ready")[0] == 200
        except OSError:
            return False
    cl.wait_for(ready, 30, "alertmanager on %d ready" % port)
    return p
