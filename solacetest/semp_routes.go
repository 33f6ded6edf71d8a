package solacetest

// This file lists the SEMP resources beyond queues and routes them with
// net/http.ServeMux patterns. Queue resources are served by route
// (semp_queues.go), the mux's fallback. It also wraps the handler for
// Config.SEMPMonitorDelay and serves the SEMP help pages.

import (
	"html"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// brokerAdmin is what the SEMP resources beyond queues need; *Broker
// implements it. A queueAdmin that does not (the tests' in-memory fake)
// gets the queue resources only.
type brokerAdmin interface {
	queueAdmin
	Client(vpn, name string) (ClientInfo, error)
	Clients(vpn string) ([]ClientInfo, error)
	DisconnectClient(vpn, name string) error
	QueueMsgs(vpn, queue string) ([]QueueMsg, error)
	PurgeQueue(vpn, queue string) (int, error)
	DeleteQueueMsg(vpn, queue string, id uint64) error
	VPN(vpn string) (VPNConfig, error)
	UpdateVPN(vpn string, update func(*VPNConfig)) error
	ClientProfile(vpn, name string) (ClientProfile, error)
	ClientProfiles(vpn string) ([]ClientProfile, error)
	UpdateClientProfile(vpn, name string, update func(*ClientProfile)) error
	ACLProfile(vpn, name string) (ACLProfile, error)
	AddACLException(vpn, profile, kind, topic string) error
	RemoveACLException(vpn, profile, kind, topic string) error
	CreateReplayLog(vpn string, cfg ReplayLog) error
	ReplayLogs(vpn string) ([]ReplayLog, error)
	UpdateReplayLog(vpn, name string, update func(*ReplayLog)) error
	DeleteReplayLog(vpn, name string) error
	StartReplay(vpn, queue, replayLog string, from time.Time, afterRGMID string) error
	AddCertAuthority(name, pemCerts string) error
	RemoveCertAuthority(name string) error
	CertAuthorities() map[string]string
	CreateClientUsername(vpn string, u ClientUsername) error
	DeleteClientUsername(vpn, name string) error
	ClientUsernames(vpn string) ([]ClientUsername, error)
}

func (s *sempServer) registerRoutes(b brokerAdmin) {
	const (
		config  = sempConfigBase + "/msgVpns/{vpn}"
		monitor = sempMonitorBase + "/msgVpns/{vpn}"
		action  = sempActionBase + "/msgVpns/{vpn}"
	)
	inVPN := func(pattern string, h func(*sempCall, brokerAdmin, string) *sempErr) { handleInVPN(s, pattern, b, h) }
	// semp_vpn.go
	inVPN("GET "+config, getVPN)
	inVPN("PATCH "+config, updateVPN)
	inVPN("GET "+monitor, getVPN)
	// semp_profiles.go
	clientProfiles.register(s, b)
	// semp_acl.go
	inVPN("GET "+config+"/aclProfiles/{profile}", getACLProfile)
	for _, kind := range []string{ACLPublishTopic, ACLSubscribeTopic, ACLSubscribeShareName} {
		coll := config + "/aclProfiles/{profile}/" + kind + "Exceptions"
		ofKind := func(h func(c *sempCall, b brokerAdmin, vpn, kind string) *sempErr) func(*sempCall, brokerAdmin, string) *sempErr {
			return func(c *sempCall, b brokerAdmin, vpn string) *sempErr { return h(c, b, vpn, kind) }
		}
		inVPN("GET "+coll, ofKind(listACLExceptions))
		inVPN("POST "+coll, ofKind(addACLException))
		// {exception...}: clients put the topic in the path unescaped.
		inVPN("GET "+coll+"/{exception...}", ofKind(getACLException))
		inVPN("DELETE "+coll+"/{exception...}", ofKind(removeACLException))
	}
	// semp_replay.go
	replayLogs.register(s, b)
	inVPN("PUT "+action+"/queues/{queue}/startReplay", startReplay)
	// semp_certs.go
	clientCAs(b).register(s, false, false)
	clientUsernames.register(s, b)
	// semp_clients.go
	inVPN("GET "+monitor+"/clients", listClients)
	inVPN("GET "+monitor+"/clients/{client}", getClient)
	inVPN("GET "+monitor+"/clients/{client}/subscriptions", listClientSubscriptions)
	inVPN("PUT "+action+"/clients/{client}/disconnect", disconnectClient)
	// semp_queue_msgs.go
	inVPN("GET "+monitor+"/queues/{queue}/msgs", listQueueMsgs)
	inVPN("GET "+monitor+"/queues/{queue}/msgs/{msg}", getQueueMsg)
	inVPN("PUT "+action+"/queues/{queue}/deleteMsgs", purgeQueue)
	inVPN("PUT "+action+"/queues/{queue}/msgs/{msg}/delete", deleteQueueMsg)
	// semp_oauth.go
	s.registerOAuthRoutes(b)
}

// handleInVPN serves a resource below msgVpns/{vpn} with h, which runs once
// the VPN is known to exist and gets its name.
func handleInVPN[A queueAdmin](s *sempServer, pattern string, b A, h func(c *sempCall, b A, vpn string) *sempErr) {
	s.handle(pattern, func(c *sempCall) *sempErr {
		vpn, err := vpnOf(c, b)
		if err != nil {
			return err
		}
		return h(c, b, vpn)
	})
}

// vpnOf returns the request's {vpn}, which must exist.
func vpnOf(c *sempCall, b queueAdmin) (string, *sempErr) {
	vpn := c.r.PathValue("vpn")
	if !b.HasVPN(vpn) {
		return "", errNotFound("could not find match for msgVpn %q", vpn)
	}
	return vpn, nil
}

// sempHandler returns the SEMP HTTP handler served on the SEMP listener,
// answering monitor requests no sooner than Config.SEMPMonitorDelay.
func sempHandler(b *Broker, user, password string, log *slog.Logger) http.Handler {
	h := newSEMPHandler(b, user, password, log)
	if b.cfg.DataDir != "" {
		h = persistConfigAfter(b, h)
	}
	delay := b.cfg.SEMPMonitorDelay
	if delay <= 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, sempMonitorBase+"/") {
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// ---- the help pages ----
//
// PubSub+ serves an interactive API reference at
// /SEMP/v2/{config,monitor,action}/help/ without authentication; tools
// (Solace's own test suite among them) poll the config one to learn that
// SEMP is up.

// isSEMPHelp reports whether path is one of the help pages.
func isSEMPHelp(path string) bool {
	for _, base := range []string{sempConfigBase, sempMonitorBase, sempActionBase} {
		if rest, ok := strings.CutPrefix(path, base+"/help"); ok && (rest == "" || rest == "/") {
			return true
		}
	}
	return false
}

// serveSEMPHelp answers a help page and returns the HTTP status.
func serveSEMPHelp(w http.ResponseWriter, r *http.Request) int {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return http.StatusMethodNotAllowed
	}
	api := strings.TrimSuffix(strings.TrimSuffix(r.URL.Path, "/"), "/help")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte("<!DOCTYPE html>\n<html><head><title>SEMP v2 " + html.EscapeString(api) +
		" help</title></head><body><h1>SEMP v2 API (solacetest)</h1><p>Base path <code>" + html.EscapeString(api) +
		"</code>. This test broker implements a subset of Solace's SEMPv2 API, version 2.34; " +
		"the package documentation of solacetest lists it.</p></body></html>\n"))
	return http.StatusOK
}
