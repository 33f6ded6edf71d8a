#!/usr/bin/python3
"""Independent AMQP 1.0 receiver for the jms output's integration tests.

Uses Apache Qpid Proton (Debian's python3-qpid-proton), not go-amqp, so the
tests check what another AMQP stack decodes from the wire. Run it with
/usr/bin/python3:

    jms_receive.py --url amqp://127.0.0.1:5672 --user U --password P \
        --address /queue/q --count 3 [--timeout 20]

It attaches a receiver, prints the line "ready" once the link is up (so a
test can subscribe to a topic before sending), then accepts --count messages
(or, with --count 0, every message until none arrives for --idle seconds)
and prints one JSON document: a list with one object per message describing
every section, each typed value as {"type": <proton type>, "value": ...}.
"""
import argparse
import base64
import json
import sys
import uuid

import cproton
from proton import Message
from proton import Timeout
from proton.reactor import DurableSubscription
from proton.utils import BlockingConnection


def typed(v):
    """Describe a decoded AMQP value with the Proton type it decoded into."""
    t = type(v).__name__
    if v is None:
        return {"type": "null", "value": None}
    if isinstance(v, bytes):
        return {"type": t, "value": base64.b64encode(v).decode()}
    if isinstance(v, uuid.UUID):
        return {"type": t, "value": str(v)}
    if isinstance(v, dict):
        return {"type": t, "value": {str(k): typed(x) for k, x in v.items()}}
    if isinstance(v, (list, tuple)):
        return {"type": t, "value": [typed(x) for x in v]}
    if isinstance(v, (bool, int, float, str)):
        return {"type": t, "value": v}
    return {"type": t, "value": str(v)}


def body_section(m: Message):
    if not m.inferred:
        return "amqp-value"
    if isinstance(m.body, (bytes, memoryview)):
        return "data"
    if isinstance(m.body, list):
        return "amqp-sequence"
    return "unknown"


def describe(m: Message):
    return {
        "body_section": body_section(m),
        "body": typed(m.body),
        # Message.content_type turns an absent field into symbol("None");
        # read the field itself.
        "content_type": cproton.pn_message_get_content_type(m._msg),
        "annotations": {str(k): typed(v) for k, v in (m.annotations or {}).items()},
        "durable": bool(m.durable),
        "priority": m.priority,
        "ttl_ms": round(m.ttl * 1000) if m.ttl else 0,
        "message_id": typed(m.id),
        "correlation_id": typed(m.correlation_id),
        "subject": m.subject,
        "to": m.address,
        "reply_to": m.reply_to,
        "creation_time_ms": round(m.creation_time * 1000) if m.creation_time else 0,
        "expiry_time_ms": round(m.expiry_time * 1000) if m.expiry_time else 0,
        "group_id": m.group_id,
        "group_sequence": m.group_sequence,
        "properties": {str(k): typed(v) for k, v in (m.properties or {}).items()},
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--user", default="")
    ap.add_argument("--password", default="")
    ap.add_argument("--address", required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--idle", type=float, default=2.0)
    a = ap.parse_args()

    kwargs = {"timeout": a.timeout}
    if a.user:
        kwargs.update(user=a.user, password=a.password, allowed_mechs="PLAIN")
    conn = BlockingConnection(a.url, **kwargs)
    try:
        # RabbitMQ declares the queue behind /queue/Q durable only for a
        # durable terminus, and refuses a link whose durability differs from
        # the queue's; the jms output declares its queues durable.
        opts = DurableSubscription() if a.address.startswith("/queue/") else None
        rcv = conn.create_receiver(a.address, credit=a.count if a.count > 0 else 200, options=opts)
        print("ready", flush=True)
        out = []
        if a.count > 0:
            for _ in range(a.count):
                m = rcv.receive(timeout=a.timeout)
                out.append(describe(m))
                rcv.accept()
        else:
            # Drain: read until the queue stays empty for --idle seconds.
            while True:
                try:
                    m = rcv.receive(timeout=a.idle)
                except Timeout:
                    break
                out.append(describe(m))
                rcv.accept()
        print(json.dumps(out), flush=True)
    finally:
        conn.close()


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # report why on stderr; the test shows it
        print(f"jms_receive.py: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
