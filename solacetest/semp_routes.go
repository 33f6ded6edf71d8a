package solacetest

// This file lists the SEMP resources beyond queues and routes them with
// net/http.ServeMux patterns. Queue resources are served by route
// (semp_queues.go), the mux's fallback.

import "time"

// brokerAdmin is what the SEMP resources beyond queues need; *Broker
// implements it. A queueAdmin that does not (the tests' in-memory fake)
// gets the queue resources only.
type brokerAdmin interface {
	queueAdmin
	Client(vpn, name string) (ClientInfo, error)
	Clients(vpn string) ([]ClientInfo, error)
	DisconnectClient(vpn, name string) error
	QueueMsgs(vpn, queue string) ([]QueueMsg, error)
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
	// semp_vpn.go
	s.handle("GET "+config, func(c *sempCall) *sempErr { return getVPN(c, b) })
	s.handle("PATCH "+config, func(c *sempCall) *sempErr { return updateVPN(c, b) })
	s.handle("GET "+monitor, func(c *sempCall) *sempErr { return getVPN(c, b) })
	// semp_profiles.go
	for _, base := range []string{config, monitor} {
		s.handle("GET "+base+"/clientProfiles", func(c *sempCall) *sempErr { return listClientProfiles(c, b) })
		s.handle("GET "+base+"/clientProfiles/{profile}", func(c *sempCall) *sempErr { return getClientProfile(c, b) })
	}
	s.handle("PATCH "+config+"/clientProfiles/{profile}", func(c *sempCall) *sempErr { return updateClientProfile(c, b) })
	// semp_acl.go
	s.handle("GET "+config+"/aclProfiles/{profile}", func(c *sempCall) *sempErr { return getACLProfile(c, b) })
	for _, kind := range []string{ACLPublishTopic, ACLSubscribeTopic, ACLSubscribeShareName} {
		coll := config + "/aclProfiles/{profile}/" + kind + "Exceptions"
		s.handle("GET "+coll, func(c *sempCall) *sempErr { return listACLExceptions(c, b, kind) })
		s.handle("POST "+coll, func(c *sempCall) *sempErr { return addACLException(c, b, kind) })
		// {exception...}: clients put the topic in the path unescaped.
		s.handle("GET "+coll+"/{exception...}", func(c *sempCall) *sempErr { return getACLException(c, b, kind) })
		s.handle("DELETE "+coll+"/{exception...}", func(c *sempCall) *sempErr { return removeACLException(c, b, kind) })
	}
	// semp_replay.go
	s.handle("GET "+config+"/replayLogs", func(c *sempCall) *sempErr { return listReplayLogs(c, b) })
	s.handle("POST "+config+"/replayLogs", func(c *sempCall) *sempErr { return createReplayLog(c, b) })
	s.handle("GET "+config+"/replayLogs/{name}", func(c *sempCall) *sempErr { return getReplayLog(c, b) })
	s.handle("PATCH "+config+"/replayLogs/{name}", func(c *sempCall) *sempErr { return updateReplayLog(c, b) })
	s.handle("DELETE "+config+"/replayLogs/{name}", func(c *sempCall) *sempErr { return deleteReplayLog(c, b) })
	s.handle("PUT "+action+"/queues/{queue}/startReplay", func(c *sempCall) *sempErr { return startReplay(c, b) })
	// semp_certs.go
	s.handle("POST "+sempConfigBase+"/clientCertAuthorities", func(c *sempCall) *sempErr { return createCertAuthority(c, b) })
	s.handle("GET "+sempConfigBase+"/clientCertAuthorities/{name}", func(c *sempCall) *sempErr { return getCertAuthority(c, b) })
	s.handle("DELETE "+sempConfigBase+"/clientCertAuthorities/{name}", func(c *sempCall) *sempErr { return deleteCertAuthority(c, b) })
	s.handle("POST "+config+"/clientUsernames", func(c *sempCall) *sempErr { return createClientUsername(c, b) })
	s.handle("GET "+config+"/clientUsernames/{name}", func(c *sempCall) *sempErr { return getClientUsername(c, b) })
	s.handle("DELETE "+config+"/clientUsernames/{name}", func(c *sempCall) *sempErr { return deleteClientUsername(c, b) })
	// semp_clients.go
	s.handle("GET "+monitor+"/clients", func(c *sempCall) *sempErr { return listClients(c, b) })
	s.handle("GET "+monitor+"/clients/{client}", func(c *sempCall) *sempErr { return getClient(c, b) })
	s.handle("GET "+monitor+"/clients/{client}/subscriptions", func(c *sempCall) *sempErr { return listClientSubscriptions(c, b) })
	s.handle("PUT "+action+"/clients/{client}/disconnect", func(c *sempCall) *sempErr { return disconnectClient(c, b) })
	// semp_queue_msgs.go
	s.handle("GET "+monitor+"/queues/{queue}/msgs", func(c *sempCall) *sempErr { return listQueueMsgs(c, b) })
	s.handle("GET "+monitor+"/queues/{queue}/msgs/{msg}", func(c *sempCall) *sempErr { return getQueueMsg(c, b) })
	// semp_oauth.go
	s.registerOAuthRoutes(b)
}

// vpnOf returns the request's {vpn}, which must exist.
func vpnOf(c *sempCall, b queueAdmin) (string, *sempErr) {
	vpn := c.r.PathValue("vpn")
	if !b.HasVPN(vpn) {
		return "", errNotFound("could not find match for msgVpn %q", vpn)
	}
	return vpn, nil
}
