package main

import "github.com/connect-solace/connect-solace/solacetest/devbroker"

// The devbroker subcommand runs the solacetest broker on fixed ports, so that
// pipelines can be developed and tried without a Solace broker. It lives in
// solacetest/devbroker so that Benthos builds of users' own can add it too.
func init() {
	extraCommands = append(extraCommands, devbroker.CLIOpt())
}
