#!/usr/bin/python3
"""Side-by-side send: our `jms` output vs Redpanda Connect's `amqp_1` output, with the broker's side.

usage: scripts/jms_vs_amqp1_output.py OURS_BIN[,OURS_BIN2...] PEER_BIN [N] [SIZE] [PAIRS] [--busy]

The method of /work/shared/peers/jms_vs_amqp1.py (the issue's figure): generate
(batch_size 1, a SIZE-byte string) into the output, persistent, max_in_flight
64, to a durable RabbitMQ queue over AMQP 1.0 (address /amq/queue/Q, declared
once beforehand), timed from process start until Benthos's `output_sent` on
/stats reaches N; client CPU is the child's getrusage (start-up included).
Runs alternate over every OURS_BIN given (say, a build before and after a
change) and amqp_1, PAIRS rounds (default 3), on queues of their own
(jmsvs-ours, jmsvs-peer), purged after each run.

Added for the broker's side, per run: RabbitMQ's CPU (beam.smp utime+stime
from /proc, per message and as a share of one core), its busiest threads
(schedulers, dirty CPU schedulers: major collections of big process heaps run
there) and the machine's idle share. With --busy, one more run of each
client samples, 400 times over 2 s, whether the broker's busiest Erlang
processes are running or runnable: a process near 100% is a single-threaded
bound that more links, sessions or connections cannot lift.

Measured 2026-12-01 (2 cores shared with other work, RabbitMQ 3.10, 1 KiB,
N=40000): the classic queue's process (rabbit_amqqueue_process) is busy 75-85%
of the samples for both clients, the AMQP 1.0 session, channel and reader
processes 8-16%; fsync takes 13-16% of the time (0.6-1.1 ms each, 17-31
messages per fsync). The broker spends 140-170 us of CPU per JMS message and
115-140 us per amqp_1 message (header and data section only); that is the
ceiling for msg/s on two cores, the same for both clients.
"""
import os, resource, statistics, subprocess, sys, tempfile, time, json, socket, urllib.request

args = [a for a in sys.argv[1:] if not a.startswith("--")]
BUSY = "--busy" in sys.argv
ours_bins, peer_bin = args[0].split(","), args[1]
N = int(args[2]) if len(args) > 2 else 40000
SIZE = int(args[3]) if len(args) > 3 else 1024
PAIRS = int(args[4]) if len(args) > 4 else 3
URL, USER, PW = "amqp://127.0.0.1:5672", "connect-solace", "connect-solace-test"
NODE = ["rabbitmqctl", "-q", "-n", "rabbit@localhost"]
TCK = os.sysconf("SC_CLK_TCK")


def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p


def cfg(peer, port, queue, n):
    """queue is the queue's name; both address it as /amq/queue/NAME."""
    head = "http:\n  enabled: true\n  address: 127.0.0.1:%d\nlogger:\n  level: ERROR\nmetrics:\n  json_api: {}\n" % port
    gen = "input:\n  generate:\n    count: %d\n    interval: \"\"\n    batch_size: 1\n    mapping: 'root = \"%s\"'\n" % (n, "x" * SIZE)
    if peer:
        out = ("output:\n  amqp_1:\n    urls: [ \"amqp://%s:%s@%s\" ]\n    target_address: /amq/queue/%s\n"
               "    persistent: true\n    max_in_flight: 64\n") % (USER, PW, URL.split("//", 1)[1], queue)
    elif n == 1:  # declaring: our output declares a durable queue for a plain name
        out = ("output:\n  jms:\n    urls: [ \"%s\" ]\n    username: %s\n    password: %s\n    queue: %s\n"
               "    address_style: rabbitmq\n") % (URL, USER, PW, queue)
    else:
        out = ("output:\n  jms:\n    urls: [ \"%s\" ]\n    username: %s\n    password: %s\n    queue: %s\n"
               "    address_style: rabbitmq\n    message_type: bytes\n    delivery_mode: persistent\n"
               "    max_in_flight: 64\n") % (URL, USER, PW, "/amq/queue/" + queue)
    return head + gen + out


def sent(port):
    try:
        data = json.loads(urllib.request.urlopen("http://127.0.0.1:%d/stats" % port, timeout=2).read().decode())
    except Exception:
        return -1
    vals = [v for k, v in data.items() if k.split("{", 1)[0] == "output_sent" and isinstance(v, (int, float))]
    return sum(vals) if vals else -1


def purge(q):
    subprocess.run(NODE + ["purge_queue", q], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)


def start(binp, y):
    f = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
    f.write(y); f.close()
    return subprocess.Popen([binp, "run", f.name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def beam_pid():
    return int(subprocess.run(["pgrep", "-o", "-f", "beam.smp.*rabbit"], capture_output=True, text=True).stdout.split()[0])


def cpu_of(path):
    f = open(path).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TCK


def beam_threads(pid):
    out = {}
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            st = open("/proc/%d/task/%s/stat" % (pid, t)).read()
        except OSError:
            continue
        out[t] = (st.split("(", 1)[1].rsplit(")", 1)[0], cpu_of("/proc/%d/task/%s/stat" % (pid, t)))
    return out


def idle():
    v = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    return v[3] + v[4], sum(v)


def run(binp, peer, q):
    port = free_port()
    beam = beam_pid()
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    b0, th0, i0 = cpu_of("/proc/%d/stat" % beam), beam_threads(beam), idle()
    t0 = time.monotonic()
    p = start(binp, cfg(peer, port, q, N))
    done_at, last, moved = None, -1, t0
    while time.monotonic() - moved < 30:  # nothing sent for 30 s: stalled
        s = sent(port)
        if s >= N:
            done_at = time.monotonic(); break
        if s > last:
            last, moved = s, time.monotonic()
        if p.poll() is not None:  # ours exits once everything is acknowledged
            done_at = time.monotonic() if last >= 0 else None
            break
        time.sleep(0.02)
    el = (done_at or time.monotonic()) - t0
    if done_at is None:
        print("  (stalled or failed after %d messages)" % max(last, 0), flush=True)
    b1, th1, i1 = cpu_of("/proc/%d/stat" % beam), beam_threads(beam), idle()
    if p.poll() is None:
        p.kill()
    p.wait()
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    purge(q)
    cpu = (ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime)
    tops = sorted(((th1[t][1] - th0.get(t, ("", 0))[1], th1[t][0]) for t in th1), reverse=True)[:4]
    broker = "broker %.0f us/msg (%.0f%% of a core; %s), machine idle %.0f%%" % (
        (b1 - b0) * 1e6 / N, 100 * (b1 - b0) / el, ", ".join("%s %.0f%%" % (n, 100 * c / el) for c, n in tops),
        100 * (i1[0] - i0[0]) / max(1, i1[1] - i0[1]))
    return N / el, cpu * 1e6 / N, broker


BUSY_EVAL = """
Top = [Pid || {Pid, _, _} <- recon:proc_window(reductions, 6, 1000)],
Count = fun(Pid) -> length([1 || _ <- lists:seq(1, 400), begin timer:sleep(5),
  S = case erlang:process_info(Pid, status) of {status, X} -> X; _ -> gone end, S =:= running orelse S =:= runnable end]) end,
Self = self(),
[spawn(fun() -> Self ! {Pid, Count(Pid)} end) || Pid <- Top],
R = [receive {Pid, C} -> {C / 4, proc_lib:translate_initial_call(Pid)} after 10000 -> timeout end || Pid <- Top],
lists:flatten(io_lib:format("~p", [R])).
"""


def busy(binp, peer, q):
    port = free_port()
    p = start(binp, cfg(peer, port, q, 10 * N))
    t0 = time.monotonic()
    while sent(port) < min(N // 4, 5000) and p.poll() is None and time.monotonic() - t0 < 60:
        time.sleep(0.05)
    out = subprocess.run(NODE + ["eval", BUSY_EVAL], capture_output=True, text=True, timeout=60).stdout
    p.kill(); p.wait(); purge(q)
    return " ".join(out.replace('"', "").replace("\\n", " ").split())


def declare(q):
    # Our output declares a durable queue through the name Q (address_style rabbitmq).
    port = free_port()
    p = start(ours_bins[0], cfg(False, port, q, 1))
    p.wait(timeout=60)
    purge(q)


QO, QP = "jmsvs-ours", "jmsvs-peer"
for q in (QO, QP):
    declare(q)
kinds = [(b, False) for b in ours_bins] + [(peer_bin, True)]
rates = {k: [] for k in kinds}
cpus = {k: [] for k in kinds}
for i in range(PAIRS):
    for k in kinds:
        r, c, broker = run(k[0], k[1], QP if k[1] else QO)
        rates[k].append(r); cpus[k].append(c)
        print("%s run %d: %.0f msg/s, client cpu %.1f us/msg; %s" % (os.path.basename(k[0]), i + 1, r, c, broker), flush=True)
if BUSY:
    for k in kinds:
        print("%s: share of samples running or runnable, busiest broker processes: %s" % (
            os.path.basename(k[0]), busy(k[0], k[1], QP if k[1] else QO)), flush=True)
peer = kinds[-1]
mp, cp = statistics.median(rates[peer]), statistics.median(cpus[peer])
print("amqp_1: median %.0f msg/s, %.1f us/msg" % (mp, cp))
for k in kinds[:-1]:
    mo, co = statistics.median(rates[k]), statistics.median(cpus[k])
    print("%s: median %.0f msg/s (ratio %.2f), client cpu %.1f us/msg (ratio %.2f)" % (k[0], mo, mo / mp, co, co / cp))
