package output

import (
	"errors"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/tracingcfg"
)

// Register adds this package's outputs (solace, jms) to env. A blank import
// already adds them to Benthos's global environment; Register is for builds
// that assemble their own, e.g. from service.NewEmptyEnvironment, to offer
// only a chosen set of components. As with any Benthos registration, a
// component of the same name already in env is replaced.
func Register(env *service.Environment) error {
	return errors.Join(
		env.RegisterBatchOutput("solace", solaceOutputSpec(), traced("solace", newSolaceOutput)),
		env.RegisterBatchOutput("jms", jmsOutputSpec(), traced("jms", newJMSOutput)),
	)
}

// traced is the constructor newOut of the output called name, with the
// output wrapped in its inject_tracing_map.
func traced(name string, newOut service.BatchOutputConstructor) service.BatchOutputConstructor {
	return func(conf *service.ParsedConfig, mgr *service.Resources) (service.BatchOutput, service.BatchPolicy, int, error) {
		out, policy, maxInFlight, err := newOut(conf, mgr)
		if err == nil {
			out, err = tracingcfg.WrapOutput(conf, mgr, name, out)
		}
		return out, policy, maxInFlight, err
	}
}

// init is what a blank import of this package runs: it registers the
// components with Benthos's global environment.
func init() {
	if err := Register(service.GlobalEnvironment()); err != nil {
		panic(err)
	}
}
