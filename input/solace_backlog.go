package input

import (
	"context"
	"time"
)

// This file holds the solace input's backlog poller: it reads the queue's
// backlog over SEMP into the solace_input_backlog_* gauges.

// startBacklogPoll starts the poller once, when SEMP and a poll interval are
// set. r.mu must be held; Close stops it.
func (r *solaceReader) startBacklogPoll() {
	if r.sempCli != nil && r.pollEvery > 0 && r.stopPoll == nil {
		pctx, cancel := context.WithCancel(context.Background())
		r.stopPoll, r.pollDone = cancel, make(chan struct{})
		go r.pollBacklog(pctx, r.pollDone)
	}
}

func (r *solaceReader) pollBacklog(ctx context.Context, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(r.pollEvery)
	defer t.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, max(r.pollEvery, 5*time.Second))
		st, err := r.sempLive.Load().QueueStatus(pctx, r.semp.VPN, r.queue)
		cancel()
		switch {
		case err == nil:
			r.mBacklogMsg.Set(st.SpooledMsgCount)
			r.mBacklogB.Set(st.MsgSpoolUsage)
		case ctx.Err() == nil:
			r.log.Debugf("Reading the backlog of queue %q over SEMP: %v", r.queue, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
