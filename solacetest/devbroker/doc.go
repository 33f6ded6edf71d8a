// Package devbroker is the `devbroker` subcommand: it runs the solacetest
// broker on fixed ports so that pipelines can be developed and tried without a
// Solace broker. connect-solace ships it; a Benthos build of your own adds it
// with one CLI option:
//
//	service.RunCLI(ctx, devbroker.CLIOpt())
//
// It is a development and test tool, never a production broker: messages
// live in memory, or with --data-dir DIR in a directory that survives a
// restart and kill -9; --data-dir DIR --standby starts an HA mate that takes
// over DIR when the broker holding it dies. Go tests should rather start a broker per test with
// solacetest.NewTestBroker.
package devbroker

import (
	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/urfave/cli/v2"
)

// CLIOpt adds the devbroker subcommand to a Benthos CLI built with
// service.RunCLI.
func CLIOpt() service.CLIOptFunc {
	return service.CLIOptAddCommand(Command())
}

// Command returns the devbroker subcommand, for CLIs assembled with
// urfave/cli directly.
func Command() *cli.Command { return devbrokerCommand() }
