#!/usr/bin/python3
"""A tiny AMQP 1.0 broker stand-in, built on Qpid Proton, for the jms input's
tests of what RabbitMQ 3.x cannot show: durable and shared subscriptions,
selectors and the exact outcomes a consumer settles with.

For every receiver link a client attaches, it prints the attach as the peer
saw it (link name, container id, source address, durability, expiry policy,
capabilities, filters), echoes the source back (without filters with
--ignore-filters, as a broker that does not support them would), sends
--count JMS TextMessages "m0", "m1", ... as credit allows, and prints how the
client settled each one. It also prints detaches (closed or not) and the end
of each connection.

Run it with /usr/bin/python3:  jms_source_peer.py --port N [--count 3] [--ignore-filters]
It prints "listening" once ready, then one JSON object per line:
  {"event": "attach", "link": ..., "container": ..., "address": ..., "durable": "none"|"configuration"|"unsettled-state",
   "expiry_policy": "link-detach"|"session-end"|"connection-close"|"never", "capabilities": [...], "filters": {name: value}}
  {"event": "settled", "body": "m0", "state": "accepted"|"released"|"modified"|"rejected",
   "delivery_failed": bool, "undeliverable_here": bool, "condition": str|null, "description": str|null}
  {"event": "detach", "link": ..., "closed": bool}
  {"event": "connection_closed", "container": ...}
It stops on SIGTERM or when stdin closes.
"""
import argparse
import json
import sys
import threading

from proton import Delivery, Described, Message, Terminus, byte, symbol
from proton.handlers import MessagingHandler
from proton.reactor import Container

DURABILITY = {Terminus.NONDURABLE: "none", Terminus.CONFIGURATION: "configuration", Terminus.DELIVERIES: "unsettled-state"}
EXPIRY = {Terminus.EXPIRE_WITH_LINK: "link-detach", Terminus.EXPIRE_WITH_SESSION: "session-end",
          Terminus.EXPIRE_WITH_CONNECTION: "connection-close", Terminus.EXPIRE_NEVER: "never"}
STATES = {Delivery.ACCEPTED: "accepted", Delivery.RELEASED: "released", Delivery.MODIFIED: "modified",
          Delivery.REJECTED: "rejected"}


def emit(obj):
    print(json.dumps(obj), flush=True)


def data_object(d):
    d.rewind()
    if d.next() is None:
        return None
    return d.get_object()


def plain(v):
    """JSON-friendly form of a decoded AMQP value."""
    if isinstance(v, Described):
        return plain(v.value)
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if hasattr(v, "elements"):
        return [plain(x) for x in v.elements]
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return v if v is None or isinstance(v, (bool, int, float)) else str(v)


class Peer(MessagingHandler):
    def __init__(self, port, count, ignore_filters):
        super().__init__(auto_accept=False, auto_settle=True)
        self.port, self.count, self.ignore_filters = port, count, ignore_filters
        self.sent = {}

    def on_start(self, event):
        event.container.listen("127.0.0.1:%d" % self.port)
        emit("listening")

    def on_link_opening(self, event):
        link = event.link
        if not link.is_sender:
            return
        src = link.remote_source
        emit({
            "event": "attach",
            "link": link.name,
            "container": event.connection.remote_container,
            "address": src.address,
            "durable": DURABILITY.get(src.durability, str(src.durability)),
            "expiry_policy": EXPIRY.get(src.expiry_policy, str(src.expiry_policy)),
            "capabilities": plain(data_object(src.capabilities)) or [],
            "filters": plain(data_object(src.filter)) or {},
        })
        link.source.copy(src)
        if self.ignore_filters:
            link.source.filter.clear()
        self.sent[link] = 0

    def on_sendable(self, event):
        link = event.sender
        while link.credit > 0 and self.sent.get(link, 0) < self.count:
            n = self.sent[link]
            self.sent[link] = n + 1
            msg = Message(body="m%d" % n, durable=True,
                          annotations={symbol("x-opt-jms-msg-type"): byte(5)})
            dlv = link.send(msg, tag=str(n))
            dlv.body = "m%d" % n

    def on_settled(self, event):
        dlv = event.delivery
        remote = dlv.remote
        cond = remote.condition
        emit({
            "event": "settled",
            "body": getattr(dlv, "body", None),
            "state": STATES.get(dlv.remote_state, str(dlv.remote_state)),
            "delivery_failed": bool(remote.failed),
            "undeliverable_here": bool(remote.undeliverable),
            "condition": cond.name if cond else None,
            "description": cond.description if cond else None,
        })

    def on_link_remote_detach(self, event):
        emit({"event": "detach", "link": event.link.name, "closed": False})
        event.link.detach()

    def on_link_remote_close(self, event):
        emit({"event": "detach", "link": event.link.name, "closed": True})
        event.link.close()

    def on_connection_remote_close(self, event):
        emit({"event": "connection_closed", "container": event.connection.remote_container})
        event.connection.close()

    def on_transport_closed(self, event):
        pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--count", type=int, default=3)
    ap.add_argument("--ignore-filters", action="store_true")
    a = ap.parse_args()
    container = Container(Peer(a.port, a.count, a.ignore_filters))

    def watch_stdin():
        sys.stdin.read()
        container.stop()

    threading.Thread(target=watch_stdin, daemon=True).start()
    container.run()


if __name__ == "__main__":
    main()
