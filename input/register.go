package input

import (
	"errors"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// Register adds this package's inputs (solace, jms) to env. A blank import already
// adds them to Benthos's global environment; Register is for builds that
// assemble their own, e.g. from service.NewEmptyEnvironment, to offer only a
// chosen set of components. As with any Benthos registration, a component of
// the same name already in env is replaced.
func Register(env *service.Environment) error {
	return errors.Join(
		env.RegisterBatchInput("solace", solaceInputSpec(), newSolaceInput),
		env.RegisterBatchInput("jms", jmsInputSpec(), func(conf *service.ParsedConfig, mgr *service.Resources) (service.BatchInput, error) {
			return newJMSReaderFromParsed(conf, mgr)
		}),
	)
}

// init is what a blank import of this package runs: it registers the
// components with Benthos's global environment.
func init() {
	if err := Register(service.GlobalEnvironment()); err != nil {
		panic(err)
	}
}
