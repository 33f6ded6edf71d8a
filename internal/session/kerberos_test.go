package session

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/subcode"

	"github.com/connect-solace/connect-solace/solacetest"
)

// kerberosConfig logs in to b with Kerberos, naming the host "localhost"
// as the service principal solace/localhost expects.
func kerberosConfig(b *solacetest.Broker) Config {
	c := testConfig(b)
	c.URLs = []string{strings.Replace(b.SMFURL(), "127.0.0.1", "localhost", 1)}
	c.Username, c.Password, c.AuthScheme = "", "", AuthKerberos
	return c
}

// TestConnectKerberos logs in through the real Go client with tickets from
// the local MIT KDC, and checks each refusal's subcode.
func TestConnectKerberos(t *testing.T) {
	kdc := solacetest.NewLocalKDC(t)
	kdc.Kinit(t, 0)

	t.Run("login", func(t *testing.T) {
		b := solacetest.NewKerberosBroker(t, solacetest.Config{}, kdc.Keytab(t, "solace.keytab"))
		s, err := Connect(t.Context(), kerberosConfig(b), nil, Events{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close(t.Context()) })
		clients, err := b.Clients("default")
		require.NoError(t, err)
		require.Len(t, clients, 1)
		assert.Equal(t, "app", clients[0].Username, "the client principal without the realm")
	})
	t.Run("client keytab, no kinit", func(t *testing.T) {
		t.Setenv("KRB5CCNAME", "FILE:"+filepath.Join(t.TempDir(), "ccache")) // empty
		t.Setenv("KRB5_CLIENT_KTNAME", filepath.Join(kdc.Dir, "app.keytab"))
		b := solacetest.NewKerberosBroker(t, solacetest.Config{}, kdc.Keytab(t, "solace.keytab"))
		s, err := Connect(t.Context(), kerberosConfig(b), nil, Events{})
		require.NoError(t, err)
		require.NoError(t, s.Close(t.Context()))
	})
	t.Run("api provided username", func(t *testing.T) {
		b := solacetest.NewKerberosBroker(t, solacetest.Config{}, kdc.Keytab(t, "solace.keytab"))
		c := kerberosConfig(b)
		c.Username = "orders"
		for _, allow := range []bool{false, true} {
			require.NoError(t, b.UpdateVPN("default", func(v *solacetest.VPNConfig) { v.KerberosAllowAPIProvidedUsername = allow }))
			s, err := Connect(t.Context(), c, nil, Events{})
			require.NoError(t, err)
			clients, err := b.Clients("default")
			require.NoError(t, err)
			require.Len(t, clients, 1)
			want := map[bool]string{false: "app", true: "orders"}[allow]
			assert.Equal(t, want, clients[0].Username, "allowed: %v", allow)
			require.NoError(t, s.Close(t.Context()))
		}
	})

	for _, tc := range []struct {
		name    string
		setup   func(t *testing.T) (*solacetest.Broker, Config)
		subcode subcode.Code
		text    string
	}{
		{"wrong principal", func(t *testing.T) (*solacetest.Broker, Config) {
			b := solacetest.NewKerberosBroker(t, solacetest.Config{}, kdc.Keytab(t, "solace.keytab"))
			c := kerberosConfig(b)
			c.KerberosServiceName = "other" // a ticket for other/localhost, which the broker is not
			return b, c
		}, subcode.LoginFailure, "Unauthorized"},
		{"wrong keytab", func(t *testing.T) (*solacetest.Broker, Config) {
			b := solacetest.NewKerberosBroker(t, solacetest.Config{}, kdc.ForgedKeytab(t, "solace/localhost"))
			return b, kerberosConfig(b)
		}, subcode.LoginFailure, "Unauthorized"},
		{"kerberos off on the vpn", func(t *testing.T) (*solacetest.Broker, Config) {
			b := solacetest.NewKerberosBroker(t, solacetest.Config{}, kdc.Keytab(t, "solace.keytab"))
			require.NoError(t, b.UpdateVPN("default", func(v *solacetest.VPNConfig) { v.KerberosAuthEnabled = false }))
			return b, kerberosConfig(b)
		}, subcode.KerberosAuthenticationIsShutdown, "Kerberos Authentication Is Shutdown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, c := tc.setup(t)
			_, err := Connect(t.Context(), c, nil, Events{})
			require.Error(t, err)
			var ne *solace.NativeError
			require.True(t, errors.As(err, &ne), "%v", err)
			assert.Equal(t, tc.subcode, ne.SubCode(), "%v", err)
			assert.Contains(t, err.Error(), tc.text)
			assert.Zero(t, b.ClientCount())
		})
	}

	t.Run("expired ticket", func(t *testing.T) {
		b := solacetest.NewKerberosBroker(t, solacetest.Config{}, kdc.Keytab(t, "solace.keytab"))
		kdc.Kinit(t, 2*time.Second)
		expires := time.Now().Add(2 * time.Second)
		require.Eventually(t, func() bool { return time.Now().After(expires.Add(time.Second)) }, 5*time.Second, 50*time.Millisecond)
		_, err := Connect(t.Context(), kerberosConfig(b), nil, Events{})
		require.Error(t, err)
		var ne *solace.NativeError
		require.True(t, errors.As(err, &ne), "%v", err)
		assert.Equal(t, subcode.LoginFailure, ne.SubCode(), "%v", err)
		assert.Contains(t, err.Error(), "Ticket expired")
		assert.Contains(t, err.Error(), "renew the ticket", "the error says what to do")
		assert.Zero(t, b.ClientCount())
	})
}
