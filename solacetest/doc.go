// Package solacetest is a wire-level Solace PubSub+ test broker for Go tests:
// start one per test with NewTestBroker and point the real Solace client, or
// pipelines using the connect-solace plugins, at it instead of a real broker.
//
// It speaks SMF (Solace Message Format) over TCP, and over TLS when given a
// certificate, faithfully enough that the unmodified Solace Go client
// (solace.dev/go/messaging v1.10.1) connects, publishes, subscribes, binds to
// queues and settles messages as it would against a real broker. It also
// serves a subset of SEMPv2 for queue administration. It is test and
// development infrastructure, in the spirit of net/http/httptest, and it is
// not a production broker: everything lives in memory.
//
//	b := solacetest.NewTestBroker(t, solacetest.Config{})
//	_ = b.CreateQueue("default", solacetest.QueueConfig{Name: "orders", Subscriptions: []string{"orders/>"}})
//	// point the client at b.SMFURL() with user default / password default
//
// # Layout
//
// codec.go turns bytes into frames and back (fuzzed by FuzzDecode);
// session.go owns a client connection (login, keepalive, subscriptions,
// publisher flow, binds); router.go matches topics; spool.go holds queues,
// consumer flows, windows, settlement, redelivery, DMQ and TTL (what happens
// when a client settles FAILED is Broker.settle there); selector.go and
// replay.go add consumer selectors and message replay; faults.go holds the
// fault-injection hooks; semp.go is the HTTP API.
//
// # What behaves as on a real broker
//
// Each item is exercised by this package's tests through the real Go client,
// except where noted: the Go client cannot send RELEASED settlements,
// non-persistent guaranteed messages, or resend an already-spooled message
// on demand, so those are driven with raw SMF frames, as is the
// silent-client timeout.
//
//   - Login with basic authentication against the configured users and
//     message VPNs; a wrong password or unknown user gives the client a
//     *solace.AuthenticationError. Keepalives are answered, and a client
//     silent for three of its keepalive intervals is dropped. A second login
//     with a client name already in use replaces the older session.
//   - Direct messaging with Solace wildcards: "*" for a level, "ab*" for a
//     level prefix, a last-level ">" for one or more levels. A direct message
//     reaches each matching session once, and is also spooled to matching
//     queues. Request-reply works through the P2P inbox topic.
//   - Publisher flows with cumulative acks; persistent messages are spooled to
//     every queue with a matching subscription, or to one queue with
//     "#P2P/QUE/<name>" or "#P2P/QUE/v:<router>/<name>". Nacks carry a text
//     from which the client derives its subcode: 400 "Queue Not Found"
//     (QUEUE_NOT_FOUND) for an unknown queue, 503 "Queue Shutdown" when
//     ingress is off, 503 "Spool Over Quota" above MaxMsgSpoolUsage.
//   - Consumer flows on durable and temporary queues (created by a bind with
//     durability 2, deleted with their flow, kept 60 s after their session
//     is lost so a reconnecting client finds its messages). Delivery honours
//     the client's window (never more than window deliveries beyond its last
//     transport ack) and a 10 000 delivered-unacked limit per flow, in order.
//   - Settlement: ACCEPTED removes; FAILED redelivers with the redelivered
//     flag and an incremented delivery count; RELEASED requeues without
//     counting; REJECTED moves to the DMQ (if configured, existing and the
//     message is DMQ-eligible) or discards. After MaxRedeliveryCount
//     redeliveries the next failure dead-letters the message.
//   - Message replay on binding an exclusive durable queue: from the
//     beginning, from a time (the Go client sends whole seconds) or after a
//     replication group message id. The queue is emptied, then the logged
//     guaranteed messages it subscribes to (or that were published to it by
//     #P2P/QUE/) are re-spooled with their original ids. Refusals follow the
//     real texts: non-exclusive, temporary or inactive flows, and an unknown
//     start id (403 "Replay Start Message Unavailable").
//   - Consumer flows with a selector get only the messages it selects;
//     others stay queued for other consumers.
//   - Exclusive queues deliver to the first-bound flow; the next takes over
//     (with an active-flow indication) when it leaves, and gets its
//     unsettled messages, flagged. Non-exclusive queues round-robin.
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
//
// # Known differences from a real broker
//
//   - No persistence, replication, clustering, bridges, MQTT/AMQP/REST/JMS
//     ports, compression, WebSockets, client-certificate/OAuth/Kerberos
//     login, ACL profiles or client usernames' permissions: any configured
//     user may do anything in any configured VPN.
//   - Not implemented, and so not advertised to the client: queue browsers,
//     transactions and XA, shared subscriptions, topic
//     endpoints, endpoint creation from the client (use the package API or
//     SEMP). A client that asks for them fails locally or gets an error
//     answer.
//   - Selectors implement the JMS selector language (comparisons, AND/OR/NOT
//     with SQL's three-valued logic, arithmetic, BETWEEN, IN, LIKE with
//     ESCAPE, IS NULL) over user properties and JMSCorrelationID,
//     JMSMessageID (the application message id), JMSType, JMSPriority and
//     JMSDeliveryMode; other JMS header names are looked up as properties.
//     A bad selector is refused with 400 "Invalid Selector".
//   - Publishing to a topic that no queue subscribes to is acked (a real
//     broker's default); publishing never answers "No Subscription Match".
//   - A client (SMP) adding a queue subscription that already exists
//     succeeds; the package API and SEMP report ErrSubscriptionExists.
//   - A queue with egress disabled refuses new binds ("Queue Shutdown") but
//     leaves bound flows bound, delivering nothing.
//   - The replay log keeps the last 100 000 guaranteed messages (at most
//     64 MiB of payload) of each VPN, whatever their topic.
//   - Messages moved to a DMQ lose their TTL. Delivered-but-unsettled
//     messages never expire until they are requeued.
//   - The spool quota is checked per message against payload bytes only.
//   - Message ids on deliveries come from one broker-wide counter; status
//     texts for error cases a real broker may word differently were chosen
//     for the subcode the client derives from them.
//   - The Go client v1.10.1 has no GetDeliveryCount; the delivery count the
//     broker sends is visible in InboundMessage.String() and to other APIs.
//   - PauseDelivery stops guaranteed delivery only; direct messages flow on.
//   - RefuseLogins answers 503 "Service Unavailable".
package solacetest
