package devbroker

import (
	"cmp"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/connect-solace/connect-solace/solacetest"
)

func devbrokerCommand() *cli.Command {
	return &cli.Command{
		Name:  "devbroker",
		Usage: "Run a local Solace-compatible test broker (SMF + SEMPv2) for development and tests; NOT a production broker",
		Description: `Runs the solacetest broker: an in-memory broker that speaks enough of
Solace's SMF protocol for the Solace Go client (and so the solace input and
output) to connect, publish, subscribe, bind to queues and ack, plus a subset
of the SEMPv2 management API (queues, clients, VPN, client and ACL profiles,
replay logs, OAuth profiles). Besides plain SMF it can listen for TLS,
compressed and WebSocket clients (SMF, compressed and TLS also on further
addresses, --extra-listener), serve PubSub+'s health-check endpoints, and run a test
OAuth provider for OAuth logins (--oauth-addr): it serves a given key set, or
signs tokens with its own key, issues them to --oauth-client clients with the
client_credentials grant at /token (lifetime --oauth-token-ttl), and rotates
its key on POST /rotate-key. With --kerberos-keytab it verifies Kerberos logins
(GSS-API tickets) against the keytab. A web console (--console-addr, on
loopback by default) shows its VPNs, clients, rates, queues and messages and
publishes test messages, purges queues and applies faults. Messages live
in memory only and are lost when it stops. It is meant for development and
tests, never production.

Example:
  connect-solace devbroker --user app:secret --queue orders:orders/>,audit/orders/*`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "smf-addr", Value: "127.0.0.1:55555", Usage: "address for SMF (tcp://) clients"},
			&cli.StringFlag{Name: "semp-addr", Value: "127.0.0.1:8080", Usage: `address for the SEMPv2 HTTP API, "-" to disable`},
			&cli.StringFlag{Name: "console-addr", Value: defaultConsoleAddr, Usage: `address for the web console (open it in a browser: queues, clients, rates, browsing messages, publishing test messages, faults; it logs in as --semp-user), "-" to disable; loopback only unless you give another host; when the default port is taken the broker runs without it`},
			&cli.StringFlag{Name: "compressed-addr", Usage: "address for compressed SMF clients (PubSub+'s port 55003; clients set a compression level), none by default"},
			&cli.StringFlag{Name: "web-addr", Usage: "address for web transport (ws://, SMF over WebSocket) clients, none by default"},
			&cli.StringFlag{Name: "secure-web-addr", Usage: "address for web transport over TLS (wss://) clients; needs --tls-cert"},
			&cli.StringFlag{Name: "smf-tls-addr", Usage: "address for SMF over TLS (tcps://) clients; needs --tls-cert"},
			&cli.StringFlag{Name: "tls-cert", Usage: "PEM `FILE` with the TLS server certificate (and its key, unless --tls-key is given)"},
			&cli.StringFlag{Name: "tls-key", Usage: "PEM `FILE` with the TLS private key (default: the --tls-cert file)"},
			&cli.StringFlag{Name: "tls-max-version", Value: "1.3", Usage: `highest TLS version offered, "1.2" or "1.3" (older PubSub+ releases stop at 1.2)`},
			&cli.StringFlag{Name: "tls-key-passphrase-file", Usage: "`FILE` holding the passphrase of an encrypted TLS key"},
			&cli.StringFlag{Name: "health-addr", Usage: "address for the health-check HTTP listener (/health-check/direct-active, /health-check/guaranteed-active; PubSub+ uses port 5550), none by default"},
			&cli.GenericFlag{Name: "extra-listener", Value: &repeated{}, Usage: "also serve `TRANSPORT=ADDR`, TRANSPORT one of smf, compressed, smf-tls (needs --tls-cert); repeatable, e.g. smf=127.0.0.1:55556"},
			&cli.StringFlag{Name: "oauth-addr", Usage: "address for a test OAuth provider serving its key set at /jwks (for OAuth profiles' endpointJwks), --oauth-userinfo-file at /userinfo and, without --oauth-jwks-file, the client_credentials grant at /token and key rotation at POST /rotate-key (https with --tls-cert); none by default"},
			&cli.StringFlag{Name: "oauth-jwks-file", Usage: "JSON Web Key Set `FILE` the --oauth-addr provider serves (the public keys of the tokens clients log in with); without it the provider generates its own key"},
			&cli.StringFlag{Name: "kerberos-keytab", Usage: "keytab `FILE` (MIT format) with the keys of the broker's Kerberos service principal (e.g. solace/<host>@REALM), to accept Kerberos logins; a VPN must also enable them (SEMP authenticationKerberosEnabled)"},
			&cli.StringFlag{Name: "kerberos-principal", Usage: "the one service principal `NAME` (e.g. solace/broker.example.com) tickets must be for; default: any principal of --kerberos-keytab"},
			&cli.GenericFlag{Name: "oauth-client", Value: &repeated{}, Usage: "client `ID:SECRET` of the --oauth-addr provider's token endpoint (client_credentials grant), repeatable"},
			&cli.DurationFlag{Name: "oauth-token-ttl", Value: time.Hour, Usage: "lifetime of the tokens the --oauth-addr provider's token endpoint issues"},
			&cli.StringFlag{Name: "oauth-userinfo-file", Usage: "JSON `FILE` the --oauth-addr provider serves as userinfo (default {})"},
			&cli.DurationFlag{Name: "semp-monitor-delay", Usage: "hold each SEMP monitor request this long, like a real broker's management plane (Solace's Go client suite relies on it; e.g. 30ms)"},
			&cli.GenericFlag{Name: "user", Value: &repeated{}, Usage: "client login `NAME:PASSWORD`, repeatable (default: default:default)"},
			&cli.StringFlag{Name: "semp-user", Value: "admin:admin", Usage: "SEMP basic-auth `NAME:PASSWORD`"},
			&cli.GenericFlag{Name: "queue", Value: &repeated{}, Usage: "pre-create a durable queue `NAME[:topic,...]`, repeatable"},
			&cli.StringFlag{Name: "replay-log", Usage: "create a replay log `NAME` at start (like PubSub+, the broker has none unless configured; SEMP can create one)"},
			&cli.StringFlag{Name: "log-level", Value: "info", Usage: "debug shows every subscription and message"},
			&cli.StringFlag{Name: "data-dir", Usage: "keep queues, messages, publisher flows and configuration in `DIR`, so that they survive a restart or kill -9; in memory by default"},
			&cli.BoolFlag{Name: "standby", Usage: "with --data-dir: wait until the broker holding DIR stops, then take over its state (an HA mate; list both brokers' addresses in the clients' urls)"},
		},
		Action: runDevbroker,
	}
}

func runDevbroker(c *cli.Context) error {
	users := map[string]string{}
	userFlags := c.Generic("user").(*repeated).values
	if len(userFlags) == 0 {
		userFlags = []string{"default:default"}
	}
	for _, u := range userFlags {
		name, pass, ok := strings.Cut(u, ":")
		if !ok || name == "" {
			return fmt.Errorf("--user %q: want NAME:PASSWORD", u)
		}
		users[name] = pass
	}
	sempUser, sempPass, ok := strings.Cut(c.String("semp-user"), ":")
	if !ok || sempUser == "" {
		return fmt.Errorf("--semp-user: want NAME:PASSWORD")
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.String("log-level"))); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	dataDir := c.String("data-dir")
	if c.Bool("standby") && dataDir == "" {
		return errors.New("--standby needs --data-dir, the directory whose broker it stands by for")
	}
	kept := "in memory"
	if dataDir != "" {
		kept = "in " + dataDir
	}
	logger.Warn("devbroker is a test broker for development and tests; it keeps messages " + kept + " and is not a production Solace broker")

	tlsConf, err := devbrokerTLS(c)
	if err != nil {
		return err
	}
	oauthCfg, err := devbrokerOAuth(c, tlsConf)
	if err != nil {
		return err
	}
	var krb *solacetest.KerberosConfig
	if path := c.String("kerberos-keytab"); path != "" {
		kt, err := solacetest.LoadKerberosKeytab(path)
		if err != nil {
			return fmt.Errorf("--kerberos-keytab: %w", err)
		}
		krb = &solacetest.KerberosConfig{Keytab: kt, Principal: c.String("kerberos-principal")}
	} else if c.String("kerberos-principal") != "" {
		return errors.New("--kerberos-principal needs --kerberos-keytab, the keytab holding its keys")
	}
	var extra [][2]string
	for _, v := range c.Generic("extra-listener").(*repeated).values {
		transport, addr, ok := strings.Cut(v, "=")
		if !ok || transport == "" || addr == "" {
			return fmt.Errorf("--extra-listener %q: want TRANSPORT=ADDR, e.g. smf=127.0.0.1:55556", v)
		}
		extra = append(extra, [2]string{transport, addr})
	}
	consoleAddr, err := devbrokerConsoleAddr(c)
	if err != nil {
		return err
	}
	// A standby waits in Start: a signal must be able to end that wait.
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	b, err := solacetest.StartContext(ctx, solacetest.Config{
		DataDir:          dataDir,
		Standby:          c.Bool("standby"),
		CompressedAddr:   c.String("compressed-addr"),
		WebAddr:          c.String("web-addr"),
		SecureWebAddr:    c.String("secure-web-addr"),
		TLS:              tlsConf,
		TLSAddr:          c.String("smf-tls-addr"),
		Users:            users,
		SEMPUser:         sempUser,
		SEMPPassword:     sempPass,
		SMFAddr:          c.String("smf-addr"),
		SEMPAddr:         c.String("semp-addr"),
		HealthAddr:       healthAddr(c.String("health-addr")),
		ConsoleAddr:      consoleAddr,
		ConsoleOptional:  !c.IsSet("console-addr"),
		SEMPMonitorDelay: c.Duration("semp-monitor-delay"),
		NoReplayLog:      true,
		Logger:           logger,
	})
	if err != nil {
		return err
	}
	defer func() { _ = b.Close() }()
	if krb != nil {
		if err := b.EnableKerberos(*krb); err != nil {
			return fmt.Errorf("--kerberos-keytab: %w", err)
		}
	}
	for _, l := range extra {
		if _, err := b.ListenAlso(l[0], l[1]); err != nil {
			return fmt.Errorf("--extra-listener %s=%s: %w", l[0], l[1], err)
		}
	}
	oauthURL := "none"
	if oauthCfg != nil {
		oauth, err := solacetest.StartOAuthServer(*oauthCfg)
		if err != nil {
			return fmt.Errorf("--oauth-addr: %w", err)
		}
		defer func() { _ = oauth.Close() }()
		oauthURL = oauth.URL()
	}
	if name := c.String("replay-log"); name != "" {
		err := b.CreateReplayLog("default", solacetest.ReplayLog{Name: name, IngressEnabled: true, EgressEnabled: true})
		if err != nil && !(dataDir != "" && errors.Is(err, solacetest.ErrReplayLogExists)) {
			return fmt.Errorf("--replay-log: %w", err)
		}
	}
	for _, q := range c.Generic("queue").(*repeated).values {
		name, topics, _ := strings.Cut(q, ":")
		cfg := solacetest.QueueConfig{Name: name}
		if topics != "" {
			cfg.Subscriptions = strings.Split(topics, ",")
		}
		// With a data directory, the queue may be there from before.
		if err := b.CreateQueue("default", cfg); err != nil && !(dataDir != "" && errors.Is(err, solacetest.ErrQueueExists)) {
			return fmt.Errorf("--queue %q: %w", q, err)
		}
	}
	fmt.Fprintf(c.App.Writer, "devbroker ready: smf=%s smfs=%s compressed=%s web=%s secure_web=%s semp=%s health=%s oauth=%s console=%s (dev/test only)\n",
		b.SMFURL(), b.SMFSURL(), b.CompressedURL(), b.WebURL(), b.SecureWebURL(), b.SEMPURL(), b.HealthURL(), oauthURL, cmp.Or(b.ConsoleURL(), "none"))

	<-ctx.Done()
	logger.Info("shutting down")
	return nil
}

// devbrokerTLS builds the TLS listener's configuration from the flags, or
// nil without --smf-tls-addr.
func devbrokerTLS(c *cli.Context) (*tls.Config, error) {
	addr := c.String("smf-tls-addr") + c.String("secure-web-addr") + c.String("oauth-addr")
	certFile := c.String("tls-cert")
	switch {
	case addr == "" && certFile == "":
		return nil, nil
	case addr == "":
		return nil, errors.New("--tls-cert needs --smf-tls-addr, --secure-web-addr or --oauth-addr, an address to serve TLS on")
	case certFile == "" && c.String("smf-tls-addr")+c.String("secure-web-addr") == "":
		return nil, nil // a plain-http OAuth provider
	case certFile == "":
		return nil, errors.New("--smf-tls-addr and --secure-web-addr need --tls-cert, a PEM file with the server certificate")
	}
	passphrase := ""
	if f := c.String("tls-key-passphrase-file"); f != "" {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("--tls-key-passphrase-file: %w", err)
		}
		passphrase = strings.TrimRight(string(raw), "\r\n")
	}
	cert, err := solacetest.LoadTLSCertificate(certFile, c.String("tls-key"), passphrase)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert: %w", err)
	}
	maxVersion := map[string]uint16{"1.2": tls.VersionTLS12, "1.3": tls.VersionTLS13}[c.String("tls-max-version")]
	if maxVersion == 0 {
		return nil, fmt.Errorf("--tls-max-version %q: want 1.2 or 1.3", c.String("tls-max-version"))
	}
	return solacetest.ServerTLSConfig(cert, maxVersion), nil
}

// devbrokerOAuth reads the configuration of the test OAuth provider of
// --oauth-addr, or returns nil without it. It serves https with the broker's
// certificate when there is one.
func devbrokerOAuth(c *cli.Context, tlsConf *tls.Config) (*solacetest.OAuthServerConfig, error) {
	addr, jwksFile, userinfoFile := c.String("oauth-addr"), c.String("oauth-jwks-file"), c.String("oauth-userinfo-file")
	clients := c.Generic("oauth-client").(*repeated).values
	switch {
	case addr == "" && jwksFile+userinfoFile == "" && len(clients) == 0:
		return nil, nil
	case addr == "":
		return nil, errors.New("--oauth-jwks-file, --oauth-userinfo-file and --oauth-client need --oauth-addr, the address to serve them on")
	case jwksFile != "" && len(clients) > 0:
		return nil, errors.New("--oauth-client needs a provider that signs its tokens: leave --oauth-jwks-file out")
	}
	cfg := solacetest.OAuthServerConfig{Addr: addr, TLS: tlsConf, TokenTTL: c.Duration("oauth-token-ttl"),
		Clients: map[string]string{}}
	for _, v := range clients {
		id, secret, ok := strings.Cut(v, ":")
		if !ok || id == "" {
			return nil, fmt.Errorf("--oauth-client %q: want ID:SECRET", id)
		}
		cfg.Clients[id] = secret
	}
	var err error
	if jwksFile != "" {
		if cfg.JWKS, err = os.ReadFile(jwksFile); err != nil {
			return nil, fmt.Errorf("--oauth-jwks-file: %w", err)
		}
	}
	if userinfoFile != "" {
		if cfg.Userinfo, err = os.ReadFile(userinfoFile); err != nil {
			return nil, fmt.Errorf("--oauth-userinfo-file: %w", err)
		}
	}
	return &cfg, nil
}

// defaultConsoleAddr is where the console listens unless told otherwise: on
// loopback, next to SEMP's 8080.
const defaultConsoleAddr = "127.0.0.1:8081"

// devbrokerConsoleAddr is Config.ConsoleAddr from --console-addr: "" for
// "-"; a bare port listens on loopback. A console the user did not ask for
// is optional (Config.ConsoleOptional).
func devbrokerConsoleAddr(c *cli.Context) (string, error) {
	addr := c.String("console-addr")
	switch {
	case addr == "-":
		return "", nil
	case !strings.Contains(addr, ":"):
		addr = "127.0.0.1:" + addr
	case strings.HasPrefix(addr, ":"):
		addr = "127.0.0.1" + addr
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return "", fmt.Errorf("--console-addr %q: want HOST:PORT, a port, or - for none: %w", c.String("console-addr"), err)
	}
	return addr, nil
}

// healthAddr maps the flag's "-" (no listener) to Config's "".
func healthAddr(v string) string {
	if v == "-" {
		return ""
	}
	return v
}

// repeated is a repeatable string flag whose values may contain commas (queue
// subscriptions do), unlike cli.StringSliceFlag, which splits on them.
type repeated struct{ values []string }

func (r *repeated) Set(v string) error {
	r.values = append(r.values, v)
	return nil
}

func (r *repeated) String() string { return strings.Join(r.values, " ") }
