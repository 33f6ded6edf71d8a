package session

import "errors"

// Labeller is an error that names itself for a metric label: a bounded,
// stable name (such as "connection_lost"), never free text.
type Labeller interface {
	error
	Label() string
}

// ErrorLabel returns the label of the first error in err's chain that has
// one, or "" when none has.
func ErrorLabel(err error) string {
	var l Labeller
	if errors.As(err, &l) {
		return l.Label()
	}
	return ""
}

// labelled is a sentinel error with its label.
type labelled struct{ msg, label string }

func (e *labelled) Error() string { return e.msg }
func (e *labelled) Label() string { return e.label }
