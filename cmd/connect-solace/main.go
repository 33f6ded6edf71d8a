// Command connect-solace is a Benthos distribution with first-class Solace
// PubSub+ and JMS (AMQP 1.0) connectors. It runs every standard Benthos
// subcommand (run, lint, list, echo, create, test, streams, ...) plus
// project-specific ones such as devbroker.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/redpanda-data/benthos/v4/public/service"

	// Standard Benthos components: stdin/stdout, files, http, generate, ...
	_ "github.com/redpanda-data/benthos/v4/public/components/io"
	_ "github.com/redpanda-data/benthos/v4/public/components/pure"

	// Our plugins, all of them, register themselves in init().
	_ "github.com/connect-solace/connect-solace/plugins"

	// A pipeline's small live heap would have the collector run every few
	// MiB of messages; the floor spares that CPU unless GOGC or GOMEMLIMIT
	// is set (see internal/gcfloor). It is installed from an init function,
	// before the component registrations allocate their specs.
	_ "github.com/connect-solace/connect-solace/internal/gcfloor/atinit"
)

// Set at build time with
// -ldflags "-X main.Version=v1.2.3 -X main.DateBuilt=2026-01-01T00:00:00Z".
var (
	Version   = "dev"
	DateBuilt = "unknown"
)

// extraCommands holds project subcommands; files in this package append to it
// from init() so main stays a short list of options.
var extraCommands []service.CLIOptFunc

func main() {
	// Benthos prints only "Version: x"; operators want to see which
	// distribution they run, so --version names the product first.
	if len(os.Args) == 2 && (os.Args[1] == "--version" || os.Args[1] == "-v") {
		fmt.Printf("connect-solace %s\nVersion: %s\nDate: %s\n", Version, Version, DateBuilt)
		return
	}
	opts := []service.CLIOptFunc{
		service.CLIOptSetProductName("connect-solace"),
		service.CLIOptSetBinaryName("connect-solace"),
		service.CLIOptSetVersion(Version, DateBuilt),
		service.CLIOptSetDocumentationURL("https://github.com/connect-solace/connect-solace"),
	}
	service.RunCLI(context.Background(), append(opts, extraCommands...)...)
}
