#!/usr/bin/python3
"""Side-by-side drain: our `jms` input vs Redpanda Connect's `amqp_1` input.

usage: scripts/jms_vs_amqp1_input.py OURS_BIN PEER_BIN [N] [SIZE] [PAIRS] [CREDIT] [BATCH]

OURS_BIN is a connect-solace binary (go build ./cmd/connect-solace), PEER_BIN
the amqp_1 peer (/work/shared/peers/build-amqp1.sh OUT). For every run a fresh
durable RabbitMQ queue is filled with N non-persistent BytesMessages of SIZE
bytes by our `jms` output (RabbitMQ 3.10 gets slower on a queue that consumers
have attached to and left, so queues are not reused), then one consumer
process drains it (address /amq/queue/Q for both, which attaches without
declaring) into `drop` with CREDIT link credit (our `prefetch`,
amqp_1's `credit`; default 64) and, for ours, `batch_size` BATCH (default 1).
Runs alternate ours/peer, PAIRS pairs (default 3).

Measured from the consumer's first message (Benthos's own `output_sent` on
/stats, polled every 10 ms) to its N-th: msg/s received, and client CPU per
message from the child's /proc/PID/stat (utime+stime) over the same span, so
process start-up and connecting count for neither. Then, with the consumer
still running, until rabbitmqctl reports the queue empty (RabbitMQ takes the
settlements in behind the deliveries): msg/s until emptied. The queue's
count after the consumer stopped is printed too (0 when every settlement
reached the broker). A run in which nothing arrives for 10 s is reported as
stalled. Prints per-run figures,
the medians and the ratios ours/amqp_1, and the median of the per-pair
throughput ratios (the steadier figure on a shared machine).

Why amqp_1 stalls on RabbitMQ 3.10 at any credit above 1 (and below N):
it uses go-amqp's automatic credit (ReceiverOptions.Credit), which tops up
whenever the settled count reaches the credit it believes is left, and
so sends ever smaller flow frames (link-credit 1 or 2) while deliveries are
still in flight. A go-amqp debug trace of that receiver against this broker
(credit 64, 2000 queued messages) shows the client granting deliveries up
to 140 (delivery-count 139 + link-credit 1) while RabbitMQ had already sent
157: RabbitMQ sends past the credit window (it counts credit at the queue,
which does not see the deliveries still on their way through the session),
and echoes flows with link-credit 236..239, which is (139+1-157) mod 256 and
its neighbours. go-amqp then decrements its uint32 link-credit below zero;
the wrapped value is never reached by the settled count, so it never sends
credit again and the link sits idle with the queue full (here after 157 of
2000 messages; amqp_1 at credit 64 stopped after 127 of 20000). At credit 1
nothing is ever in flight when a flow is sent, so it works, one round trip
per message; with credit >= N no top-up is ever needed. Our input
(jms.CreditWindow) grants credit only once the broker has used all it had,
so a flow never overlaps deliveries in flight and it runs at every credit;
it renews the window as messages are handed to the pipeline (amqp_1: as they
are settled), with at most 2x CREDIT unsettled; the link credit on the wire
never exceeds CREDIT on either side. Meaningful same-credit figures are
therefore credit 1 and credit >= N; at 2..N-1 only ours completes.

The broker comes from JMS_TEST_AMQP_URL, JMS_TEST_USERNAME, JMS_TEST_PASSWORD
(the defaults of .ci/setup.d/20-rabbitmq.sh), and rabbitmqctl for node
rabbit@localhost must work (queue counts and clean-up).
"""
import json
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ours_bin, peer_bin = sys.argv[1:3]
N = int(sys.argv[3]) if len(sys.argv) > 3 else 20000
SIZE = int(sys.argv[4]) if len(sys.argv) > 4 else 1024
PAIRS = int(sys.argv[5]) if len(sys.argv) > 5 else 3
CREDIT = int(sys.argv[6]) if len(sys.argv) > 6 else 64
BATCH = int(sys.argv[7]) if len(sys.argv) > 7 else 1
url = os.environ.get("JMS_TEST_AMQP_URL", "amqp://127.0.0.1:5672")
user = os.environ.get("JMS_TEST_USERNAME", "connect-solace")
pw = os.environ.get("JMS_TEST_PASSWORD", "connect-solace-test")
host = url.split("//", 1)[1]
CTL = ["rabbitmqctl", "-q", "-n", "rabbit@localhost"]
TICK = os.sysconf("SC_CLK_TCK")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def head(port):
    return ("http:\n  enabled: true\n  address: 127.0.0.1:%d\nlogger:\n  level: WARN\n"
            "metrics:\n  json_api: {}\n" % port)


def fill_cfg(port, q):
    return head(port) + """input:
  generate:
    count: %d
    interval: ""
    mapping: 'root = "%s"'
output:
  jms:
    urls: [ "%s" ]
    username: %s
    password: %s
    address_style: rabbitmq
    queue: %s
    message_type: bytes
    delivery_mode: non_persistent
    max_in_flight: 64
""" % (N, "x" * SIZE, url, user, pw, q)


def drain_cfg(kind, port, q):
    if kind == "ours":
        inp = """input:
  jms:
    urls: [ "%s" ]
    username: %s
    password: %s
    address_style: rabbitmq
    queue: /amq/queue/%s
    prefetch: %d
    batch_size: %d
""" % (url, user, pw, q, CREDIT, BATCH)
    else:
        inp = """input:
  amqp_1:
    urls: [ "amqp://%s:%s@%s" ]
    source_address: /amq/queue/%s
    credit: %d
""" % (user, pw, host, q, CREDIT)
    return head(port) + inp + "output:\n  drop: {}\n"


def sent(port):
    try:
        data = json.loads(urllib.request.urlopen("http://127.0.0.1:%d/stats" % port, timeout=2).read().decode())
    except Exception:
        return -1
    tot, seen = 0, False
    for k, v in data.items():
        if k.split("{", 1)[0] == "output_sent" and isinstance(v, (int, float)):
            tot += v
            seen = True
    return tot if seen else -1


def cpu_of(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def broker_pid():
    with open("/tmp/connect-solace-rabbitmq/pid") if os.path.exists("/tmp/connect-solace-rabbitmq/pid") else open(os.devnull) as f:
        t = f.read().strip()
    return int(t) if t else None


BEAM = broker_pid()


def broker_cpu():
    return cpu_of(BEAM) if BEAM else float("nan")


def queue_count(q):
    out = subprocess.run(CTL + ["list_queues", "name", "messages"], capture_output=True, text=True, timeout=60).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] == q:
            return int(f[1])
    return -1


def write_cfg(text):
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(text)
    return f.name


def fill(q):
    path = write_cfg(fill_cfg(free_port(), q))
    subprocess.run([ours_bin, "run", path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600, check=True)
    os.unlink(path)
    have = queue_count(q)
    if have != N:
        sys.exit("filling %s: the queue holds %d messages, not %d" % (q, have, N))


def drain(kind, q):
    port = free_port()
    path = write_cfg(drain_cfg(kind, port, q))
    log = open(path + ".log", "w")
    p = subprocess.Popen([ours_bin if kind == "ours" else peer_bin, "run", path], stdout=subprocess.DEVNULL, stderr=log)
    t0 = time.monotonic()
    first = last_t = None
    got = 0
    while time.monotonic() - t0 < 120 and p.poll() is None:
        s = sent(port)
        now = time.monotonic()
        if s < 0:
            # /stats did not answer (the machine is loaded): no evidence of
            # a stall, keep waiting within the overall limit.
            if last_t is not None:
                last_t = max(last_t, now - 9)
            time.sleep(0.01)
            continue
        if s > 0 and first is None:
            first = (now, s, cpu_of(p.pid), broker_cpu())
        if s > got:
            got, last_t = s, now
        if s >= N:
            break
        if first is not None and now - last_t > 10:
            break  # stalled: nothing for 10 s
        time.sleep(0.01)
    end = (time.monotonic(), got, cpu_of(p.pid)) if p.poll() is None else None
    drained, bcpu = None, float("nan")
    if end is not None and got >= N:
        # RabbitMQ processes dispositions behind the deliveries it sends (its
        # credit is topped up as the client settles, not as the broker takes
        # the settlements in), so the queue empties later than the client
        # has seen every message: wait for that too, with the client alive.
        while time.monotonic() - end[0] < 60 and p.poll() is None:
            if queue_count(q) == 0:
                drained = time.monotonic()
                bcpu = (broker_cpu() - first[3]) * 1e6 / (N - first[1])
                break
    p.terminate()
    try:
        p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    log.close()
    os.unlink(path)
    left = queue_count(q)
    if first is None or end is None or got < N:
        return None, None, None, None, got, left, path + ".log"
    el = end[0] - first[0]
    msgs = end[1] - first[1]
    os.unlink(path + ".log")
    drain_rate = (N - first[1]) / (drained - first[0]) if drained else float("nan")
    return msgs / el, drain_rate, (end[2] - first[2]) * 1e6 / msgs, bcpu, got, left, None


pair_ratios = []
rates = {"ours": [], "peer": []}
drains = {"ours": [], "peer": []}
cpus = {"ours": [], "peer": []}
tag = secrets.token_hex(3)
print("N=%d SIZE=%d credit=%d ours batch_size=%d, load %s" % (N, SIZE, CREDIT, BATCH, os.getloadavg()), flush=True)
for i in range(PAIRS):
    order = ("ours", "peer") if i % 2 == 0 else ("peer", "ours")
    pair = {}
    for kind in order:
        q = "jmsin-cmp-%s-%s-%d" % (tag, kind, i)
        fill(q)
        rate, drate, cpu, bcpu, got, left, logf = drain(kind, q)
        subprocess.run(CTL + ["delete_queue", q], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
        if rate is None:
            print("%s run %d: STALLED after %d/%d messages (queue then held %d; log %s)" % (kind, i + 1, got, N, left, logf), flush=True)
            continue
        rates[kind].append(rate)
        pair[kind] = rate
        drains[kind].append(drate)
        cpus[kind].append(cpu)
        print("%s run %d: received %.0f msg/s, queue emptied at %.0f msg/s, client cpu %.1f us/msg, broker cpu %.1f us/msg (until emptied, includes the rabbitmqctl polls), queue left %d" % (kind, i + 1, rate, drate, cpu, bcpu, left), flush=True)
    if len(pair) == 2:
        pair_ratios.append(pair["ours"] / pair["peer"])
print("load %s" % (os.getloadavg(),))
if pair_ratios:
    # Adjacent runs share the machine's load of the moment, so their ratio
    # is steadier than the ratio of the medians on a shared machine.
    print("received msg/s ratio ours/amqp_1 per pair %s, median %.2f" % (
        " ".join("%.2f" % r for r in pair_ratios), statistics.median(pair_ratios)))
if rates["ours"] and rates["peer"]:
    mo, mp = statistics.median(rates["ours"]), statistics.median(rates["peer"])
    co, cp = statistics.median(cpus["ours"]), statistics.median(cpus["peer"])
    print("median received msg/s: ours %.0f, amqp_1 %.0f; throughput ratio ours/amqp_1 %.2f" % (mo, mp, mo / mp))
    do, dp = statistics.median(drains["ours"]), statistics.median(drains["peer"])
    print("median queue-emptied msg/s: ours %.0f, amqp_1 %.0f; ratio ours/amqp_1 %.2f" % (do, dp, do / dp))
    print("median client cpu us/msg: ours %.1f, amqp_1 %.1f; cpu ratio ours/amqp_1 %.2f" % (co, cp, co / cp))
