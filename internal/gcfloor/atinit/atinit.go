// Package atinit installs the binary's garbage-collector floor
// (gcfloor.Start with gcfloor.DefaultFloor) while packages initialise, for
// the connect-solace binary only, which imports it for that side effect.
//
// The component registrations in the other packages' init functions
// (Benthos's and ours) allocate some 30 MiB of config specs and parsed
// lint rules, mostly garbage at once. Started from main, the floor came too
// late for them: the runtime's 4 MiB minimum heap had the collector run
// about ten times before main, a fifth of the start-up CPU. This package
// imports only the standard library and gcfloor, so Go initialises it before
// those registrations (packages are initialised as soon as their imports
// are, in import-path order).
package atinit

import "github.com/connect-solace/connect-solace/internal/gcfloor"

func init() { gcfloor.Start(gcfloor.DefaultFloor) }
