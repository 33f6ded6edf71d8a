// Package output provides the connect-solace Benthos outputs: solace, which
// publishes to Solace PubSub+ topics and queues (persistent publishes are
// reported done only once the broker confirmed them), and jms, which sends
// JMS-compatible messages over AMQP 1.0 to brokers such as ActiveMQ,
// Artemis, RabbitMQ and Solace. Import it, blank, into a Benthos build of
// your own and the outputs appear in that build's config, CLI and docs:
//
//	import _ "github.com/connect-solace/connect-solace/output"
//
// Importing the package only registers its outputs with Benthos's global
// environment (service.GlobalEnvironment). It defines no flags, starts no
// goroutines, opens no connections and reads no files until a pipeline that
// uses an output connects, and it needs no metrics or tracing plugin: the
// outputs report through whatever metrics and tracer the pipeline
// configures. To add the outputs to another environment, such as one made
// with service.NewEmptyEnvironment, call Register.
//
// The solace output links the Solace C client through cgo
// (solace.dev/go/messaging), so a build needs CGO_ENABLED=1 and a C
// compiler; that client's own init initialises its C library.
//
// The exported API of this package (the registered component names and
// their config fields, and Register) is stable within a major version of
// connect-solace; packages under internal/ are not part of it.
package output
