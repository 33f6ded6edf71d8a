package input

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/testkit/componenttest"
	_ "github.com/connect-solace/connect-solace/output"
	"github.com/connect-solace/connect-solace/solacetest"
)

// TestSolaceKerberos runs an output and an input that log in with
// Kerberos tickets from the local MIT KDC through the real Go client; the
// broker verifies them against its keytab and names the clients after the
// ticket's principal.
func TestSolaceKerberos(t *testing.T) {
	kdc := solacetest.NewLocalKDC(t)
	kdc.Kinit(t, 0)
	b := solacetest.NewKerberosBroker(t, solacetest.Config{}, kdc.Keytab(t, "solace.keytab"))
	require.NoError(t, b.UpdateVPN("default", func(v *solacetest.VPNConfig) { v.BasicAuthEnabled = false }))
	require.NoError(t, b.CreateQueue("default", solacetest.QueueConfig{Name: "krb", AccessType: solacetest.AccessNonExclusive,
		Subscriptions: []string{"krb/>"}}))
	conn := fmt.Sprintf(`  urls: [ %s ]
  auth: { scheme: kerberos, kerberos: { service_name: solace } }
  reconnect_interval: 100ms
`, strings.Replace(b.SMFURL(), "127.0.0.1", "localhost", 1))

	const n = 50
	out := service.NewStreamBuilder()
	require.NoError(t, out.SetLoggerYAML("level: warn"))
	require.NoError(t, out.AddInputYAML(fmt.Sprintf("generate:\n  count: %d\n  interval: ''\n  mapping: 'root = \"k-%%d\".format(count(\"krb\"))'\n", n)))
	require.NoError(t, out.AddOutputYAML("solace:\n"+conn+"  topic: krb/orders\n"))

	in := service.NewStreamBuilder()
	require.NoError(t, in.SetLoggerYAML("level: warn"))
	require.NoError(t, in.AddInputYAML("solace:\n"+conn+"  queue: krb\n"))
	got := newDistinctBodies(n)
	require.NoError(t, in.AddConsumerFunc(got.consume))
	componenttest.RunStream(t, t.Context(), in, 10*time.Second)
	componenttest.RunStream(t, t.Context(), out, 10*time.Second)
	got.wait(t, 20*time.Second)
	clients, err := b.Clients("default")
	require.NoError(t, err)
	require.NotEmpty(t, clients)
	for _, c := range clients {
		require.Equal(t, "app", c.Username)
	}
}
