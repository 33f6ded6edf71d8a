// Package plugins is every connect-solace component at once: the solace and
// jms inputs and outputs and the solace_request_reply processor. A blank
// import registers them all with Benthos's global environment, as the
// connect-solace binary does; Register adds them to an environment of your
// own. Import input, output or processor instead to take only some.
package plugins

import (
	"errors"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/input"
	"github.com/connect-solace/connect-solace/output"
	"github.com/connect-solace/connect-solace/processor"
)

// Register adds every connect-solace component to env (input.Register,
// output.Register and processor.Register). As with any Benthos
// registration, a component of the same name already in env is replaced.
func Register(env *service.Environment) error {
	return errors.Join(input.Register(env), output.Register(env), processor.Register(env))
}
