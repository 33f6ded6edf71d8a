package main

import "github.com/connect-solace/connect-solace/solacetest/devbroker"

// The devbroker subcommand runs the solacetest broker on fixed ports, so that
// pipelines can be developed and tried without a Solace broker.
func init() {
	extraCommands = append(extraCommands, devbroker.CLIOpt())
}
