package solacetest

import (
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// sempHandler returns the SEMP HTTP handler served on the SEMP listener,
// answering monitor requests no sooner than Config.SEMPMonitorDelay.
func sempHandler(b *Broker, user, password string, log *slog.Logger) http.Handler {
	h := newSEMPHandler(b, user, password, log)
	if b.cfg.DataDir != "" {
		h = persistConfigAfter(b, h)
	}
	delay := b.cfg.SEMPMonitorDelay
	if delay <= 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, sempMonitorBase+"/") {
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}
