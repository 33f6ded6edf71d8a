package solacetest

import (
	"log/slog"
	"net/http"
)

// sempHandler returns the SEMP HTTP handler served on the SEMP listener.
// Until the SEMP implementation (semp.go) lands it answers 501.
func sempHandler(_ *Broker, _, _ string, _ *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "SEMP is not implemented yet", http.StatusNotImplemented)
	})
}
