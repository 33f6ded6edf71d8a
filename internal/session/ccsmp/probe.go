package ccsmp

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/config"
)

// VerifiedVersions are the Go client versions (as the client reports them,
// with its CCSMP version) whose private layout and CCSMP prototypes this
// package was checked against. Add a version only after checking both.
var VerifiedVersions = []string{"solace-messaging-go-client 1.10.1 / ccsmp 7.33.2.3"}

// Probe reports why the native path cannot be used with the client svc
// belongs to, or nil when it can: the version the client reports must be a
// verified one, and a message built with known attributes must read back
// through Read's C side. The client is linked in, so callers check once per
// process.
func Probe(svc solace.MessagingService) error { return probe(svc.Info().GetAPIVersion(), svc) }

func probe(version string, svc solace.MessagingService) error {
	if !slices.Contains(VerifiedVersions, version) {
		return fmt.Errorf("the Solace Go client reports version %q, not one the native read was verified with (%q)",
			version, strings.Join(VerifiedVersions, `", "`))
	}
	const ttl, appID = 4321, "native-probe"
	msg, err := svc.MessageBuilder().
		WithApplicationMessageID(appID).
		WithProperty(config.MessagePropertyPersistentTimeToLive, ttl).
		BuildWithByteArrayPayload([]byte("probe"))
	if err != nil {
		return fmt.Errorf("building the probe message: %w", err)
	}
	defer msg.Dispose()
	h, ok := HandleOf(msg)
	if !ok {
		return fmt.Errorf("the native handle of %T is not where version %s keeps it", msg, version)
	}
	if gotTTL, gotID, ok := readProbe(h); !ok || gotTTL != ttl || gotID != appID {
		return errors.New("the probe message did not read back through CCSMP")
	}
	return nil
}
