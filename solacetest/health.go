package solacetest

// This file is the health-check listener: the plain-HTTP endpoint that
// PubSub+ serves (by default on port 5550) for load balancers and
// orchestrators to ask whether the broker is ready for direct and for
// guaranteed messaging. Solace's own client test suite waits on it before it
// starts.

import "net/http"

// Health-check paths, as PubSub+ serves them.
const (
	healthDirectActive     = "/health-check/direct-active"
	healthGuaranteedActive = "/health-check/guaranteed-active"
)

// healthHandler answers 200 on both paths while the broker accepts logins and
// 503 while it refuses them (RefuseLogins), as a standby broker does. Every
// other path is 404. Like PubSub+'s, it needs no authentication.
func healthHandler(b *Broker) http.Handler {
	mux := http.NewServeMux()
	ready := func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		refusing := b.faults.refusingLogins()
		b.mu.Unlock()
		w.Header().Set("Cache-Control", "no-store")
		if refusing {
			http.Error(w, "Service Unavailable", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}
	mux.HandleFunc("GET "+healthDirectActive, ready)
	mux.HandleFunc("GET "+healthGuaranteedActive, ready)
	return mux
}

// HealthURL is the health-check listener's base URL, "http://127.0.0.1:PORT",
// or "" when Config.HealthAddr was empty.
func (b *Broker) HealthURL() string {
	if b.healthLn == nil {
		return ""
	}
	return "http://" + b.healthLn.Addr().String()
}
