package main

import (
	"fmt"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/urfave/cli/v2"

	"github.com/connect-solace/connect-solace/internal/docsgen"
)

// ourComponents are the components this distribution adds to Benthos, the
// ones `connect-solace docs` documents. Names not registered (yet) are
// skipped.
var ourComponents = docsgen.Selection{
	docsgen.KindInputs:     {"solace", "jms"},
	docsgen.KindOutputs:    {"solace", "jms"},
	docsgen.KindProcessors: {"solace_request_reply"},
	docsgen.KindMetrics:    {"prometheus"},
	docsgen.KindTracers:    {"open_telemetry_collector"},
}

func init() {
	extraCommands = append(extraCommands, service.CLIOptAddCommand(docsCommand()))
}

func docsCommand() *cli.Command {
	return &cli.Command{
		Name:  "docs",
		Usage: "Generate markdown reference pages for this distribution's components",
		Description: `Writes docs/components/{inputs,outputs,metrics,tracers}/<name>.md and an
index README.md from the plugin config specs. With --check it writes nothing
and exits non-zero when the pages under --out are stale.

  connect-solace docs --out docs/components
  connect-solace docs --out docs/components --check`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Value: "docs/components", Usage: "directory to write the pages to"},
			&cli.BoolFlag{Name: "check", Usage: "compare instead of writing; fail if the pages differ"},
		},
		Action: func(c *cli.Context) error {
			files, err := docsgen.Generate(service.GlobalEnvironment(), ourComponents)
			if err != nil {
				return err
			}
			out := c.String("out")
			if c.Bool("check") {
				stale, err := docsgen.Diff(out, files)
				if err != nil {
					return err
				}
				if len(stale) > 0 {
					return cli.Exit(fmt.Sprintf("component docs in %s are stale (%v): run make docs", out, stale), 1)
				}
				return nil
			}
			if err := docsgen.Write(out, files); err != nil {
				return err
			}
			fmt.Fprintf(c.App.Writer, "wrote %d files to %s\n", len(files), out)
			return nil
		},
	}
}
