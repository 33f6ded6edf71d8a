package solacetest

// This file holds the helpers for Go tests (NewTestBroker; SelfSignedTLS in
// tls.go and NewOAuthServer in oauthserver.go take a TB too).

// TB is the part of testing.TB that the test helpers use; *testing.T,
// *testing.B, *testing.F and any testing.TB satisfy it. The helpers take it
// instead of testing.TB so that this package does not import testing: the
// connect-solace binary links the package for its devbroker command, and
// TestBinaryLinksNoTestCode in tests/ keeps testing out of the binary.
type TB interface {
	Helper()
	Cleanup(func())
	Fatalf(format string, args ...any)
	TempDir() string
}

// NewTestBroker starts a broker for t and closes it when the test ends.
func NewTestBroker(t TB, cfg Config) *Broker {
	t.Helper()
	b, err := Start(cfg)
	if err != nil {
		t.Fatalf("starting solacetest broker: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// QueuePayloads returns the payloads queue holds in vpn, oldest first, as
// strings: what a test compares with what it sent.
func QueuePayloads(t TB, b *Broker, vpn, queue string) []string {
	t.Helper()
	msgs, err := b.QueueMessages(vpn, queue)
	if err != nil {
		t.Fatalf("reading queue %q: %v", queue, err)
	}
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m)
	}
	return out
}
