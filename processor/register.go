package processor

import "github.com/redpanda-data/benthos/v4/public/service"

// Register adds this package's processors (solace_request_reply) to env. A
// blank import already adds them to Benthos's global environment; Register
// is for builds that assemble their own, e.g. from
// service.NewEmptyEnvironment, to offer only a chosen set of components. As
// with any Benthos registration, a component of the same name already in env
// is replaced.
func Register(env *service.Environment) error {
	return env.RegisterBatchProcessor("solace_request_reply", solaceRequestReplySpec(),
		func(conf *service.ParsedConfig, mgr *service.Resources) (service.BatchProcessor, error) {
			return newSolaceRequestReplyFromParsed(conf, mgr)
		})
}

// init is what a blank import of this package runs: it registers the
// components with Benthos's global environment.
func init() {
	if err := Register(service.GlobalEnvironment()); err != nil {
		panic(err)
	}
}
