//go:build manual

package output

import (
	"log/slog"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/solacetest"
	"github.com/connect-solace/connect-solace/solacetest/faultproxy"
)

// TestManualBlackHole is the long run, by hand and not in CI:
//
//	go test -tags manual -run TestManualBlackHole -v ./output/
//
// It publishes FAULT_MESSAGES (20000) persistent messages with the output's
// defaults through a FAULT_SECONDS (20) black-hole, FAULT_RUNS (3) times.
// FAULT_BROKER_LOG names a file for the broker's debug log.
func TestManualBlackHole(t *testing.T) {
	n, secs, runs := envInt("FAULT_MESSAGES", 20000), envInt("FAULT_SECONDS", 20), envInt("FAULT_RUNS", 3)
	for run := 1; run <= runs; run++ {
		cfg := solacetest.Config{}
		if path := os.Getenv("FAULT_BROKER_LOG"); path != "" {
			f, err := os.Create(path + "." + strconv.Itoa(run))
			require.NoError(t, err)
			defer f.Close()
			cfg.Logger = slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug}))
		}
		b := solacetest.NewTestBroker(t, cfg)
		res := runSoFault(t, b, soFaultCase{n: n, keepAlive: time.Duration(envInt("FAULT_KEEPALIVE_MS", 0)) * time.Millisecond, fault: func(p *faultproxy.Proxy) {
			<-p.BlackHoleFor(time.Duration(secs)*time.Second, false)
		}})
		t.Logf("run %d: %d messages, %d s black-hole: %d acked, %d lost %v, %d duplicates, %v",
			run, n, secs, res.acked, len(res.missing), res.missing, res.dups, res.elapsed.Round(time.Second))
		require.Empty(t, res.missing)
	}
}

func envInt(key string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(key)); err == nil {
		return v
	}
	return def
}
