package solacetest

// This file is the test kit for Kerberos: the local MIT KDC that
// .ci/setup.d/30-krb5.sh runs (realm CONNECT-SOLACE.TEST on 127.0.0.1),
// tickets from it, and a broker that accepts them.

import (
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/keytab"
)

// LocalKDC is the realm of .ci/setup.d/30-krb5.sh.
type LocalKDC struct {
	Dir    string // keytabs: app.keytab (the client), solace.keytab, other.keytab
	Realm  string
	Config string // its krb5.conf
}

// KDCSetenv is the part of testing.T that NewLocalKDC's tickets need.
type KDCSetenv interface {
	TB
	Setenv(key, value string)
}

// NewLocalKDC returns the local KDC, failing the test when the setup
// script has not run (`bash -c 'source .ci/setup.d/30-krb5.sh'`, as `make
// test` does). It points the process's Kerberos library at the realm
// (KRB5_CONFIG) and at an empty credentials cache of the test's own
// (KRB5CCNAME) for the test's duration.
func NewLocalKDC(t KDCSetenv) *LocalKDC {
	t.Helper()
	dir := os.Getenv("KRB5_TEST_DIR")
	if dir == "" {
		dir = "/tmp/connect-solace-krb5"
	}
	k := &LocalKDC{Dir: dir, Realm: "CONNECT-SOLACE.TEST", Config: filepath.Join(dir, "krb5.conf")}
	if _, err := os.Stat(filepath.Join(dir, "kdc.pid")); err != nil {
		t.Fatalf("no local KDC in %s: run `bash -c 'source .ci/setup.d/30-krb5.sh'` (make test-services does): %v", dir, err)
	}
	t.Setenv("KRB5_CONFIG", k.Config)
	t.Setenv("KRB5CCNAME", "FILE:"+filepath.Join(t.TempDir(), "ccache"))
	return k
}

// Kinit gets the client principal "app" a ticket-granting ticket into the
// test's credentials cache, valid for lifetime (0: the realm's maximum).
func (k *LocalKDC) Kinit(t TB, lifetime time.Duration) {
	t.Helper()
	args := []string{"-k", "-t", filepath.Join(k.Dir, "app.keytab")}
	if lifetime > 0 {
		args = append(args, "-l", lifetime.Round(time.Second).String())
	}
	out, err := exec.Command("kinit", append(args, "app")...).CombinedOutput()
	if err != nil {
		t.Fatalf("kinit: %v: %s", err, out)
	}
}

// Keytab reads one of the realm's keytabs ("solace.keytab", ...).
func (k *LocalKDC) Keytab(t TB, name string) *keytab.Keytab {
	t.Helper()
	kt, err := LoadKerberosKeytab(filepath.Join(k.Dir, name))
	if err != nil {
		t.Fatalf("%v", err)
	}
	return kt
}

// ForgedKeytab is a keytab for principal with a key the KDC never issued
// (derived from a password), as a broker with a stale or wrong keytab has.
func (k *LocalKDC) ForgedKeytab(t TB, principal string) *keytab.Keytab {
	t.Helper()
	kt := keytab.New()
	for _, et := range []int32{etypeID.AES256_CTS_HMAC_SHA1_96, etypeID.AES128_CTS_HMAC_SHA1_96} {
		if err := kt.AddEntry(principal, k.Realm, "not-the-kdc-key", time.Now(), 2, et); err != nil {
			t.Fatalf("forging a keytab: %v", err)
		}
	}
	return kt
}

// NewKerberosBroker starts a broker that accepts tickets for the keytab
// kt on VPN "default" (basic logins stay on).
func NewKerberosBroker(t TB, cfg Config, kt *keytab.Keytab) *Broker {
	t.Helper()
	b := NewTestBroker(t, cfg)
	if err := b.EnableKerberos(KerberosConfig{Keytab: kt}); err != nil {
		t.Fatalf("%v", err)
	}
	if err := b.UpdateVPN("default", func(v *VPNConfig) { v.KerberosAuthEnabled = true }); err != nil {
		t.Fatalf("%v", err)
	}
	return b
}
