package solacetest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/connect-solace/connect-solace/solacetest/internal/store"
)

// Config configures a Broker. The zero value is a usable broker on ephemeral
// loopback ports with user default/default in VPN "default".
type Config struct {
	Users                  map[string]string // username -> password; nil means {"default":"default"}
	VPNs                   []string          // nil means {"default"}; users may log in to any listed VPN
	SEMPUser, SEMPPassword string            // "" means admin/admin
	SMFAddr                string            // "" means "127.0.0.1:0"
	SEMPAddr               string            // "" means "127.0.0.1:0"; "-" disables SEMP
	TLS                    *tls.Config       // non-nil: also listen for tcps:// on TLSAddr
	TLSAddr                string            // "" means 127.0.0.1:0
	// CompressedAddr is the compressed SMF listener's address (PubSub+
	// serves it on port 55003; clients connect with a compression level
	// set); "" means none.
	CompressedAddr string
	// WebAddr and SecureWebAddr are the web transport's addresses: SMF
	// over WebSocket (ws://, PubSub+'s port 8008) and over WebSocket on
	// TLS (wss://, port 1443, needs TLS); "" means none.
	WebAddr, SecureWebAddr string
	// NoReplayLog starts every VPN without a replay log, as a fresh PubSub+
	// does (the devbroker's default); create one with CreateReplayLog or
	// SEMP. By default each VPN starts with an enabled replay log named
	// "default", so that tests can replay from the first message.
	NoReplayLog bool
	// HealthAddr is the health-check HTTP listener's address (PubSub+
	// serves it on port 5550); "" means none.
	HealthAddr string
	// ConsoleAddr is the web console's address (console.go), e.g.
	// "127.0.0.1:0"; "" means none. It logs in as the SEMP user.
	ConsoleAddr string
	// ConsoleOptional starts the broker without the console, with a
	// warning, when ConsoleAddr cannot be listened on: a console nobody
	// asked for (devbroker's default address, taken by a second broker on
	// the machine) must not keep the broker from starting.
	ConsoleOptional bool
	// SEMPMonitorDelay holds every SEMP monitor request this long before
	// it is answered, like a real broker's management plane, which takes
	// tens of milliseconds. Some of Solace's own suite's specs race on
	// that (a request's reply timeout against a termination grace period
	// of the same length, started after a SEMP read). 0 answers at once.
	SEMPMonitorDelay time.Duration
	RouterName       string // "" means "solacetest"
	// DataDir keeps the broker's state in this directory (persist.go): it
	// survives a restart, and a crash of the process loses nothing a
	// publisher got an ack for. "" keeps everything in memory.
	DataDir string
	// Standby (with DataDir) waits for the directory's lock, held by the
	// active broker, before recovering and listening: an HA mate that
	// takes over when the active one dies.
	Standby bool
	// dataSegmentLimit overrides the log's segment size, for tests.
	dataSegmentLimit int64
	Logger           *slog.Logger // nil means discard
}

// Broker is a running test broker. All of its methods are safe for concurrent
// use.
type Broker struct {
	cfg Config
	log *slog.Logger

	smfLn, tlsLn, sempLn, healthLn, compLn net.Listener
	webLn, webTLSLn, consoleLn             net.Listener
	sempSrv, healthSrv, consoleSrv         *http.Server

	wg        sync.WaitGroup
	done      chan struct{}
	closeOnce sync.Once
	closeErr  error

	// mu guards everything below and the broker-side state of every
	// connection, queue and flow. One lock keeps the protocol logic simple;
	// network writes happen outside it (see conn.send).
	mu         sync.Mutex
	vpns       map[string]*vpnState
	conns      map[*conn]struct{}
	nextFlow   uint32 // flow and publisher ids
	nextMsgID  uint64 // delivery message ids, broker-wide (notes §7)
	nextSpool  uint64 // spool sequence numbers
	nextStored uint64 // message ids (storedMsg.id)
	spoolerID  uint64 // the spooler's unique id, part of replication group message ids
	published  map[string]int
	keepalives int // keepalives answered, for tests
	faults     faultState
	// certAuthorities are the trusted client certificate authorities'
	// PEM by name (certauth.go).
	certAuthorities map[string]string
	// oauth is OAuth login's configuration and key cache (oauth.go).
	oauth *oauthState
	// krb is Kerberos login's service side (kerberos.go); nil: none.
	krb *KerberosConfig
	// st keeps state in Config.DataDir (persist.go); nil without one. It
	// is set before the listeners open and never changes.
	st     *persister
	damage []store.Damage
}

// vpnState is one message VPN.
type vpnState struct {
	name        string
	queues      map[string]*queue
	pubFlows    map[string]*pubFlow // by flow name
	clients     map[string]*conn    // live sessions by client name
	cfg         VPNConfig
	profiles    map[string]*ClientProfile
	acls        map[string]*ACLProfile
	usernames   map[string]ClientUsername
	shareRR     map[string]int // shared subscriptions' round-robin positions
	destScratch []*queue       // subscribedQueues' result, reused
	replayCfg   *ReplayLog     // nil: no replay log (replay.go)
	replay      []*storedMsg   // guaranteed messages, oldest first, from replayHead on, for replay
	replayHead  int
	replayBytes int
	st          *persister // the broker's, for the spool hooks
}

// Start starts a broker and returns once its listeners are open.
func Start(cfg Config) (*Broker, error) { return StartContext(context.Background(), cfg) }

// StartContext is Start; a standby (Config.Standby) waits for its data
// directory until ctx ends.
func StartContext(ctx context.Context, cfg Config) (*Broker, error) {
	if cfg.Users == nil {
		cfg.Users = map[string]string{"default": "default"}
	}
	if cfg.VPNs == nil {
		cfg.VPNs = []string{"default"}
	}
	if cfg.SEMPUser == "" {
		cfg.SEMPUser, cfg.SEMPPassword = "admin", "admin"
	}
	if cfg.SMFAddr == "" {
		cfg.SMFAddr = "127.0.0.1:0"
	}
	if cfg.SEMPAddr == "" {
		cfg.SEMPAddr = "127.0.0.1:0"
	}
	if cfg.TLSAddr == "" {
		cfg.TLSAddr = "127.0.0.1:0"
	}
	if cfg.RouterName == "" {
		cfg.RouterName = "solacetest"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	b := &Broker{
		cfg:             cfg,
		log:             cfg.Logger,
		done:            make(chan struct{}),
		vpns:            map[string]*vpnState{},
		conns:           map[*conn]struct{}{},
		nextFlow:        100,
		published:       map[string]int{},
		certAuthorities: map[string]string{},
		spoolerID:       uint64(time.Now().UnixNano()) & 0x0000ffffffffffff,
	}
	for _, v := range cfg.VPNs {
		vs := &vpnState{name: v, cfg: defaultVPNConfig(v),
			profiles:  map[string]*ClientProfile{defaultClientProfile: defaultClientProfileConfig()},
			acls:      map[string]*ACLProfile{defaultACLProfile: newACLProfile(defaultACLProfile)},
			usernames: map[string]ClientUsername{}, queues: map[string]*queue{}, pubFlows: map[string]*pubFlow{}, clients: map[string]*conn{}}
		if !cfg.NoReplayLog {
			vs.replayCfg = &ReplayLog{Name: "default", IngressEnabled: true, EgressEnabled: true}
		}
		b.vpns[v] = vs
	}
	if cfg.DataDir != "" {
		if err := b.openPersister(ctx); err != nil {
			return nil, err
		}
		// Delivery ids must grow across restarts: a client that re-binds
		// drops a delivery whose id is not above the last it received.
		b.nextMsgID = uint64(time.Now().UnixMicro())
	}
	if err := b.listen(); err != nil {
		_ = b.st.close()
		for _, ln := range []net.Listener{b.smfLn, b.tlsLn, b.sempLn, b.healthLn, b.compLn, b.webLn, b.webTLSLn, b.consoleLn} {
			if ln != nil {
				_ = ln.Close()
			}
		}
		return nil, err
	}
	if b.sempLn != nil {
		b.sempSrv = &http.Server{
			Handler:           sempHandler(b, cfg.SEMPUser, cfg.SEMPPassword, b.log),
			ReadHeaderTimeout: 10 * time.Second,
		}
		b.serveHTTP(b.sempSrv, b.sempLn)
	}
	if b.healthLn != nil {
		b.healthSrv = &http.Server{Handler: healthHandler(b), ReadHeaderTimeout: 10 * time.Second}
		b.serveHTTP(b.healthSrv, b.healthLn)
	}
	if b.consoleLn != nil {
		b.consoleSrv = &http.Server{Handler: newConsoleHandler(b, cfg.SEMPUser, cfg.SEMPPassword), ReadHeaderTimeout: 10 * time.Second}
		b.serveHTTP(b.consoleSrv, b.consoleLn)
	}
	b.wg.Add(2)
	go b.acceptLoop(b.smfLn)
	go b.janitor()
	for _, ln := range []net.Listener{b.compLn, b.webLn, b.webTLSLn} {
		if ln != nil {
			b.wg.Add(1)
			go b.acceptLoop(ln)
		}
	}
	if b.tlsLn != nil {
		b.wg.Add(1)
		go b.acceptLoop(b.tlsLn)
	}
	b.log.Info("solacetest broker started (for development and tests only, not a production broker)",
		"smf", b.SMFURL(), "smfs", b.SMFSURL(), "semp", b.SEMPURL(), "health", b.HealthURL(),
		"compressed", b.CompressedURL(), "web", b.WebURL(), "secure_web", b.SecureWebURL(), "console", b.ConsoleURL())
	return b, nil
}

// listen opens the configured listeners; the caller closes them on error.
func (b *Broker) listen() error {
	cfg := b.cfg
	var err error
	if b.smfLn, err = net.Listen("tcp", cfg.SMFAddr); err != nil {
		return fmt.Errorf("listening for SMF on %s: %w", cfg.SMFAddr, err)
	}
	if cfg.TLS != nil {
		if b.tlsLn, err = tls.Listen("tcp", cfg.TLSAddr, cfg.TLS); err != nil {
			return fmt.Errorf("listening for SMF over TLS on %s: %w", cfg.TLSAddr, err)
		}
	}
	if cfg.SEMPAddr != "-" {
		if b.sempLn, err = net.Listen("tcp", cfg.SEMPAddr); err != nil {
			return fmt.Errorf("listening for SEMP on %s: %w", cfg.SEMPAddr, err)
		}
	}
	if cfg.CompressedAddr != "" {
		ln, err := net.Listen("tcp", cfg.CompressedAddr)
		if err != nil {
			return fmt.Errorf("listening for compressed SMF on %s: %w", cfg.CompressedAddr, err)
		}
		b.compLn = compressedListener{ln}
	}
	if cfg.WebAddr != "" {
		ln, err := listenWeb(cfg.WebAddr, nil, b.log)
		if err != nil {
			return fmt.Errorf("listening for web (ws://) clients on %s: %w", cfg.WebAddr, err)
		}
		b.webLn = ln
	}
	if cfg.SecureWebAddr != "" {
		if cfg.TLS == nil {
			return fmt.Errorf("SecureWebAddr %s needs Config.TLS", cfg.SecureWebAddr)
		}
		ln, err := listenWeb(cfg.SecureWebAddr, cfg.TLS, b.log)
		if err != nil {
			return fmt.Errorf("listening for web (wss://) clients on %s: %w", cfg.SecureWebAddr, err)
		}
		b.webTLSLn = ln
	}
	if cfg.HealthAddr != "" {
		if b.healthLn, err = net.Listen("tcp", cfg.HealthAddr); err != nil {
			return fmt.Errorf("listening for health checks on %s: %w", cfg.HealthAddr, err)
		}
	}
	if cfg.ConsoleAddr != "" {
		if b.consoleLn, err = net.Listen("tcp", cfg.ConsoleAddr); err != nil {
			if !cfg.ConsoleOptional {
				return fmt.Errorf("listening for the web console on %s: %w", cfg.ConsoleAddr, err)
			}
			b.log.Warn("web console not started: its address is taken", "addr", cfg.ConsoleAddr, "error", err)
		}
	}
	return nil
}

func (b *Broker) serveHTTP(srv *http.Server, ln net.Listener) {
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		_ = srv.Serve(ln)
	}()
}

// listenerURL is scheme://ln's address, or "" when ln is nil (a listener not
// configured).
func listenerURL(scheme string, ln net.Listener) string {
	if ln == nil {
		return ""
	}
	return scheme + "://" + ln.Addr().String()
}

// SMFURL is the plain SMF address, "tcp://127.0.0.1:PORT".
func (b *Broker) SMFURL() string { return "tcp://" + b.smfLn.Addr().String() }

// SMFSURL is the TLS SMF address, "tcps://127.0.0.1:PORT", or "" without TLS.
func (b *Broker) SMFSURL() string { return listenerURL("tcps", b.tlsLn) }

// CompressedURL is the compressed SMF address, "tcp://127.0.0.1:PORT", or ""
// without a compressed listener. Clients must enable message compression to
// use it.
func (b *Broker) CompressedURL() string { return listenerURL("tcp", b.compLn) }

// WebURL is the web transport's address, "ws://127.0.0.1:PORT", or "".
func (b *Broker) WebURL() string { return listenerURL("ws", b.webLn) }

// SecureWebURL is the web transport's TLS address, "wss://127.0.0.1:PORT", or
// "".
func (b *Broker) SecureWebURL() string { return listenerURL("wss", b.webTLSLn) }

// SEMPURL is the SEMP base URL, "http://127.0.0.1:PORT", or "" when disabled.
func (b *Broker) SEMPURL() string { return listenerURL("http", b.sempLn) }

// ConsoleURL is the web console's URL, "http://127.0.0.1:PORT", or "" without
// Config.ConsoleAddr.
func (b *Broker) ConsoleURL() string { return listenerURL("http", b.consoleLn) }

// Close closes the listeners and every client connection and waits for all
// of the broker's goroutines to end.
func (b *Broker) Close() error {
	b.closeOnce.Do(func() {
		close(b.done)
		var errs []error
		errs = append(errs, ignoreClosed(b.smfLn.Close()))
		if b.tlsLn != nil {
			errs = append(errs, ignoreClosed(b.tlsLn.Close()))
		}
		for _, ln := range []net.Listener{b.compLn, b.webLn, b.webTLSLn} {
			if ln != nil {
				errs = append(errs, ignoreClosed(ln.Close()))
			}
		}
		for _, srv := range []*http.Server{b.sempSrv, b.healthSrv, b.consoleSrv} {
			if srv != nil {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				errs = append(errs, srv.Shutdown(ctx))
				cancel()
			}
		}
		b.mu.Lock()
		for c := range b.conns {
			c.close()
		}
		b.mu.Unlock()
		b.wg.Wait()
		errs = append(errs, b.st.close())
		b.closeErr = errors.Join(errs...)
		b.log.Info("solacetest broker stopped")
	})
	return b.closeErr
}

func ignoreClosed(err error) error {
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

func (b *Broker) acceptLoop(ln net.Listener) {
	defer b.wg.Done()
	for {
		nc, err := ln.Accept()
		if err != nil {
			select {
			case <-b.done:
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			b.log.Warn("accepting SMF connection", "error", err)
			time.Sleep(10 * time.Millisecond)
			continue
		}
		c := newConn(b, nc)
		b.mu.Lock()
		select {
		case <-b.done:
			b.mu.Unlock()
			_ = nc.Close()
			return
		default:
		}
		b.conns[c] = struct{}{}
		b.wg.Add(2)
		b.mu.Unlock()
		go c.writeLoop()
		go c.readLoop()
	}
}

// janitor expires messages whose TTL has passed and deletes temporary queues
// whose owner has been gone for tempQueueGrace.
func (b *Broker) janitor() {
	defer b.wg.Done()
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-b.done:
			return
		case now := <-t.C:
			b.mu.Lock()
			b.expireAndReap(now)
			b.st.tick(now)
			b.mu.Unlock()
		}
	}
}

// HasVPN reports whether the broker serves the message VPN.
func (b *Broker) HasVPN(vpn string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.vpns[vpn]
	return ok
}

// inVPN runs fn on vpn's state with b.mu held: the admin API's calls on one
// VPN, refused with ErrUnknownVPN when there is no such VPN.
func inVPN[T any](b *Broker, vpn string, fn func(v *vpnState) (T, error)) (T, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, err := b.vpnLocked(vpn)
	if err != nil {
		var zero T
		return zero, err
	}
	return fn(v)
}

// changeInVPN is inVPN for a call that returns only an error.
func changeInVPN(b *Broker, vpn string, fn func(v *vpnState) error) error {
	_, err := inVPN(b, vpn, func(v *vpnState) (struct{}, error) { return struct{}{}, fn(v) })
	return err
}

// onNamed runs fn on the object name in one of vpn's maps, the one of
// picks, with b.mu held, refused with unknown (or ErrUnknownVPN) when there
// is no such object.
func onNamed[V comparable, T any](b *Broker, vpn, name string, of func(*vpnState) map[string]V, unknown error, fn func(V) (T, error)) (T, error) {
	return inVPN(b, vpn, func(v *vpnState) (T, error) {
		o, err := namedIn(of(v), name, unknown, vpn)
		if err != nil {
			var zero T
			return zero, err
		}
		return fn(o)
	})
}

// changeNamed is onNamed for a call that returns only an error.
func changeNamed[V comparable](b *Broker, vpn, name string, of func(*vpnState) map[string]V, unknown error, fn func(V) error) error {
	_, err := onNamed(b, vpn, name, of, unknown, func(o V) (struct{}, error) { return struct{}{}, fn(o) })
	return err
}

// The maps onNamed picks from.
func queuesOf(v *vpnState) map[string]*queue                 { return v.queues }
func aclsOf(v *vpnState) map[string]*ACLProfile              { return v.acls }
func clientProfilesOf(v *vpnState) map[string]*ClientProfile { return v.profiles }

// onQueue runs fn on vpn's queue name with b.mu held (onNamed).
func onQueue[T any](b *Broker, vpn, name string, fn func(q *queue) (T, error)) (T, error) {
	return onNamed(b, vpn, name, queuesOf, ErrUnknownQueue, fn)
}

// changeQueue is onQueue for a call that returns only an error.
func changeQueue(b *Broker, vpn, name string, fn func(q *queue) error) error {
	return changeNamed(b, vpn, name, queuesOf, ErrUnknownQueue, fn)
}

// The admin API keeps each kind of object in a map by name. namedIn,
// addNamed and deleteNamed find, add and delete one, refusing a name that
// is unknown or already taken with the kind's error, which names the VPN
// when vpn is not "" (broker-wide kinds pass "").
func namedIn[V comparable](m map[string]V, name string, unknown error, vpn string) (V, error) {
	v, ok := m[name]
	var zero V
	if !ok || v == zero {
		return zero, errUnknownNamed(unknown, name, vpn)
	}
	return v, nil
}

func addNamed[V any](m map[string]V, name string, v V, exists error, vpn string) error {
	if _, ok := m[name]; ok {
		if vpn == "" {
			return fmt.Errorf("%w: %q", exists, name)
		}
		return fmt.Errorf("%w: %q in VPN %q", exists, name, vpn)
	}
	m[name] = v
	return nil
}

func deleteNamed[V any](m map[string]V, name string, unknown error, vpn string) error {
	if _, ok := m[name]; !ok {
		return errUnknownNamed(unknown, name, vpn)
	}
	delete(m, name)
	return nil
}

func errUnknownNamed(unknown error, name, vpn string) error {
	if vpn == "" {
		return fmt.Errorf("%w %q", unknown, name)
	}
	return fmt.Errorf("%w %q in VPN %q", unknown, name, vpn)
}

// sortedValues lists m's values, each through conv, sorted by name (m's
// keys).
func sortedValues[V, T any](m map[string]V, conv func(V) T) []T {
	out := make([]T, 0, len(m))
	for _, name := range slices.Sorted(maps.Keys(m)) {
		out = append(out, conv(m[name]))
	}
	return out
}

// same and deref are sortedValues' conversions for maps of values and of
// pointers.
func same[T any](v T) T   { return v }
func deref[T any](p *T) T { return *p }

func (b *Broker) vpnLocked(vpn string) (*vpnState, error) {
	v, ok := b.vpns[vpn]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownVPN, vpn)
	}
	return v, nil
}

func (b *Broker) queueLocked(vpn, name string) (*queue, error) {
	v, err := b.vpnLocked(vpn)
	if err != nil {
		return nil, err
	}
	return namedIn(v.queues, name, ErrUnknownQueue, vpn)
}

// CreateQueue creates a durable queue. An AccessType of "" means exclusive.
// When both IngressEnabled and EgressEnabled are false (the zero value), both
// are switched on, as SEMP's defaults do; disable them with UpdateQueue.
func (b *Broker) CreateQueue(vpn string, cfg QueueConfig) error {
	if cfg.Name == "" {
		return errors.New("creating queue: empty name")
	}
	if cfg.AccessType == "" {
		cfg.AccessType = AccessExclusive
	}
	if cfg.AccessType != AccessExclusive && cfg.AccessType != AccessNonExclusive {
		return fmt.Errorf("creating queue %q: unknown access type %q", cfg.Name, cfg.AccessType)
	}
	if !cfg.IngressEnabled && !cfg.EgressEnabled {
		cfg.IngressEnabled, cfg.EgressEnabled = true, true
	}
	cfg.Durable = true
	b.mu.Lock()
	defer b.mu.Unlock()
	v, err := b.vpnLocked(vpn)
	if err != nil {
		return err
	}
	if _, ok := v.queues[cfg.Name]; ok {
		return fmt.Errorf("%w: %q in VPN %q", ErrQueueExists, cfg.Name, vpn)
	}
	cfg.Subscriptions = dedupe(cfg.Subscriptions)
	v.queues[cfg.Name] = newQueue(v, cfg)
	b.st.configChanged()
	b.log.Info("queue created", "vpn", vpn, "queue", cfg.Name, "access", cfg.AccessType, "subscriptions", cfg.Subscriptions)
	return nil
}

func dedupe(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// UpdateQueue changes a queue's configuration in place. The name cannot be
// changed. Enabling egress or changing the access type restarts delivery.
func (b *Broker) UpdateQueue(vpn, name string, update func(*QueueConfig)) error {
	return changeQueue(b, vpn, name, func(q *queue) error {
		cfg := q.cfg
		cfg.Subscriptions = slices.Clone(cfg.Subscriptions)
		update(&cfg)
		cfg.Name = name
		if cfg.AccessType == "" {
			cfg.AccessType = AccessExclusive
		}
		cfg.Subscriptions = dedupe(cfg.Subscriptions)
		wasEgress := q.cfg.EgressEnabled
		q.cfg = cfg
		b.st.configChanged()
		if !cfg.EgressEnabled {
			// Consumer flows stay bound but become inactive until egress is
			// enabled again, as on a real broker.
			if wasEgress {
				b.log.Info("queue egress disabled", "vpn", vpn, "queue", name)
			}
			b.passivateFlows(q)
			return nil
		}
		b.repartition(q)
		b.dispatch(q)
		return nil
	})
}

// DeleteQueue deletes a queue and its messages. Bound consumers stop
// receiving.
func (b *Broker) DeleteQueue(vpn, name string) error {
	return changeQueue(b, vpn, name, func(q *queue) error {
		b.deleteQueueLocked(q)
		return nil
	})
}

// Queue returns a queue's configuration and live statistics.
func (b *Broker) Queue(vpn, name string) (QueueConfig, QueueStats, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	q, err := b.queueLocked(vpn, name)
	if err != nil {
		return QueueConfig{}, QueueStats{}, err
	}
	return q.config(), q.stats(), nil
}

// Queues lists a VPN's queues, temporary ones included, sorted by name.
func (b *Broker) Queues(vpn string) ([]QueueConfig, error) {
	return inVPN(b, vpn, func(v *vpnState) ([]QueueConfig, error) {
		return sortedValues(v.queues, (*queue).config), nil
	})
}

// AddQueueSubscription adds a topic subscription to a queue.
func (b *Broker) AddQueueSubscription(vpn, queueName, topic string) error {
	return changeQueue(b, vpn, queueName, func(q *queue) error {
		if topic == "" {
			return fmt.Errorf("adding subscription to queue %q: empty topic", queueName)
		}
		if slices.Contains(q.cfg.Subscriptions, topic) {
			return fmt.Errorf("%w: %q on queue %q", ErrSubscriptionExists, topic, queueName)
		}
		q.cfg.Subscriptions = append(q.cfg.Subscriptions, topic)
		b.st.configChanged()
		return nil
	})
}

// RemoveQueueSubscription removes a topic subscription from a queue.
func (b *Broker) RemoveQueueSubscription(vpn, queueName, topic string) error {
	return changeQueue(b, vpn, queueName, func(q *queue) error {
		i := slices.Index(q.cfg.Subscriptions, topic)
		if i < 0 {
			return fmt.Errorf("%w: %q on queue %q", ErrUnknownSubscription, topic, queueName)
		}
		q.cfg.Subscriptions = slices.Delete(q.cfg.Subscriptions, i, i+1)
		delete(q.clientSubs, topic)
		b.st.configChanged()
		return nil
	})
}

// QueueMessages returns the application payloads of the messages the queue
// holds, delivered or not, in spool order. String payloads come back as their
// UTF-8 bytes (without the SDT wrapper the client adds).
func (b *Broker) QueueMessages(vpn, name string) ([][]byte, error) {
	return mapQueueMsgs(b, vpn, name, func(qm *qmsg) []byte { return slices.Clone(qm.m.appPayload()) })
}

// PublishedCount counts messages received from publishers on topic, direct
// and guaranteed, not counting duplicates resent after a reconnect.
func (b *Broker) PublishedCount(topic string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.published[topic]
}

// ClientCount counts logged-in client sessions.
func (b *Broker) ClientCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, v := range b.vpns {
		n += len(v.clients)
	}
	return n
}

// newQueue builds an empty queue.
func newQueue(v *vpnState, cfg QueueConfig) *queue {
	return &queue{vpn: v, cfg: cfg}
}

// ---- the health-check listener ----
//
// The plain-HTTP endpoint that PubSub+ serves (by default on port 5550) for
// load balancers and orchestrators to ask whether the broker is ready for
// direct and for guaranteed messaging. Solace's own client test suite waits
// on it before it starts.

// Health-check paths, as PubSub+ serves them.
const (
	healthDirectActive     = "/health-check/direct-active"
	healthGuaranteedActive = "/health-check/guaranteed-active"
)

// healthHandler answers 200 on both paths while the broker accepts logins and
// 503 while it refuses them (RefuseLogins), as a standby broker does. Every
// other path is 404. Like PubSub+'s, it needs no authentication.
func healthHandler(b *Broker) http.Handler {
	mux := http.NewServeMux()
	ready := func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		refusing := b.faults.refusingLogins()
		b.mu.Unlock()
		w.Header().Set("Cache-Control", "no-store")
		if refusing {
			http.Error(w, "Service Unavailable", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}
	mux.HandleFunc("GET "+healthDirectActive, ready)
	mux.HandleFunc("GET "+healthGuaranteedActive, ready)
	return mux
}

// HealthURL is the health-check listener's base URL, "http://127.0.0.1:PORT",
// or "" when Config.HealthAddr was empty.
func (b *Broker) HealthURL() string { return listenerURL("http", b.healthLn) }

// ---- further listeners ----
//
// A broker serves one of its SMF transports on further addresses, as a real
// broker is reachable on several (a test network's fixed ports, say, beside
// the ephemeral ones the tests were given).

// Transports ListenAlso can serve.
const (
	TransportSMF        = "smf"        // plain SMF (tcp://)
	TransportCompressed = "compressed" // compressed SMF
	TransportSMFTLS     = "smf-tls"    // SMF over TLS (tcps://); needs Config.TLS
)

// ListenAlso serves transport on addr as well, until the broker closes, and
// returns the address it listens on.
func (b *Broker) ListenAlso(transport, addr string) (net.Addr, error) {
	if transport != TransportSMF && transport != TransportCompressed && transport != TransportSMFTLS {
		return nil, fmt.Errorf("listening on %s: unknown transport %q (want %q, %q or %q)", addr, transport,
			TransportSMF, TransportCompressed, TransportSMFTLS)
	}
	if transport == TransportSMFTLS && b.cfg.TLS == nil {
		return nil, errors.New("listening for SMF over TLS on " + addr + ": the broker has no TLS certificate (Config.TLS)")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening for %s on %s: %w", transport, addr, err)
	}
	switch transport {
	case TransportCompressed:
		ln = compressedListener{ln}
	case TransportSMFTLS:
		ln = tls.NewListener(ln, b.cfg.TLS)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-b.done:
		_ = ln.Close()
		return nil, errors.New("listening on " + addr + ": the broker is closed")
	default:
	}
	b.wg.Add(2)
	go b.acceptLoop(ln)
	go func() {
		defer b.wg.Done()
		<-b.done
		_ = ln.Close()
	}()
	return ln.Addr(), nil
}
