#!/usr/bin/python3
"""A tiny AMQP 1.0 peer, built on Qpid Proton, for the jms output's tests of
what RabbitMQ 3.x cannot show: it offers ANONYMOUS-RELAY and advertises
ActiveMQ-style queue-prefix/topic-prefix connection properties, and it settles
messages with the outcome their `to` asks for:

  ...reject...  -> rejected, condition amqp:precondition-failed
  ...release... -> released
  ...modify...  -> modified (undeliverable-here)
  otherwise     -> accepted

Run it with /usr/bin/python3:  jms_relay_broker.py --port N
It prints "listening" once ready, then one JSON line per message received:
{"link_target": <target address or null>, "to": ..., "dest": <x-opt-jms-dest>,
 "msg_type": <x-opt-jms-msg-type>, "body": ..., "outcome": ...}.
It stops on SIGTERM or when stdin closes.
"""
import argparse
import json
import sys
import threading

from proton import UNDESCRIBED, Array, Condition, Data, Delivery, symbol
from proton.handlers import MessagingHandler
from proton.reactor import Container


class Relay(MessagingHandler):
    def __init__(self, port):
        super().__init__(auto_accept=False)
        self.port = port

    def on_start(self, event):
        self.acceptor = event.container.listen("127.0.0.1:%d" % self.port)
        print("listening", flush=True)

    def on_connection_init(self, event):
        c = event.connection
        c.offered_capabilities = Array(UNDESCRIBED, Data.SYMBOL, symbol("ANONYMOUS-RELAY"))
        c.properties = {symbol("queue-prefix"): "queue://", symbol("topic-prefix"): "topic://",
                        symbol("product"): "jms-relay-test-peer"}

    def on_link_opening(self, event):
        link = event.link
        if link.is_receiver:
            # Echo the client's target (null for an anonymous-relay link).
            link.target.address = link.remote_target.address

    def on_message(self, event):
        m = event.message
        ann = m.annotations or {}
        to = m.address or ""
        if "reject" in to:
            outcome = "rejected"
            event.delivery.local.condition = Condition("amqp:precondition-failed", "refused by the test peer")
            self.settle(event.delivery, Delivery.REJECTED)
        elif "release" in to:
            outcome = "released"
            self.release(event.delivery, delivered=False)
        elif "modify" in to:
            outcome = "modified"
            event.delivery.local.failed = True
            event.delivery.local.undeliverable = True
            self.settle(event.delivery, Delivery.MODIFIED)
        else:
            outcome = "accepted"
            self.accept(event.delivery)
        print(json.dumps({
            "link_target": event.link.remote_target.address,
            "to": to,
            "dest": ann.get(symbol("x-opt-jms-dest")),
            "msg_type": ann.get(symbol("x-opt-jms-msg-type")),
            "body": m.body if isinstance(m.body, str) else repr(m.body),
            "outcome": outcome,
        }), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    a = ap.parse_args()
    container = Container(Relay(a.port))

    def watch_stdin():
        sys.stdin.read()
        container.stop()

    threading.Thread(target=watch_stdin, daemon=True).start()
    container.run()


if __name__ == "__main__":
    main()
