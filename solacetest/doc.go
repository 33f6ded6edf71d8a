// Package solacetest is a wire-level Solace PubSub+ test broker for Go tests:
// start one per test with NewTestBroker and point the real Solace client, or
// pipelines using the connect-solace plugins, at it instead of a real broker.
//
// It speaks SMF (Solace Message Format) over TCP, over TLS when given a
// certificate, compressed (Config.CompressedAddr, and compressed TLS) and
// over WebSocket (Config.WebAddr, Config.SecureWebAddr), faithfully enough
// that the unmodified Solace Go client (solace.dev/go/messaging v1.10.1)
// connects, publishes, subscribes, binds to queues and settles messages as it
// would against a real broker. It also serves a subset of SEMPv2 (config,
// monitor and action APIs) and PubSub+'s health-check listener
// (Config.HealthAddr). It is test and development infrastructure, in the
// spirit of net/http/httptest, and it is not a production broker: everything
// lives in memory, unless Config.DataDir keeps it in a directory (see
// Persistence and takeover below).
//
//	b := solacetest.NewTestBroker(t, solacetest.Config{})
//	_ = b.CreateQueue("default", solacetest.QueueConfig{Name: "orders", Subscriptions: []string{"orders/>"}})
//	// point the client at b.SMFURL() with user default / password default
//
// # Layout
//
// codec.go turns bytes into frames and back (fuzzed by FuzzDecode), and
// codec_sdt.go decodes the SDT fields consumer selectors read. broker.go
// holds Config, Start, the listeners (the health-check listener and
// ListenAlso's further ones among them) and the queue admin API. session.go
// owns a client connection (login, keepalive, subscriptions, publisher flow,
// binds), runs a publish's steps and answers oversized messages; router.go
// matches topics and decides which queues and sessions a message reaches,
// shared subscriptions included; spool.go holds queues, consumer flows,
// windows, settlement, redelivery, DMQ and TTL (what happens when a client
// settles FAILED is Broker.settle there); partition.go partitioned queues and
// the flow passivation of egress off; replay.go message replay; selectors
// are the JMS selector language of internal/selector. faults.go holds the
// fault-injection hooks (Broker.Faults), their checks and FlowState.
// testhelpers.go has NewTestBroker and SelfSignedTLS (for Go tests, without
// importing testing, so that the connect-solace binary does not link it).
// clients.go, vpn.go, profiles.go, acl.go and provision.go hold the client
// monitor, VPN settings, client profiles, ACL profiles and endpoint
// provisioning; oauth.go OAuth login (oauthserver.go a test OAuth provider,
// oauthtoken.go its client_credentials token endpoint, oauth_bearer.go SEMP
// Bearer tokens); kerberos.go Kerberos login (kdc.go the test kit for the
// local MIT KDC of .ci/setup.d/30-krb5.sh);
// tls.go, compress.go and web.go the transports (tls.go with TLS downgrade).
// semp.go is the SEMP core (auth, envelopes, paging; the wire types the SEMP
// client shares are in internal/semp/sempwire), routing by resource with
// net/http.ServeMux patterns (semp_routes.go, with the help pages and the
// monitor delay) to semp_queues.go, semp_clients.go, semp_vpn.go,
// semp_profiles.go, semp_acl.go, semp_replay.go, semp_oauth.go and
// semp_queue_msgs.go. persist.go keeps the state in Config.DataDir, in the
// checksummed append-only log of internal/store. queue_msgs.go is the admin's
// view of a queue's messages and flows (browse, delete, purge), publish.go
// Broker.Publish (a message the broker publishes itself, with attributes),
// and console.go the web console (Config.ConsoleAddr) with its pages and
// script embedded from console/.
//
// # Persistence and takeover
//
// With Config.DataDir (devbroker --data-dir DIR) the broker keeps, in an
// append-only log of checksummed records written by one group-commit
// goroutine (internal/store says why not an embedded database):
//
//   - durable queues with their configuration and subscriptions (those added
//     by clients too), and every message they hold: payload and every
//     attribute as published, spool order, expiry, replication group message
//     id (the spooler id is kept, so ids survive) and delivery count;
//   - settlements (a message acked, rejected, moved to a DMQ or expired
//     leaves its queue in the log too), DMQ copies;
//   - publisher flows: the last message id processed per flow name, and the
//     rejections a resend must get again;
//   - the replay log's configuration and entries;
//   - what SEMP and the package API configure: VPN settings, client
//     profiles, ACL profiles, client usernames, certificate authorities,
//     OAuth profiles, authorization groups and domain certificate
//     authorities (a snapshot when it changes).
//
// A publisher's ack leaves only once its message is fsynced, so kill -9 (or
// a power cut) loses nothing acknowledged; a delivery leaves only once its
// delivery count is written to the operating system, so that after a
// process crash every message a consumer may have seen comes back with the
// redelivered flag (after a power cut, one delivered in the last group
// commit may come back unflagged). Settlements are not synced: losing one
// redelivers a message, never loses one. At start the broker replays the
// log, reports any torn or corrupt record (by checksum), missing segment or
// unreadable record it finds (in its log and by DataDirDamage) and goes on
// with what is intact, keeps a damaged segment as *.damaged, refuses a
// directory it cannot read, and compacts the log into one snapshot segment.
// Delivery message ids start above any earlier run's (from the clock), as a
// re-binding client drops a delivery whose id is not above the last one it
// saw.
//
// Config.Standby (devbroker --standby) is an HA mate: it waits for the
// directory's flock, which the active broker holds until it exits or dies,
// then recovers and listens on its own addresses. Clients that list both
// addresses (the plugins' urls) reconnect to it, reopen their publisher flows
// by name (resends of messages the dead broker had spooled are dropped as
// duplicates), re-bind their queues and get the delivered-unacked messages
// again, flagged redelivered: what they observe when a PubSub+ HA mate takes
// over (docs/operations.md, tests/broker_failover_test.go).
//
// Not kept: temporary queues and their messages, client sessions and direct
// subscriptions (clients restore those themselves), consumer flows and
// partition assignments (rebuilt as clients bind), the message counters of
// SEMP's monitor API, and the log does not shrink while the broker runs (it
// is compacted at each start). Unlike PubSub+ HA, nothing is replicated:
// active and standby share one directory on one machine, and the standby's
// address is its own, not a virtual one that moves.
//
// # Solace's own client test suite
//
// The suite Solace wrote for its Go client (pubsubplus-go-client test/,
// commit ff8ed21, 3440 specs) runs against the devbroker as shipped, with
// none of the harness's compatibility patches, through the repository's
// scripts/solace-go-suite.sh:
//
//	scripts/solace-go-suite.sh --out /tmp/sgs /tmp/solace-go-suite/test
//
// It builds connect-solace and toxiproxy, starts toxiproxy on 127.0.0.1
// (behind scripts/toxiproxy-front, which keeps the suite's proxies on
// loopback and maps the broker ports the suite assumes to the devbroker's
// --extra-listener addresses), points the suite at it and at the
// devbroker's test OAuth provider through the suite's own environment
// variables (TOXIPROXY_*, PUBSUB_OAUTHSERVER_*), starts the local MIT KDC
// (.ci/setup.d/30-krb5.sh), gets the suite's client a ticket and sets
// PUBSUB_KDC_HOSTNAME, and runs
// shared/tools/solace-go-suite/run.sh with the broker command
//
//	connect-solace devbroker --smf-addr '127.0.0.1:{smf}' --semp-addr '127.0.0.1:{semp}' \
//	  --health-addr '127.0.0.1:{health}' --smf-tls-addr '127.0.0.1:{secure}' \
//	  --compressed-addr '127.0.0.1:{compressed}' --web-addr '127.0.0.1:{web}' \
//	  --secure-web-addr '127.0.0.1:{secure_web}' --tls-cert $F/api-server.pem \
//	  --tls-key-passphrase-file $F/api-server-passphrase.txt --tls-max-version 1.2 \
//	  --oauth-addr 127.0.0.1:$P --oauth-jwks-file $F/jwks_key_endpoint.json \
//	  --oauth-userinfo-file $F/userinfo.json --extra-listener smf=127.0.0.1:$A \
//	  --extra-listener compressed=127.0.0.1:$B --extra-listener smf-tls=127.0.0.1:$C \
//	  --semp-monitor-delay 30ms --kerberos-keytab $KRB5_TEST_SERVICE_KEYTAB --log-level debug
//
// (F is the suite's data/fixtures; P, A, B and C free ports.) On 2 shared
// cores the 18 files take about 10 minutes, and the expected result is
//
//	in-scope: 3130/3138 specs pass (0 fail, 0 hang, 8 skipped)
//
// Under heavy load (other builds running) a timing spec or two may fail: a
// request-reply termination spec's 5 s wait, a direct receiver's
// backpressure spec. The 8 in-scope skips are specs the suite skips
// unconditionally ("Currently failing in Git actions - SOL-117804"); cache
// (292) specs are out of scope. The Kerberos specs (10) need one change to
// the suite: its remote test context never enables them (its
// testcontainers context does, after starting a KDC container), and
// scripts/solace-go-suite-kerberos.diff makes it enable them when the
// config names a KDC (PUBSUB_KDC_HOSTNAME). With it, on 2026-12-02 (load
// about 3), kerberos_test.go passes 10/10; the script's last line counts
// them in scope ("in-scope with Kerberos"). Two of the suite's specs
// race the client against itself and may fail now and then: swapping a receiver's message callback while a
// message is in flight, and an asynchronous unsubscribe under seven seconds
// of toxiproxy latency ("Bad Flow pointer" from the client library).
// --semp-monitor-delay stands in for a real broker's slower management
// plane: seven request-reply termination specs need the 5 s reply timeout
// of a request sent before a SEMP read to expire before a 5 s grace period
// started after it, which fails by a few milliseconds when SEMP answers at
// once.
//
// # What behaves as on a real broker
//
// Each item is exercised by this package's tests through the real Go client
// or a plain HTTP client, except where noted: the Go client cannot send
// RELEASED settlements, non-persistent guaranteed messages, oversized
// guaranteed messages, or resend an already-spooled message on demand, so
// those are driven with raw SMF frames, as is the silent-client timeout.
//
//   - Login with basic authentication against the configured users (and
//     client usernames created over SEMP) and message VPNs; a wrong password or unknown user gives the client a
//     *solace.AuthenticationError. A VPN's authenticationBasicType "none"
//     accepts any password, a disabled VPN refuses logins (503) and drops
//     its clients, and disabled basic authentication answers 401 "Basic
//     Authentication Is Shutdown". Over TLS, a client certificate logs in
//     when the VPN enables client-certificate authentication and its chain
//     leads to one of the broker's client certificate authorities (SEMP's
//     clientCertAuthorities); the username is the certificate's common name,
//     or the client's own when the VPN allows API-provided usernames.
//     OAuth 2.0 / OpenID Connect login (over TLS, as the client requires)
//     when the VPN enables it: the client's ID token, access token and
//     issuer identifier (login extended parameters 0x30, 0x31, 0x2f) pick
//     an enabled OAuth profile by issuer (the identifier, else the tokens'
//     "iss", else the VPN's authenticationOauthDefaultProfileName); a
//     "client"-role profile validates the ID token (signature,
//     "typ", "iss", "aud" holding its client id, expiry), a
//     "resource-server" one the access token as a JWT (signature, expiry,
//     and the type, issuer, audience and scope checks it enables). Keys
//     come from the profile's endpointJwks, fetched over HTTPS trusting the
//     domain certificate authorities (SEMP), cached for its refresh
//     interval and fetched again when no key verifies. The client username
//     is the profile's username claim. OAuthServer (and the devbroker's
//     --oauth-addr) serves a provider's JWKS and userinfo and mints tokens,
//     and issues short-lived ones with the client_credentials grant at
//     /token (--oauth-client, --oauth-token-ttl), signing with a key that
//     RotateKey (POST /rotate-key) replaces. SEMP takes such access tokens
//     as "Authorization: Bearer" when SetSEMPOAuthProfile names a profile.
//     Kerberos login (the client's AUTHENTICATION_SCHEME_GSS_KRB; facts
//     from its own traffic, in kerberos.go): ClientCtrl p17 = 0x02, the
//     GSS-API token of a Kerberos AP-REQ as login extended parameter 0x28;
//     the broker verifies it against its keytab with gokrb5
//     (EnableKerberos, --kerberos-keytab) when the VPN enables Kerberos,
//     and answers with an AP-REP token in the same parameter, which the
//     client requires (it asks for mutual authentication). The client
//     username is the client principal without the realm, or the
//     API-provided username where the VPN allows it. A refused ticket
//     (wrong service principal, a key not in the keytab) answers 401
//     "Unauthorized" (LOGIN_FAILURE); Kerberos off on the VPN answers 403
//     "Kerberos Authentication Is Shutdown", the status with which the
//     client maps the text to KERBEROS_AUTHENTICATION_IS_SHUTDOWN. An
//     expired ticket never reaches the broker: the client's GSS-API
//     library refuses it ("Ticket expired", LOGIN_FAILURE).
//     Keepalives are answered, and a client
//     silent for three of its keepalive intervals is dropped. A second login
//     with a client name already in use replaces the older session.
//   - Transports: plain TCP, TLS (with PubSub+'s cipher suites, RSA key
//     exchange included, and a configurable highest version), compressed
//     TCP (one raw DEFLATE stream each way), compressed TLS (the login asks
//     for it; DEFLATE inside TLS after the login response), and SMF over
//     WebSocket, plain and TLS. SEMP reports each client's tlsVersion and
//     OpenSSL cipher name. TLS downgrade: a TLS client that asks for plain
//     text after its login (login parameter 21 = 0) gets it where the VPN
//     allows it (tlsAllowDowngradeToPlainTextEnabled): after the login
//     response the client's close_notify is answered with the broker's and
//     the session goes on in plain text on the same TCP connection
//     (SEMP's tlsDowngradedToPlainText).
//   - The health-check listener answers /health-check/direct-active and
//     /health-check/guaranteed-active with 200, and 503 while logins are
//     refused; SEMP's /SEMP/v2/{config,monitor,action}/help/ pages need no
//     authentication.
//   - Direct messaging with Solace wildcards: "*" for a level, "ab*" for a
//     level prefix, a last-level ">" for one or more levels. A direct message
//     reaches each matching session once, and is also spooled to matching
//     queues. Request-reply works through the P2P inbox topic. Shared
//     subscriptions "#share/<name>/<topic>" deliver each message to one
//     member of each share group, in turn.
//   - ACL profiles: publish-topic, subscribe-topic and subscribe-share-name
//     exceptions (SEMP) deny: a denied subscription fails with 403
//     "Subscription ACL Denied" (SUBSCRIPTION_ACL_DENIED), a denied guaranteed
//     publish is nacked 403 "Publish ACL Denied", a denied direct message is
//     dropped.
//   - Publisher flows with cumulative acks; persistent messages are spooled to
//     every queue with a matching subscription, or to one queue with
//     "#P2P/QUE/<name>" or "#P2P/QUE/v:<router>/<name>". Nacks carry a text
//     from which the client derives its subcode: 400 "Queue Not Found"
//     (QUEUE_NOT_FOUND) for an unknown queue, 503 "Queue Shutdown" when
//     ingress is off, 503 "Spool Over Quota" above MaxMsgSpoolUsage, 503
//     "No Subscription Match" when the client profile rejects messages no
//     queue subscribes to.
//   - Messages above the maximum size: a frame larger than the broker holds
//     is read header-only and its payload skipped; a direct message is
//     discarded and a guaranteed one nacked 400 "Document Is Too Large". The
//     connection stays up.
//   - Consumer flows on durable and temporary queues (created by a bind with
//     durability 2 and named #P2P/QTMP/v:<router>/<name>, deleted with their
//     flow, kept 60 s after their session is lost so a reconnecting client
//     finds its messages). A bind whose durability contradicts the queue's
//     fails with "Invalid Queue or Topic Endpoint Durability"
//     (INVALID_DURABILITY). Delivery honours the client's window (never more
//     than window deliveries beyond its last transport ack) and a 10 000
//     delivered-unacked limit per flow, in order.
//   - Endpoint provisioning from the client (EndpointProvisioner, and
//     receivers with the create-on-start strategy): durable queues with
//     access type, permission, quota, maximum message size, respect-TTL,
//     discard notification and maximum redelivery; "Already Exists",
//     "Endpoint Property Mismatch", "Invalid Queue Name" and "Unknown Queue"
//     as a real broker words them, so the client's ignore flags work. The
//     client profile gates it (allowGuaranteedEndpointCreate and its
//     durability), temporary-queue binds included (403 "Permission Not
//     Allowed").
//   - A client may not add or remove a #P2P/QUE/ subscription on a queue,
//     nor remove a subscription management added (PERMISSION_NOT_ALLOWED).
//   - Settlement: ACCEPTED removes; FAILED redelivers with the redelivered
//     flag and an incremented delivery count; RELEASED requeues without
//     counting; REJECTED moves to the DMQ (if configured, existing and the
//     message is DMQ-eligible) or discards. After MaxRedeliveryCount
//     redeliveries the next failure dead-letters the message.
//   - Message replay, only once a replay log is configured (CreateReplayLog
//     or SEMP's replayLogs; it records what is published from then on): on
//     binding an exclusive durable queue, from the beginning, from a time
//     (the Go client sends whole seconds) or after a replication group
//     message id, and through SEMP's startReplay action. The queue is
//     emptied, then the logged guaranteed messages it subscribes to (or that
//     were published to it by #P2P/QUE/) are re-spooled with their original
//     ids. Refusals follow the real texts: no replay log ("Replay
//     Disabled"), non-exclusive, temporary or inactive flows, and an unknown
//     start id (403 "Replay Start Message Unavailable").
//   - Consumer flows with a selector get only the messages it selects;
//     others stay queued for other consumers.
//   - Exclusive queues deliver to the first-bound flow; the next takes over
//     (with an active-flow indication) when it leaves, and gets its
//     unsettled messages, flagged. Non-exclusive queues round-robin.
//     Partitioned queues (PartitionCount) pin each partition key
//     (JMSXGroupID) to one consumer; flows beyond the partition count are
//     inactive.
//   - Disabling a queue's egress makes its flows inactive (the client's
//     passivation listener fires) and enabling it reactivates them; deleting
//     a queue unbinds its consumers, which terminates their receivers.
//   - Every publisher attribute reaches the consumer intact (payload, ids,
//     timestamps, sequence number, priority, TTL, DMQ eligibility, reply-to
//     (checked with request-reply: the Go API sets it on no other message),
//     sender id, class of service, user properties): the broker forwards the
//     publisher's header parameters and payload byte for byte, and adds the
//     delivery ids, the redelivered flag, a delivery count and a replication
//     group message id (stable across redeliveries).
//   - TTL: on queues with RespectTTL, expired messages go to the DMQ when
//     DMQ-eligible, otherwise they are discarded (as on a real broker, TTL is
//     ignored by queues that do not respect it; SEMP's default is off).
//   - Reconnection: when a connection drops, its consumer flows' unsettled
//     messages are requeued as redeliveries; the client logs in again,
//     resumes its publisher flow by name (the broker answers with the last
//     message id it processed, and acks without re-spooling any resent
//     message at or below it), re-subscribes and re-binds. As on PubSub+, a
//     publisher flow takes messages only in sequence (each one's previous id,
//     P18, must be the last id processed): an out-of-order message is
//     discarded unacknowledged for the client to resend, frames that reach
//     the broker late on a replaced connection are discarded, and the resend
//     of a nacked message is nacked again. The faultproxy sub-package breaks
//     the network between a client and the broker (resets, black-holes,
//     refused connections) for tests of this.
//     SEMP's disconnect action drops a client's connection the same way.
//   - SEMP: queues and their subscriptions (config and monitor), a queue's
//     messages (monitor msgs), clients and their subscriptions (monitor,
//     with message and byte counters, software version, platform and
//     description as the client's API reported them), the msgVpn (GET,
//     PATCH), client profiles, client usernames, client certificate
//     authorities, OAuth profiles, authorization groups, domain
//     certificate authorities, ACL profiles and exceptions, replay logs, and the
//     disconnect, startReplay, deleteMsgs (purge) and msgs/{msg}/delete
//     actions. Paths, bodies, envelopes and
//     error codes follow the SEMPv2 2.34 specs, which sempspec_test.go
//     checks every test exchange against. Attributes the broker does not
//     model are refused (NOT_SUPPORTED) rather than silently ignored, unless
//     set to their defaults.
//
// # Known differences from a real broker
//
//   - No replication (a standby shares the data directory instead), clustering, bridges, MQTT/AMQP/REST/JMS
//     ports, or certificate revocation checks. OAuth
//     login has no token introspection or endpoint discovery (their
//     attributes are refused unless at their defaults) and never calls the
//     userinfo endpoint (kept for SEMP),
//     authorization groups are kept for SEMP but grant nothing (clients
//     are authorized by client username), a session is not cut when its
//     token expires, and a refused OAuth login answers 401 "Unauthorized"
//     (401 "OAuth Authentication Is Shutdown" when the VPN disables it),
//     texts chosen for the LOGIN_FAILURE subcode the client derives.
//     Every client uses its VPN's "default" client profile and ACL profile,
//     whose default actions are allow (only exceptions deny); client
//     usernames carry a password and an enabled switch only. Kerberos
//     login takes no PAC or authorization data into account and answers
//     no KRB-ERROR tokens. A client
//     asking to downgrade TLS to plain text where the VPN does not allow it
//     is refused with 403 "TLS Downgrade To Plain Text Not Allowed" (a
//     chosen text).
//   - Not implemented, and so not advertised to the client: queue browsers,
//     transactions and XA, topic endpoints, SolCache. A client that asks for
//     them fails locally or gets an error answer.
//   - Selectors implement the JMS selector language (comparisons, AND/OR/NOT
//     with SQL's three-valued logic, arithmetic, BETWEEN, IN, LIKE with
//     ESCAPE, IS NULL) over user properties and JMSCorrelationID,
//     JMSMessageID (the application message id), JMSType, JMSPriority and
//     JMSDeliveryMode; other JMS header names are looked up as properties.
//     A bad selector is refused with 400 "Invalid Selector".
//   - A client (SMP) adding a queue subscription that already exists
//     succeeds; the package API and SEMP report ErrSubscriptionExists.
//   - A queue with egress disabled refuses new binds ("Queue Shutdown").
//   - Partitioned queues rebalance after their rebalance delay and hand a
//     moved partition over once its old owner settled what it held, or after
//     3 s, when what it still holds is redelivered, flagged, to the new
//     owner (partitionRebalanceMaxHandoffTime is stored, not applied).
//   - The replay log keeps at most 100 000 guaranteed messages (64 MiB of
//     payload) of its VPN, whatever their topic; its quota is not enforced.
//   - Messages moved to a DMQ lose their TTL. Delivered-but-unsettled
//     messages never expire until they are requeued. A queue's maxMsgSize is
//     kept for SEMP; only the broker-wide maximum is enforced.
//   - The spool quota is checked per message against payload bytes only.
//   - Message ids on deliveries come from one broker-wide counter; status
//     texts for error cases a real broker may word differently were chosen
//     for the subcode the client derives from them.
//   - SEMP reads of a client first let the broker handle what that client
//     has already sent (and wait for its socket to stay quiet for 3 ms, at
//     most 200 ms), standing in for a real broker's slower management plane
//     that tests publishing and then reading counters rely on. Otherwise
//     SEMP answers at once; Config.SEMPMonitorDelay (devbroker
//     --semp-monitor-delay) holds monitor requests for tests whose timing
//     assumes a real broker's latency.
//   - The Go client v1.10.1 has no GetDeliveryCount; the delivery count the
//     broker sends is visible in InboundMessage.String() and to other APIs.
//   - Faults (Broker.Faults): PauseDelivery stops guaranteed delivery only;
//     direct messages flow on.
//   - IgnoreConsumerWindows delivers past the consumers' windows, so that the
//     Go client drops what overflows its buffer (a stalled, bound flow).
//   - RefuseLogins answers 503 "Service Unavailable".
package solacetest
