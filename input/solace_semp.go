package input

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/connect-solace/connect-solace/internal/semp"
	"github.com/connect-solace/connect-solace/internal/session"
)

// This file holds the solace input's SEMP job: building the SEMP client
// from the semp object (solacecfg's SEMP), provisioning the queue of a topic
// (and naming it) and checking a given queue.

// siQueuePrefix starts the names of queues the input provisions for a topic.
const siQueuePrefix = "connect-solace/"

// sempFromFields sets up SEMP access from the semp fields; r.conn must be
// set.
func (r *solaceReader) sempFromFields(f *siFields) (err error) {
	r.semp, err = f.semp.Access(r.conn)
	return err
}

// connectSEMP builds the SEMP client when there is none yet or when the
// password comes from a file. r.mu must be held.
func (r *solaceReader) connectSEMP() error {
	if r.semp != nil && (r.sempCli == nil || r.semp.PasswordFromFile()) {
		cli, err := r.semp.NewClient()
		if err != nil {
			return err
		}
		r.sempCli = cli
		r.sempLive.Store(cli)
	}
	return nil
}

// prepareQueue provisions the topic's queue, or checks the given queue, over
// SEMP. Both are repeated on every connect: cheap, idempotent, and they heal
// a queue or subscription deleted by an operator in the meantime.
func (r *solaceReader) prepareQueue(ctx context.Context, rc *session.ReceiverConfig) error {
	if r.topic != "" {
		want := r.qs.sempQueue(r.queue)
		created, err := r.sempCli.EnsureQueue(ctx, r.semp.VPN, want)
		if err != nil {
			return fmt.Errorf("provisioning queue %q for topic %q over SEMP: %w", r.queue, r.topic, err)
		}
		if !created {
			q, err := r.sempCli.GetQueue(ctx, r.semp.VPN, r.queue)
			if err != nil {
				return fmt.Errorf("reading queue %q over SEMP: %w", r.queue, err)
			}
			if err := r.checkExisting(q); err != nil {
				return err
			}
		}
		if err := r.sempCli.AddSubscription(ctx, r.semp.VPN, r.queue, r.topic); err != nil {
			return fmt.Errorf("subscribing queue %q to topic %q over SEMP: %w", r.queue, r.topic, err)
		}
		if created {
			r.log.Infof("Provisioned durable %s queue %q subscribed to %q", want.AccessType, r.queue, r.topic)
		}
	}
	q, err := r.sempCli.GetQueue(ctx, r.semp.VPN, r.queue)
	if err != nil {
		if semp.IsNotFound(err) {
			return fmt.Errorf("queue %q does not exist in VPN %q: %w", r.queue, r.semp.VPN, err)
		}
		return fmt.Errorf("reading queue %q over SEMP: %w", r.queue, err)
	}
	if q.AccessType == semp.AccessTypeExclusive && rc.Flows > 1 {
		r.log.Warnf("Queue %q is exclusive, so only one flow can receive; using 1 flow instead of %d (make the queue non-exclusive to consume in parallel)", r.queue, rc.Flows)
		rc.Flows = 1
	}
	return nil
}

// QueueNameForTopic is the documented default of queue_name: a readable,
// legal queue name derived from a topic subscription.
func QueueNameForTopic(topic string) string {
	var b strings.Builder
	b.WriteString(siQueuePrefix)
	for _, c := range topic {
		switch c {
		case '*':
			b.WriteString("_any_")
		case '>':
			b.WriteString("_all_")
		case '?', '<', '\'', '"', '&', ';':
			b.WriteByte('_')
		default:
			b.WriteRune(c)
		}
	}
	name := b.String()
	const maxLen = 200
	if len(name) > maxLen {
		sum := sha256.Sum256([]byte(topic))
		suffix := "-" + hex.EncodeToString(sum[:8])
		cut := maxLen - len(suffix)
		// Do not split a multi-byte rune.
		for cut > 0 && name[cut]&0xC0 == 0x80 {
			cut--
		}
		name = name[:cut] + suffix
	}
	return name
}
