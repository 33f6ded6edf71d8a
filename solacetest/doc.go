// Package solacetest is a wire-level Solace PubSub+ test broker.
//
// It speaks SMF (Solace Message Format) over TCP, and optionally TLS,
// faithfully enough that the unmodified Solace Go client
// (solace.dev/go/messaging v1.10.1) connects, publishes, subscribes, binds to
// queues and settles messages as it would against a real broker. It is test
// and development infrastructure, in the spirit of net/http/httptest; it is
// not a production broker.
//
// TODO: faithfulness section.
package solacetest
