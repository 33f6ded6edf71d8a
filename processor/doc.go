// Package processor provides the connect-solace Benthos processors:
// solace_request_reply, which sends each message as a request to a Solace
// PubSub+ topic and replaces it with the reply. Import it, blank, into a
// Benthos build of your own and the processor appears in that build's
// config, CLI and docs:
//
//	import _ "github.com/connect-solace/connect-solace/processor"
//
// Importing the package only registers its processors with Benthos's global
// environment (service.GlobalEnvironment). It defines no flags, starts no
// goroutines, opens no connections and reads no files until a pipeline that
// uses a processor processes its first batch. To add the processors to
// another environment, such as one made with service.NewEmptyEnvironment,
// call Register.
//
// The solace_request_reply processor links the Solace C client through cgo
// (solace.dev/go/messaging), so a build needs CGO_ENABLED=1 and a C
// compiler.
//
// The exported API of this package (the registered component names and
// their config fields, and Register) is stable within a major version of
// connect-solace; packages under internal/ are not part of it.
package processor
