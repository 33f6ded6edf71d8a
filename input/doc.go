// Package input provides the connect-solace Benthos inputs: solace, which
// consumes a Solace PubSub+ queue (or a topic through a queue it provisions)
// with at-least-once delivery, and jms, which consumes JMS queues and topic
// subscriptions over AMQP 1.0 and acknowledges after the pipeline. Import it, blank, into a Benthos build of your
// own and the inputs appear in that build's config, CLI and docs:
//
//	import _ "github.com/connect-solace/connect-solace/input"
//
// Importing the package only registers its inputs with Benthos's global
// environment (service.GlobalEnvironment). It defines no flags, starts no
// goroutines, opens no connections and reads no files until a pipeline that
// uses an input connects, and it needs no metrics or tracing plugin: the
// inputs report through whatever metrics and tracer the pipeline configures.
// To add the inputs to another environment, such as one made with
// service.NewEmptyEnvironment, call Register.
//
// The package links the Solace C client through cgo (solace.dev/go/messaging),
// so a build needs CGO_ENABLED=1 and a C compiler; that client's own init
// initialises its C library.
//
// The exported API of this package (the registered component names and
// their config fields, and Register) is stable within a major version of
// connect-solace; packages under internal/ are not part of it.
package input
