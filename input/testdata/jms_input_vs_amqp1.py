#!/usr/bin/python3
"""Side-by-side throughput: our `jms` input vs Redpanda Connect's `amqp_1` input.

Each run fills an existing durable RabbitMQ queue with N persistent BytesMessages
of SIZE bytes (through our jms output, not timed), then starts the consumer binary
with the queue as its input (address /amq/queue/Q, so neither declares), the same
prefetch/credit PREFETCH, and a `drop` output, and times it from process start
until Benthos's own `input_received` counter on /stats reaches N; client CPU is the
child's user+system time. A consumer that receives nothing for 20 s is reported
as stalled, with the rate of what it got until then. Runs alternate ours/peer; prints per-run figures, the
medians and the ratio ours/peer.

usage: jms_input_vs_amqp1.py OURS_BIN PEER_BIN AMQP_URL USER PASS [N] [SIZE] [PAIRS] [PREFETCH]
Needs rabbitmqctl for the node rabbit@localhost (purge between runs). The peer binary
comes from /work/shared/peers/build-amqp1.sh.
"""
import json, resource, statistics, subprocess, sys, tempfile, time, urllib.request, socket

ours_bin, peer_bin, url, user, pw = sys.argv[1:6]
N = int(sys.argv[6]) if len(sys.argv) > 6 else 20000
SIZE = int(sys.argv[7]) if len(sys.argv) > 7 else 1024
PAIRS = int(sys.argv[8]) if len(sys.argv) > 8 else 3
PREFETCH = int(sys.argv[9]) if len(sys.argv) > 9 else 64
STALL = 20  # seconds without progress that count as a stall
host = url.split("//", 1)[1]
cred_url = "amqp://%s:%s@%s" % (user, pw, host)
CTL = ["rabbitmqctl", "-q", "-n", "rabbit@localhost"]


def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p


def head(port):
    return "http:\n  enabled: true\n  address: 127.0.0.1:%d\nlogger:\n  level: ERROR\nmetrics:\n  json_api: {}\n" % port


def fill(q, n):
    cfg = """input:
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
    max_in_flight: 64
""" % (n, "x" * SIZE, url, user, pw, q)
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(head(free_port()) + cfg)
    subprocess.run([ours_bin, "run", f.name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600, check=True)


def consumer_cfg(kind, port, q):
    if kind == "ours":
        inp = """input:
  jms:
    urls: [ "%s" ]
    username: %s
    password: %s
    address_style: rabbitmq
    queue: /amq/queue/%s
    prefetch: %d
""" % (url, user, pw, q, PREFETCH)
    else:
        inp = """input:
  amqp_1:
    urls: [ "%s" ]
    source_address: /amq/queue/%s
    credit: %d
""" % (cred_url, q, PREFETCH)
    return head(port) + inp + "output:\n  drop: {}\n"


def received(port):
    try:
        data = json.loads(urllib.request.urlopen("http://127.0.0.1:%d/stats" % port, timeout=2).read().decode())
    except Exception:
        return -1
    tot = 0; seen = False
    for k, v in data.items():
        if k.split("{", 1)[0] == "input_received" and isinstance(v, (int, float)):
            tot += v; seen = True
    return tot if seen else -1


def run(kind, q):
    fill("/queue/" + q, N)
    port = free_port()
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(consumer_cfg(kind, port, q))
    binp = ours_bin if kind == "ours" else peer_bin
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.Popen([binp, "run", f.name], stdout=subprocess.DEVNULL, stderr=open(f.name + ".log", "w"))
    done_at = None; last = -1; progressed = t0
    while time.monotonic() - t0 < 300:
        r = received(port)
        if r >= N:
            done_at = time.monotonic(); break
        if r > last:
            last, progressed = r, time.monotonic()
        if p.poll() is not None or time.monotonic() - progressed > STALL:
            break
        time.sleep(0.02)
    el = (done_at or time.monotonic()) - t0
    if p.poll() is None:
        p.terminate()
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
    p.wait()
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime)
    subprocess.run(CTL + ["purge_queue", q], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    return el, cpu, done_at is not None, last


def startup_cpu(binp):
    """CPU a binary spends starting and stopping (generate 1 -> drop), which
    the per-message figures below are reported both with and net of."""
    cfg = 'logger:\n  level: ERROR\ninput:\n  generate:\n    count: 1\n    interval: ""\n    mapping: \'root = "x"\'\noutput:\n  drop: {}\n'
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(cfg)
    samples = []
    for _ in range(3):
        ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([binp, "run", f.name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
        ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        samples.append((ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime))
    return statistics.median(samples)


base = {"ours": startup_cpu(ours_bin), "peer": startup_cpu(peer_bin)}
print("startup cpu: ours %.3f s, amqp_1 %.3f s" % (base["ours"], base["peer"]), flush=True)
net = {"ours": [], "peer": []}
rates = {"ours": [], "peer": []}
cpus = {"ours": [], "peer": []}
for i in range(PAIRS):
    for kind in ("ours", "peer"):
        q = "jmsin-side-" + kind
        el, cpu, ok, last = run(kind, q)
        # A run that stalled counts what it received until it stopped.
        r = (N if ok else max(last, 0)) / el
        rates[kind].append(r)
        got = N if ok else max(last, 1)
        cpus[kind].append(cpu * 1e6 / got)
        net[kind].append(max(cpu - base[kind], 0) * 1e6 / got)
        print("%s run %d: %.2f s, %.0f msg/s, client cpu %.1f us/msg%s" % (
            kind, i + 1, el, r, cpu * 1e6 / got, "" if ok else " (STALLED at %d of %d)" % (last, N)), flush=True)
mo, mp = statistics.median(rates["ours"]), statistics.median(rates["peer"])
print("prefetch/credit %d, %d messages of %d bytes" % (PREFETCH, N, SIZE))
print("median client cpu us/msg: ours %.1f, amqp_1 %.1f" % (statistics.median(cpus["ours"]), statistics.median(cpus["peer"])))
print("median client cpu us/msg net of startup: ours %.1f, amqp_1 %.1f" % (statistics.median(net["ours"]), statistics.median(net["peer"])))
print("median msg/s: ours %.0f, amqp_1 %.0f; ratio ours/amqp_1 %.2f" % (mo, mp, mo / mp))
