package session

// Logger is what the session layer logs through. The plugins pass their
// *service.Logger, which has these methods; a nil Logger logs nothing.
type Logger interface {
	Debugf(format string, args ...any)
	Infof(format string, args ...any)
	Warnf(format string, args ...any)
	Errorf(format string, args ...any)
}

// orNop returns log, or a Logger that drops everything when log is nil.
func orNop(log Logger) Logger {
	if log == nil {
		return nopLogger{}
	}
	return log
}

type nopLogger struct{}

func (nopLogger) Debugf(string, ...any) {}
func (nopLogger) Infof(string, ...any)  {}
func (nopLogger) Warnf(string, ...any)  {}
func (nopLogger) Errorf(string, ...any) {}
