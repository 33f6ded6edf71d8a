package input

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/testkit/componenttest"
	_ "github.com/connect-solace/connect-solace/output"
	"github.com/connect-solace/connect-solace/solacetest"
	"github.com/connect-solace/connect-solace/solacetest/faultproxy"
)

// TestSolaceOAuthThroughExpiryResetsAndRotation runs an output and an input
// (whose topic queue is provisioned over SEMP with a Bearer token) with
// OAuth tokens that live 3 s, for a token file kept fresh by a sidecar and
// for the client_credentials grant. The network is reset after the first
// token expired, and again after the provider rotated its signing key; the
// pipeline carries on through the client's own reconnects and nothing is
// lost.
func TestSolaceOAuthThroughExpiryResetsAndRotation(t *testing.T) {
	const ttl = 3 * time.Second
	for _, source := range []string{"access_token_file", "token_url"} {
		t.Run(source, func(t *testing.T) {
			tlsConf, trustDir := solacetest.SelfSignedTLS(t)
			b := solacetest.NewTestBroker(t, solacetest.Config{TLS: tlsConf})
			idp := solacetest.NewOAuthServer(t, solacetest.OAuthServerConfig{
				Clients: map[string]string{"pipeline": "s3cret"}, TokenTTL: ttl})
			require.NoError(t, b.TrustOAuthServer("default", idp, "solace"))
			proxy := func() *faultproxy.Proxy {
				p, err := faultproxy.New(strings.TrimPrefix(b.SMFSURL(), "tcps://"))
				require.NoError(t, err)
				t.Cleanup(func() { _ = p.Close() })
				return p
			}
			pIn, pOut := proxy(), proxy()

			auth := fmt.Sprintf("{ token_url: %s, client_id: pipeline, client_secret: s3cret, audience: solace }", idp.TokenURL())
			if source == "access_token_file" {
				auth = "{ access_token_file: " + tokenSidecar(t, idp, ttl) + " }"
			}
			conn := func(p *faultproxy.Proxy) string {
				return fmt.Sprintf(`  urls: [ tcps://%s ]
  tls: { enabled: true, trust_store_path: %s }
  auth: { scheme: oauth2, oauth2: %s }
  reconnect_attempts: -1
  reconnect_interval: 100ms
  connect_timeout: 5s
`, p.Addr(), trustDir, auth)
			}
			const n = 500 // 15 s of publishing: room for both resets under load
			logs := &logLines{}
			out := service.NewStreamBuilder()
			out.SetLogger(slog.New(logs))
			require.NoError(t, out.AddInputYAML(fmt.Sprintf(`generate:
  count: %d
  interval: 30ms
  mapping: 'root = "m-%%d".format(count("oauth-%s"))'
`, n, source)))
			require.NoError(t, out.AddOutputYAML("solace:\n"+conn(pOut)+"  topic: orders/eu\n"))

			in := service.NewStreamBuilder()
			in.SetLogger(slog.New(logs))
			require.NoError(t, in.AddInputYAML("solace:\n"+conn(pIn)+fmt.Sprintf(`  topic: orders/>
  semp: { url: %s, oauth2: true }
`, b.SEMPURL())))
			got := newDistinctBodies(n)
			require.NoError(t, in.AddConsumerFunc(got.consume))
			componenttest.RunStream(t, t.Context(), in, 10*time.Second)
			// The input provisions its queue before it consumes: publish
			// only once it did, so that no message misses the queue.
			require.Eventually(t, func() bool {
				_, _, err := b.Queue("default", QueueNameForTopic("orders/>"))
				return err == nil
			}, 10*time.Second, 20*time.Millisecond)
			componenttest.RunStream(t, t.Context(), out, 10*time.Second)

			resetBoth := func(what string) {
				t.Helper()
				before := got.count()
				pIn.Reset()
				pOut.Reset()
				require.Eventually(t, func() bool { return got.count() > before+10 }, 15*time.Second, 20*time.Millisecond,
					"the pipeline did not carry on %s", what)
			}
			firstExpired := time.Now().Add(ttl)
			require.Eventually(t, func() bool { return time.Now().After(firstExpired) }, 2*ttl, 50*time.Millisecond)
			resetBoth("after the first token expired")

			require.NoError(t, idp.RotateKey())
			rotated := time.Now()
			// Every token handed out from here is signed with the new key;
			// the clients renew theirs within three quarters of a lifetime.
			require.Eventually(t, func() bool { return time.Since(rotated) > ttl }, 2*ttl, 50*time.Millisecond)
			resetBoth("after the key rotation")

			got.wait(t, 30*time.Second)
			for _, l := range logs.lines() {
				require.NotContains(t, l, "interrupted", "the client's own reconnects carried the session; Benthos did not have to reconnect")
				require.NotContains(t, l, "OAuth", "no token trouble")
			}
		})
	}
}

// logLines is a slog handler that keeps the messages of warnings and
// errors.
type logLines struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logLines) Enabled(_ context.Context, lv slog.Level) bool { return lv >= slog.LevelWarn }
func (l *logLines) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, r.Message)
	return nil
}
func (l *logLines) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logLines) WithGroup(string) slog.Handler      { return l }
func (l *logLines) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.msgs...)
}

// tokenSidecar writes a fresh access token signed by idp into a file every
// quarter of ttl, as a sidecar would, and returns the file's path.
func tokenSidecar(t *testing.T, idp *solacetest.OAuthServer, ttl time.Duration) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "token")
	write := func() error {
		tok, err := idp.Token(map[string]any{"iss": idp.Issuer(), "aud": "solace", "sub": "pipeline",
			"exp": time.Now().Add(ttl).Unix()}, "at+jwt")
		if err != nil {
			return err
		}
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, []byte(tok), 0o600); err != nil {
			return err
		}
		return os.Rename(tmp, path)
	}
	require.NoError(t, write())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(ttl / 4)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if err := write(); err != nil {
					t.Errorf("token sidecar: %v", err)
					return
				}
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return path
}
