package input

import (
	"errors"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/tracingcfg"
)

// Register adds this package's inputs (solace, jms) to env. A blank import already
// adds them to Benthos's global environment; Register is for builds that
// assemble their own, e.g. from service.NewEmptyEnvironment, to offer only a
// chosen set of components. As with any Benthos registration, a component of
// the same name already in env is replaced.
func Register(env *service.Environment) error {
	return errors.Join(
		env.RegisterBatchInput("solace", solaceInputSpec(), traced("solace", newSolaceInputFromParsed)),
		env.RegisterBatchInput("jms", jmsInputSpec(), traced("jms", newJMSReaderFromParsed)),
	)
}

// traced is the constructor newIn of the input called name, with the input
// wrapped in its extract_tracing_map.
func traced[T service.BatchInput](name string, newIn func(*service.ParsedConfig, *service.Resources) (T, error)) service.BatchInputConstructor {
	return func(conf *service.ParsedConfig, mgr *service.Resources) (service.BatchInput, error) {
		in, err := newIn(conf, mgr)
		if err != nil {
			return nil, err
		}
		return tracingcfg.WrapInput(conf, mgr, name, in)
	}
}

// init is what a blank import of this package runs: it registers the
// components with Benthos's global environment.
func init() {
	if err := Register(service.GlobalEnvironment()); err != nil {
		panic(err)
	}
}
