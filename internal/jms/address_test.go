package jms

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAddresserStyles(t *testing.T) {
	tests := []struct {
		name         string
		style        string
		qp, tp       string
		props        map[string]any
		kind         DestKind
		in           string
		wantAddr     string
		wantStyle    string
		wantCaps     []string
		wantDurable  bool
		wantResolved string
	}{
		{name: "activemq queue", style: StyleActiveMQ, kind: KindQueue, in: "a", wantAddr: "queue://a", wantStyle: StyleActiveMQ, wantCaps: []string{"queue"}},
		{name: "activemq already prefixed", style: StyleActiveMQ, kind: KindTopic, in: "topic://t", wantAddr: "topic://t", wantStyle: StyleActiveMQ, wantCaps: []string{"topic"}, wantResolved: "t"},
		{name: "artemis with acceptor prefixes", style: StyleArtemis, qp: "anycast:", tp: "multicast:", kind: KindTopic, in: "t", wantAddr: "multicast:t", wantStyle: StyleArtemis, wantCaps: []string{"topic"}},
		{name: "rabbitmq queue is durable", style: StyleRabbitMQ, kind: KindQueue, in: "q", wantAddr: "/queue/q", wantStyle: StyleRabbitMQ, wantDurable: true},
		{name: "rabbitmq topic", style: StyleRabbitMQ, kind: KindTopic, in: "a.b", wantAddr: "/topic/a.b", wantStyle: StyleRabbitMQ},
		{name: "rabbitmq exchange verbatim", style: StyleRabbitMQ, kind: KindQueue, in: "/exchange/logs/info", wantAddr: "/exchange/logs/info", wantStyle: StyleRabbitMQ, wantDurable: true},
		{name: "solace queue is plain", style: StyleSolace, kind: KindQueue, in: "q", wantAddr: "q", wantStyle: StyleSolace, wantCaps: []string{"queue"}},
		{name: "solace topic", style: StyleSolace, kind: KindTopic, in: "a/b", wantAddr: "topic://a/b", wantStyle: StyleSolace, wantCaps: []string{"topic"}},
		{name: "custom", style: StyleCustom, qp: "Q.", tp: "T.", kind: KindQueue, in: "x", wantAddr: "Q.x", wantStyle: StyleCustom, wantCaps: []string{"queue"}},
		{name: "auto reads advertised prefixes", style: StyleAuto, props: map[string]any{"queue-prefix": "queue://", "topic-prefix": "topic://"}, kind: KindTopic, in: "t", wantAddr: "topic://t", wantStyle: StyleAuto, wantCaps: []string{"topic"}},
		{name: "auto detects RabbitMQ", style: StyleAuto, props: map[string]any{"product": "RabbitMQ"}, kind: KindQueue, in: "q", wantAddr: "/queue/q", wantStyle: StyleRabbitMQ, wantDurable: true},
		{name: "auto falls back to plain", style: StyleAuto, props: map[string]any{"product": "apache-activemq-artemis"}, kind: KindQueue, in: "q", wantAddr: "q", wantStyle: StyleAuto, wantCaps: []string{"queue"}},
		{name: "auto without properties", style: "", kind: KindTopic, in: "t", wantAddr: "t", wantStyle: StyleAuto, wantCaps: []string{"topic"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := NewAddresser(tc.style, tc.qp, tc.tp, tc.props)
			require.NoError(t, err)
			assert.Equal(t, tc.wantStyle, a.Style())
			d, err := a.Resolve(tc.kind, tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.wantAddr, d.Address)
			assert.Equal(t, tc.wantCaps, d.Capabilities)
			assert.Equal(t, tc.wantDurable, d.Durable)
			assert.Equal(t, tc.kind, d.Kind)
			want := tc.wantResolved
			if want == "" {
				want = tc.in
			}
			assert.Equal(t, want, d.Name)
		})
	}
}

func TestAddresserErrors(t *testing.T) {
	_, err := NewAddresser("ibmmq", "", "", nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "activemq")

	a, err := NewAddresser(StyleActiveMQ, "", "", nil)
	require.NoError(t, err)
	_, err = a.Resolve(KindQueue, "")
	assert.ErrorIs(t, err, ErrEmptyDestination)
}
