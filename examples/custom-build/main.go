// Command custom-build is a minimal Benthos distribution of your own with the
// connect-solace plugins compiled in: Benthos's standard pure and io
// components, every connect-solace component (the solace and jms inputs and
// outputs, the solace_request_reply processor), and (optional) the devbroker
// subcommand. Build it with CGO_ENABLED=1 and a C compiler; the
// Solace client links its C library through cgo.
//
//	go build -o my-benthos .
//	./my-benthos list inputs outputs
//	./my-benthos run pipeline.yaml
package main

import (
	"context"

	"github.com/redpanda-data/benthos/v4/public/service"

	// Benthos's standard components: generate, mapping, stdin/stdout,
	// files, http, ... Add whatever else your distribution offers.
	_ "github.com/redpanda-data/benthos/v4/public/components/io"
	_ "github.com/redpanda-data/benthos/v4/public/components/pure"

	// connect-solace: the solace and jms inputs and outputs and the
	// solace_request_reply processor (or import input, output or processor
	// alone for some of them).
	_ "github.com/connect-solace/connect-solace/plugins"

	// Optional: the `devbroker` subcommand, a local Solace test broker.
	"github.com/connect-solace/connect-solace/solacetest/devbroker"
)

func main() {
	service.RunCLI(context.Background(),
		service.CLIOptSetProductName("my-benthos"),
		service.CLIOptSetBinaryName("my-benthos"),
		devbroker.CLIOpt(),
	)
}
