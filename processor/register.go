package processor

import "github.com/redpanda-data/benthos/v4/public/service"

// Register adds this package's processors (solace_request_reply) to env. A
// blank import already adds them to Benthos's global environment; Register
// is for builds that assemble their own, e.g. from
// service.NewEmptyEnvironment, to offer only a chosen set of components. As
// with any Benthos registration, a component of the same name already in env
// is replaced.
func Register(env *service.Environment) error {
	return registerSolaceRequestReply(env)
}
