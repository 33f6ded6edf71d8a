// Package benchbroker runs a solacetest broker in a child process for
// benchmarks. With the broker in its own process, getrusage of the benchmark
// process measures the client side alone (plugin or raw Solace client), so
// CPU per message can be compared without the broker's share diluting it.
//
// The child is the benchmark's own test binary: this package's init serves a
// broker instead of running tests when the environment variable is set. The
// parent drives it over a line protocol on the child's stdin and stdout.
// Import it only from tests.
package benchbroker

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"solace.dev/go/messaging/pkg/solace/config"

	"github.com/connect-solace/connect-solace/internal/gcfloor"
	"github.com/connect-solace/connect-solace/solacetest"
)

const envServe = "CONNECT_SOLACE_BENCH_BROKER"

func init() {
	if os.Getenv(envServe) == "1" {
		os.Exit(serve(os.Stdin, os.Stdout))
	}
}

// serve runs the broker and answers commands until stdin closes.
//
// With CONNECT_SOLACE_BENCH_BROKER_CPUPROFILE set to a path, the child
// writes a CPU profile of the broker there, to profile the broker alone;
// with CONNECT_SOLACE_BENCH_BROKER_MEMPROFILE, an allocation profile when it
// ends (go tool pprof -sample_index=alloc_space).
func serve(in io.Reader, out io.Writer) int {
	if path := os.Getenv(envServe + "_MEMPROFILE"); path != "" {
		defer func() {
			if f, err := os.Create(path); err == nil {
				_ = pprof.Lookup("allocs").WriteTo(f, 0)
				_ = f.Close()
			}
		}()
	}
	if path := os.Getenv(envServe + "_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			defer f.Close()
			if pprof.StartCPUProfile(f) == nil {
				defer pprof.StopCPUProfile()
			}
		}
	}
	// The broker runs with the connect-solace binary's collector floor, as
	// `connect-solace devbroker` does: benchmarks measure plugins against
	// the broker as shipped.
	gcfloor.Start(gcfloor.DefaultFloor)
	br, err := solacetest.Start(solacetest.Config{DataDir: os.Getenv(envServe + "_DATADIR")})
	if err != nil {
		fmt.Fprintf(out, "error %v\n", err)
		return 1
	}
	defer br.Close()
	var injecting sync.WaitGroup
	defer injecting.Wait()
	w := bufio.NewWriter(out)
	fmt.Fprintf(w, "ok %s\n", br.SMFURL())
	_ = w.Flush()
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		var reply string
		switch f[0] {
		case "count":
			reply = "ok " + strconv.Itoa(br.PublishedCount(f[1]))
		case "queue":
			err := br.CreateQueue("default", solacetest.QueueConfig{Name: f[1], Subscriptions: f[2:]})
			reply = okOrErr(err)
		case "spooled":
			_, st, err := br.Queue("default", f[1])
			if err != nil {
				reply = okOrErr(err)
			} else {
				reply = "ok " + strconv.Itoa(st.SpooledMsgCount)
			}
		case "state":
			reply = "ok " + br.FlowState("default", f[1])
		case "cpu":
			reply = "ok " + strconv.FormatInt(CPU().Nanoseconds(), 10)
		case "pause":
			br.Faults().PauseDelivery()
			reply = "ok"
		case "resume":
			br.Faults().ResumeDelivery()
			reply = "ok"
		case "direct":
			// In the background, after the previous batch: the reply
			// must not wait for a consumer the caller has yet to read
			// with.
			n, err := strconv.Atoi(f[2])
			if err == nil {
				injecting.Wait()
				injecting.Add(1)
				go func() {
					defer injecting.Done()
					_ = br.InjectDirect("default", f[1], make([]byte, 1024), n)
				}()
			}
			reply = okOrErr(err)
		default:
			reply = "error unknown command " + f[0]
		}
		fmt.Fprintln(w, reply)
		_ = w.Flush()
	}
	return 0
}

func okOrErr(err error) string {
	if err != nil {
		return "error " + strings.ReplaceAll(err.Error(), "\n", " ")
	}
	return "ok"
}

// Broker is a handle on the child broker.
type Broker struct {
	tb  testing.TB
	url string

	mu  sync.Mutex
	in  io.WriteCloser
	out *bufio.Reader
}

// Start starts a broker process, stopped when tb ends.
//
// It also gives this process, the clients' side, the connect-solace
// binary's collector floor (internal/gcfloor, installed by gcfloor/atinit in
// cmd/connect-solace): the plugins are measured as users run them, and the
// raw loops, sharing the process, get the same floor. Without it a round of
// the input that allocates more than the test binary's small headroom over
// its live heap pays for a collection that the raw loop, allocating less,
// does not trigger, and that the binary, 64 MiB between collections, does
// not make. As everywhere, GOGC or
// GOMEMLIMIT in the environment turns the floor off: `GOGC=100 go test
// -bench ...` gives the figures of Go's default collector.
func Start(tb testing.TB) *Broker {
	tb.Helper()
	return start(tb, "")
}

// StartDataDir starts a broker process that keeps its state in dataDir
// (solacetest.Config.DataDir), stopped when tb ends.
func StartDataDir(tb testing.TB, dataDir string) *Broker {
	tb.Helper()
	return start(tb, dataDir)
}

func start(tb testing.TB, dataDir string) *Broker {
	tb.Helper()
	gcfloor.Start(gcfloor.DefaultFloor)
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^$")
	cmd.Env = append(os.Environ(), envServe+"=1", envServe+"_DATADIR="+dataDir)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	b := &Broker{tb: tb, in: in, out: bufio.NewReader(outPipe)}
	tb.Cleanup(func() {
		_ = in.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	line, err := b.out.ReadString('\n')
	if err != nil {
		tb.Fatalf("bench broker did not start: %v", err)
	}
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "ok ")
	if !ok {
		tb.Fatalf("bench broker: %s", line)
	}
	b.url = url
	return b
}

func (b *Broker) call(cmd string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, err := io.WriteString(b.in, cmd+"\n"); err != nil {
		b.tb.Fatalf("bench broker %q: %v", cmd, err)
	}
	line, err := b.out.ReadString('\n')
	if err != nil {
		b.tb.Fatalf("bench broker %q: %v", cmd, err)
	}
	line = strings.TrimSpace(line)
	rest, ok := strings.CutPrefix(line, "ok")
	if !ok {
		b.tb.Fatalf("bench broker %q: %s", cmd, line)
	}
	return strings.TrimSpace(rest)
}

func (b *Broker) callInt(cmd string) int {
	n, err := strconv.Atoi(b.call(cmd))
	if err != nil {
		b.tb.Fatalf("bench broker %q: %v", cmd, err)
	}
	return n
}

// PublishDirect has the child's broker send n 1 KiB direct messages on topic
// to its subscribers (solacetest's InjectDirect), and returns at once: no
// publisher runs in this process, so a benchmark of a direct consumer meters
// the consumer alone.
func (b *Broker) PublishDirect(topic string, n int) { b.call(fmt.Sprintf("direct %s %d", topic, n)) }

// SMFURL is the broker's tcp:// address.
func (b *Broker) SMFURL() string { return b.url }

// ClientProps are the Solace client properties of a plain client of the
// broker, for the raw side of a benchmark.
func (b *Broker) ClientProps() config.ServicePropertyMap {
	return config.ServicePropertyMap{
		config.TransportLayerPropertyHost:                b.url,
		config.ServicePropertyVPNName:                    "default",
		config.AuthenticationPropertySchemeBasicUserName: "default",
		config.AuthenticationPropertySchemeBasicPassword: "default",
	}
}

// PublishedCount counts messages received on topic.
func (b *Broker) PublishedCount(topic string) int { return b.callInt("count " + topic) }

// CreateQueue creates a queue in VPN default with subscriptions.
func (b *Broker) CreateQueue(name string, subs ...string) {
	b.call(strings.Join(append([]string{"queue", name}, subs...), " "))
}

// Spooled counts the messages a queue holds.
func (b *Broker) Spooled(queue string) int { return b.callInt("spooled " + queue) }

// State is solacetest's one-line delivery state of queue (Broker.FlowState),
// for the message of a round that stalled.
func (b *Broker) State(queue string) string { return b.call("state " + queue) }

// CPU is the CPU time the broker process used so far.
func (b *Broker) CPU() time.Duration {
	n, err := strconv.ParseInt(b.call("cpu"), 10, 64)
	if err != nil {
		b.tb.Fatalf("bench broker cpu: %v", err)
	}
	return time.Duration(n)
}

// PauseDelivery stops guaranteed delivery to consumers.
func (b *Broker) PauseDelivery() { b.call("pause") }

// ResumeDelivery resumes it.
func (b *Broker) ResumeDelivery() { b.call("resume") }

// CPU is the CPU time (user and system) the calling process used so far: the
// client side when the broker runs through Start.
func CPU() time.Duration {
	cpu, _ := usage()
	return cpu
}

// usage is the CPU time the calling process used so far and the context
// switches its threads made, voluntary (a thread blocked: a wake-up to pay
// later) and involuntary (preempted).
func usage() (time.Duration, int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), ru.Nvcsw + ru.Nivcsw
}

// Meter sums the cost of benchmark rounds of one side (plugin or raw client).
type Meter struct {
	Msgs int
	Wall time.Duration
	CPU  time.Duration
	// CtxSw counts the context switches of the process's threads (getrusage's
	// ru_nvcsw and ru_nivcsw): each hand-off that parks a thread and wakes
	// another costs about two, and their cost shows in CPU (the kernel's
	// share) without saying where it came from.
	CtxSw  int64
	Allocs uint64
	// Bytes is heap bytes allocated: with allocations, what sets how often
	// the collector runs, and so its share of the CPU.
	Bytes uint64
	// rounds holds each round's cost, for paired ratios.
	rounds []round
	// profiles holds each round's CPU profile when envProfileDir is set.
	profiles [][]byte
}

// envProfileDir, when set to a directory, makes every Round record a CPU
// profile of its own, written by Report as <dir>/<benchmark>-<side>-<i>.prof
// (side is the plugin's name or "raw"), so that the plugin's and the raw
// client's costs can be profiled apart and diffed (go tool pprof -diff_base
// takes several files of each side). Profiling adds its own cost, so the
// ratios of such a run are not the benchmark's figures.
const envProfileDir = "CONNECT_SOLACE_BENCH_PROFILE_DIR"

type round struct {
	n         int
	wall, cpu time.Duration
}

// Round runs f, which handles n messages, and adds its cost. Each round
// starts after a garbage collection, so that it does not pay for garbage
// made before it, and ends with one inside its CPU time, so that it pays for
// its own garbage.
func (m *Meter) Round(n int, f func()) {
	runtime.GC()
	var prof *bytes.Buffer
	if os.Getenv(envProfileDir) != "" {
		prof = new(bytes.Buffer)
		if pprof.StartCPUProfile(prof) != nil {
			prof = nil
		}
	}
	a0, b0 := heapAllocs()
	c0, s0 := usage()
	w0 := time.Now()
	f()
	wall := time.Since(w0)
	runtime.GC()
	c1, s1 := usage()
	cpu := c1 - c0
	m.CtxSw += s1 - s0
	if prof != nil {
		pprof.StopCPUProfile()
		m.profiles = append(m.profiles, prof.Bytes())
	}
	m.Wall += wall
	m.CPU += cpu
	a1, b1 := heapAllocs()
	m.Allocs += a1 - a0
	m.Bytes += b1 - b0
	m.Msgs += n
	m.rounds = append(m.rounds, round{n: n, wall: wall, cpu: cpu})
}

// Rate is messages per second.
func (m *Meter) Rate() float64 { return float64(m.Msgs) / m.Wall.Seconds() }

// CPUPerMsg is client CPU nanoseconds per message.
func (m *Meter) CPUPerMsg() float64 { return float64(m.CPU.Nanoseconds()) / float64(m.Msgs) }

// CtxSwPerMsg is context switches per message.
func (m *Meter) CtxSwPerMsg() float64 { return float64(m.CtxSw) / float64(m.Msgs) }

// AllocsPerMsg is heap allocations per message.
func (m *Meter) AllocsPerMsg() float64 { return float64(m.Allocs) / float64(m.Msgs) }

// BytesPerMsg is heap bytes allocated per message.
func (m *Meter) BytesPerMsg() float64 { return float64(m.Bytes) / float64(m.Msgs) }

// Report reports plugin against raw under the given name of the plugin side
// ("output" or "input"): rates, CPU, context switches, allocations and
// allocated bytes per message, and the ratios the performance goals are stated in.
//
// The ratios are medians over pairs of adjacent rounds (plugin round i
// against raw round i), so that a burst of load from other processes on the
// machine, which hits one round, does not decide the result; the rates and
// costs per message are totals.
func Report(b *testing.B, name string, plugin, raw *Meter) {
	reportSide(b, "raw", raw)
	reportSide(b, name, plugin)
	b.ReportMetric(ThroughputRatio(plugin, raw), "throughput_ratio")
	b.ReportMetric(CPURatio(plugin, raw), "cpu_ratio")
}

// ReportBaseline reports plugin against a second baseline, base, measured
// in the same interleaved rounds as the raw client of Report: base's costs
// per message under the name side, as Report gives each side's, and the
// ratios throughput_ratio_vs_<side> and cpu_ratio_vs_<side>, medians over
// adjacent round pairs as in Report.
func ReportBaseline(b *testing.B, side string, plugin, base *Meter) {
	reportSide(b, side, base)
	b.ReportMetric(ThroughputRatio(plugin, base), "throughput_ratio_vs_"+side)
	b.ReportMetric(CPURatio(plugin, base), "cpu_ratio_vs_"+side)
}

// reportSide writes m's round profiles as side and reports its rate, CPU,
// context switches, allocations and allocated bytes per message as
// <side>_msgs/s, <side>_cpu_ns/msg, <side>_ctxsw/msg, <side>_allocs/msg and
// <side>_B/msg.
func reportSide(b *testing.B, side string, m *Meter) {
	WriteProfiles(b, side, m)
	b.ReportMetric(m.Rate(), side+"_msgs/s")
	b.ReportMetric(m.CPUPerMsg(), side+"_cpu_ns/msg")
	b.ReportMetric(m.CtxSwPerMsg(), side+"_ctxsw/msg")
	b.ReportMetric(m.AllocsPerMsg(), side+"_allocs/msg")
	b.ReportMetric(m.BytesPerMsg(), side+"_B/msg")
}

// ThroughputRatio is the median, over the round pairs both meters have
// (plugin round i against raw round i), of plugin's rate over raw's.
func ThroughputRatio(plugin, raw *Meter) float64 {
	return pairedMedian(plugin, raw, func(p, r round) float64 {
		return (float64(p.n) / p.wall.Seconds()) / (float64(r.n) / r.wall.Seconds())
	})
}

// CPURatio is the median, over the round pairs both meters have, of
// plugin's CPU per message over raw's.
func CPURatio(plugin, raw *Meter) float64 {
	return pairedMedian(plugin, raw, func(p, r round) float64 {
		return (float64(p.cpu) / float64(p.n)) / (float64(r.cpu) / float64(r.n))
	})
}

// WriteProfiles writes m's round profiles into envProfileDir, named by the
// benchmark and side; Report does it for the plugin and raw meters.
func WriteProfiles(b *testing.B, side string, m *Meter) {
	dir := os.Getenv(envProfileDir)
	if dir == "" {
		return
	}
	base := strings.NewReplacer("/", "_", "=", "").Replace(b.Name())
	for i, p := range m.profiles {
		path := filepath.Join(dir, fmt.Sprintf("%s-%s-%d.prof", base, side, i))
		if err := os.WriteFile(path, p, 0o644); err != nil {
			b.Errorf("writing profile: %v", err)
		}
	}
}

// pairedMedian is the median of ratio over the rounds both meters have.
func pairedMedian(plugin, raw *Meter, ratio func(p, r round) float64) float64 {
	n := min(len(plugin.rounds), len(raw.rounds))
	if n == 0 {
		return math.NaN()
	}
	rs := make([]float64, n)
	for i := range n {
		rs[i] = ratio(plugin.rounds[i], raw.rounds[i])
	}
	slices.Sort(rs)
	if n%2 == 1 {
		return rs[n/2]
	}
	return (rs[n/2-1] + rs[n/2]) / 2
}

var allocSample = []metrics.Sample{{Name: "/gc/heap/allocs:objects"}, {Name: "/gc/heap/allocs:bytes"}}
var allocMu sync.Mutex

// heapAllocs returns the heap allocations so far, in objects and bytes.
func heapAllocs() (objects, bytes uint64) {
	allocMu.Lock()
	defer allocMu.Unlock()
	metrics.Read(allocSample)
	return allocSample[0].Value.Uint64(), allocSample[1].Value.Uint64()
}
