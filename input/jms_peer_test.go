package input

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service/integration"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/testkit/jmskit"
)

// sourcePeer is a running testdata/jms_source_peer.py.
type sourcePeer struct {
	port   int
	lines  chan string
	stderr *strings.Builder
}

// peerEvent is one line the peer prints.
type peerEvent struct {
	Event         string         `json:"event"`
	Link          string         `json:"link"`
	Container     string         `json:"container"`
	Address       string         `json:"address"`
	Durable       string         `json:"durable"`
	ExpiryPolicy  string         `json:"expiry_policy"`
	Capabilities  []string       `json:"capabilities"`
	Filters       map[string]any `json:"filters"`
	Body          string         `json:"body"`
	State         string         `json:"state"`
	Failed        bool           `json:"delivery_failed"`
	Undeliverable bool           `json:"undeliverable_here"`
	Condition     *string        `json:"condition"`
	Description   *string        `json:"description"`
	Closed        bool           `json:"closed"`
}

func startSourcePeer(t *testing.T, args ...string) *sourcePeer {
	t.Helper()
	port, err := integration.GetFreePort()
	require.NoError(t, err)
	cmd := exec.CommandContext(t.Context(), "/usr/bin/python3", append([]string{"testdata/jms_source_peer.py", "--port", fmt.Sprint(port)}, args...)...)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	p := &sourcePeer{port: port, lines: make(chan string, 64), stderr: &strings.Builder{}}
	cmd.Stderr = p.stderr
	require.NoError(t, cmd.Start(), "starting /usr/bin/python3 (python3-qpid-proton): %s", jmskit.SetupHint)
	go func(r io.Reader) {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}(stdout)
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("peer stderr: %s", p.stderr)
		}
	})
	select {
	case l := <-p.lines:
		require.Equal(t, `"listening"`, l, p.stderr.String())
	case <-time.After(20 * time.Second):
		t.Fatalf("test peer did not start: %s", p.stderr.String())
	}
	return p
}

// next returns the next event of the given kind, skipping others.
func (p *sourcePeer) next(t *testing.T, kind string) peerEvent {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case l, ok := <-p.lines:
			require.True(t, ok, "peer exited: %s", p.stderr.String())
			var e peerEvent
			require.NoError(t, json.Unmarshal([]byte(l), &e), l)
			if e.Event == kind {
				return e
			}
		case <-timeout:
			t.Fatalf("peer reported no %s event: %s", kind, p.stderr.String())
		}
	}
}

func (p *sourcePeer) yaml() string {
	return fmt.Sprintf("urls: [ amqp://127.0.0.1:%d ]\n", p.port)
}

// TestIntegrationJMSInputAttachFrames checks, against a Proton peer, the
// source terminus and link naming of every kind of subscription the AMQP JMS
// Mapping defines, and the container id (client_id) they are scoped to.
func TestIntegrationJMSInputAttachFrames(t *testing.T) {
	integration.CheckSkip(t)
	p := startSourcePeer(t)
	tests := []struct {
		name      string
		yaml      string
		want      peerEvent
		container string
	}{
		{
			name: "queue",
			yaml: "queue: orders\n",
			want: peerEvent{Address: "orders", Durable: "none", ExpiryPolicy: "session-end", Capabilities: []string{"queue"}},
		},
		{
			name: "plain topic",
			yaml: "topic: prices\n",
			want: peerEvent{Address: "prices", Durable: "none", ExpiryPolicy: "link-detach", Capabilities: []string{"topic"}},
		},
		{
			name: "durable subscription", container: "client-1",
			yaml: "topic: prices\nsubscription_name: sub1\ndurable: true\nclient_id: client-1\n",
			want: peerEvent{Link: "sub1", Address: "prices", Durable: "unsettled-state", ExpiryPolicy: "never", Capabilities: []string{"topic"}},
		},
		{
			name: "shared durable subscription", container: "client-2",
			yaml: "topic: prices\nsubscription_name: sub2\ndurable: true\nshared: true\nclient_id: client-2\n",
			want: peerEvent{Link: "sub2", Address: "prices", Durable: "unsettled-state", ExpiryPolicy: "never", Capabilities: []string{"topic", "shared"}},
		},
		{
			name: "global shared durable subscription",
			yaml: "topic: prices\nsubscription_name: sub3\ndurable: true\nshared: true\n",
			want: peerEvent{Link: "sub3|global", Address: "prices", Durable: "unsettled-state", ExpiryPolicy: "never", Capabilities: []string{"topic", "shared", "global"}},
		},
		{
			name: "shared non-durable subscription", container: "client-4",
			yaml: "topic: prices\nsubscription_name: sub4\nshared: true\nclient_id: client-4\n",
			want: peerEvent{Link: "sub4|volatile1", Address: "prices", Durable: "none", ExpiryPolicy: "link-detach", Capabilities: []string{"topic", "shared"}},
		},
		{
			name: "global shared non-durable subscription",
			yaml: "topic: prices\nsubscription_name: sub5\nshared: true\n",
			want: peerEvent{Link: "sub5|global-volatile1", Address: "prices", Durable: "none", ExpiryPolicy: "link-detach", Capabilities: []string{"topic", "shared", "global"}},
		},
		{
			name: "selector",
			yaml: "topic: prices\nselector: \"sym = 'ACME' AND JMSPriority > 4\"\n",
			want: peerEvent{Address: "prices", Durable: "none", ExpiryPolicy: "link-detach", Capabilities: []string{"topic"},
				Filters: map[string]any{"apache.org:selector-filter:string": "sym = 'ACME' AND JMSPriority > 4"}},
		},
		{
			name: "activemq prefixes",
			yaml: "address_style: activemq\ntopic: prices\n",
			want: peerEvent{Address: "topic://prices", Durable: "none", ExpiryPolicy: "link-detach", Capabilities: []string{"topic"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newTestJMSReader(t, p.yaml()+tc.yaml, nil)
			connectReader(t, r)
			got := p.next(t, "attach")
			if tc.want.Link != "" {
				assert.Equal(t, tc.want.Link, got.Link, "link name")
			}
			if tc.container != "" {
				assert.Equal(t, tc.container, got.Container, "container id is the client_id")
			}
			assert.Equal(t, tc.want.Address, got.Address)
			assert.Equal(t, tc.want.Durable, got.Durable, "durable")
			assert.Equal(t, tc.want.ExpiryPolicy, got.ExpiryPolicy, "expiry-policy")
			assert.Equal(t, tc.want.Capabilities, got.Capabilities, "capabilities")
			if tc.want.Filters == nil {
				assert.Empty(t, got.Filters)
			} else {
				assert.Equal(t, tc.want.Filters, got.Filters)
			}
			m, ack := readOne(t, r)
			assert.Equal(t, "m0", body(t, m))
			require.NoError(t, ack(t.Context(), nil))
			assert.Equal(t, "accepted", p.next(t, "settled").State)
			require.NoError(t, r.Close(t.Context()))
			p.next(t, "connection_closed")
		})
	}
}

// TestIntegrationJMSInputUnsubscribe: a durable subscription's link is not
// closed on shutdown (the subscription survives), unless
// unsubscribe_on_close is set, which closes it (detach closed=true).
func TestIntegrationJMSInputUnsubscribe(t *testing.T) {
	integration.CheckSkip(t)
	p := startSourcePeer(t)
	for _, unsubscribe := range []bool{false, true} {
		t.Run(fmt.Sprint("unsubscribe_on_close ", unsubscribe), func(t *testing.T) {
			r := newTestJMSReader(t, p.yaml()+fmt.Sprintf("topic: prices\nsubscription_name: keep\ndurable: true\nclient_id: c\nunsubscribe_on_close: %v\n", unsubscribe), nil)
			connectReader(t, r)
			p.next(t, "attach")
			require.NoError(t, r.Close(t.Context()))
			timeout := time.After(20 * time.Second)
			var closedLink bool
			for done := false; !done; {
				select {
				case l := <-p.lines:
					var e peerEvent
					require.NoError(t, json.Unmarshal([]byte(l), &e), l)
					switch e.Event {
					case "detach":
						closedLink = closedLink || e.Closed
					case "connection_closed":
						done = true
					}
				case <-timeout:
					t.Fatal("connection not closed")
				}
			}
			assert.Equal(t, unsubscribe, closedLink, "the link is closed (unsubscribing) only with unsubscribe_on_close")
		})
	}
}

// TestIntegrationJMSInputNackOutcomesPeer checks the exact disposition each
// nack_outcome settles with, and the reason a rejection carries.
func TestIntegrationJMSInputNackOutcomesPeer(t *testing.T) {
	integration.CheckSkip(t)
	p := startSourcePeer(t, "--count", "1")
	tests := []struct {
		outcome string
		want    peerEvent
	}{
		{jiNackReleased, peerEvent{State: "released"}},
		{jiNackModified, peerEvent{State: "modified", Failed: true}},
		{jiNackRejected, peerEvent{State: "rejected"}},
	}
	for _, tc := range tests {
		t.Run(tc.outcome, func(t *testing.T) {
			r := newTestJMSReader(t, p.yaml()+"queue: q\nnack_outcome: "+tc.outcome+"\n", nil)
			connectReader(t, r)
			_, ack := readOne(t, r)
			require.NoError(t, ack(t.Context(), errors.New("no route to the database")))
			got := p.next(t, "settled")
			assert.Equal(t, tc.want.State, got.State)
			assert.Equal(t, tc.want.Failed, got.Failed, "delivery-failed")
			assert.False(t, got.Undeliverable, "undeliverable-here")
			if tc.outcome == jiNackRejected {
				require.NotNil(t, got.Description)
				assert.Equal(t, "no route to the database", *got.Description)
			}
			require.NoError(t, r.Close(t.Context()))
		})
	}
}

// TestIntegrationJMSInputSelectorNotEchoed: a broker that attaches the link
// without the selector filter does not apply it; the input refuses to
// connect rather than consume every message.
func TestIntegrationJMSInputSelectorNotEchoed(t *testing.T) {
	integration.CheckSkip(t)
	p := startSourcePeer(t, "--ignore-filters")
	r := newTestJMSReader(t, p.yaml()+"queue: q\nselector: \"a = 1\"\n", nil)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	err := r.Connect(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "without the selector filter")
	assert.Equal(t, map[string]any{"apache.org:selector-filter:string": "a = 1"}, p.next(t, "attach").Filters)
}

// TestIntegrationJMSInputDrainPeer drains a Proton peer, which counts
// credit as AMQP defines it, so the input renews half windows while
// deliveries are in flight: every message arrives in order and is accepted.
func TestIntegrationJMSInputDrainPeer(t *testing.T) {
	integration.CheckSkip(t)
	const n = 200
	p := startSourcePeer(t, "--count", fmt.Sprint(n))
	r := newTestJMSReader(t, p.yaml()+"queue: q\nprefetch: 8\n", nil)
	connectReader(t, r)
	for i := range n {
		m, ack := readOne(t, r)
		require.Equal(t, fmt.Sprint("m", i), body(t, m))
		require.NoError(t, ack(t.Context(), nil))
		assert.Equal(t, "accepted", p.next(t, "settled").State, "message m%d", i)
	}
}
