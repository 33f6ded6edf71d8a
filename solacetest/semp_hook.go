package solacetest

import (
	"log/slog"
	"net/http"
)

// sempHandler returns the SEMP HTTP handler served on the SEMP listener.
func sempHandler(b *Broker, user, password string, log *slog.Logger) http.Handler {
	return newSEMPHandler(b, user, password, log)
}
