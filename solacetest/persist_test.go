package solacetest

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/connect-solace/connect-solace/solacetest/internal/store"
	"github.com/stretchr/testify/require"
	"solace.dev/go/messaging/pkg/solace/resource"
)

// startDataBroker starts a broker on dir (and on the given SMF address, ""
// for an ephemeral one); the test closes it unless it did so itself.
func startDataBroker(t *testing.T, dir, smfAddr string, segLimit int64) *Broker {
	t.Helper()
	b, err := Start(Config{DataDir: dir, SMFAddr: smfAddr, dataSegmentLimit: segLimit, Logger: testLogger(t)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// TestDataDirKeepsStateAcrossRestart publishes to a queue, takes some
// messages without settling them, restarts the broker on the same data
// directory and requires the queue, its subscriptions, every message with
// its attributes, and the redelivered flag on exactly the messages that were
// delivered before.
func TestDataDirKeepsStateAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	b := startDataBroker(t, dir, "", 0)
	require.NoError(t, b.CreateQueue("default", QueueConfig{Name: "q1", Subscriptions: []string{"orders/>"}, MaxRedeliveryCount: 7}))
	svc := connect(t, b, nil)
	pub := startPublisher(t, svc)
	for i := range 10 {
		msg, err := svc.MessageBuilder().WithProperty("k", fmt.Sprint(i)).WithPriority(3).BuildWithByteArrayPayload([]byte(fmt.Sprint("m", i)))
		require.NoError(t, err)
		require.NoError(t, pub.PublishAwaitAcknowledgement(msg, resource.TopicOf("orders/new"), 5*time.Second, nil))
	}
	rcv := startReceiver(t, svc, resource.QueueDurableExclusive("q1"), nil)
	for i := range 3 {
		msg := receive(t, rcv)
		require.Equal(t, fmt.Sprint("m", i), payloadOf(t, msg))
		if i == 0 {
			require.NoError(t, rcv.Ack(msg))
		}
	}
	require.Eventually(t, func() bool {
		_, st, err := b.Queue("default", "q1")
		return err == nil && st.SpooledMsgCount == 9
	}, 5*time.Second, time.Millisecond, "the ack reaches the broker")
	before, err := b.QueueMsgs("default", "q1")
	require.NoError(t, err)
	require.False(t, before[0].Undelivered, "m1 was delivered")
	_ = svc.Disconnect()
	require.NoError(t, b.Close())

	b2 := startDataBroker(t, dir, "", 0)
	require.Empty(t, b2.DataDirDamage())
	cfg, st, err := b2.Queue("default", "q1")
	require.NoError(t, err)
	require.Equal(t, []string{"orders/>"}, cfg.Subscriptions)
	require.Equal(t, 7, cfg.MaxRedeliveryCount)
	require.Equal(t, 9, st.SpooledMsgCount, "the settled message is gone, the rest kept")
	after, err := b2.QueueMsgs("default", "q1")
	require.NoError(t, err)
	require.Len(t, after, len(before))
	for i, m := range after {
		want := before[i]
		require.True(t, want.SpooledAt.Equal(m.SpooledAt))
		want.SpooledAt = m.SpooledAt
		require.Equal(t, want, m, "ids, rgmids and attributes survive")
	}

	svc2 := connect(t, b2, nil)
	rcv2 := startReceiver(t, svc2, resource.QueueDurableExclusive("q1"), nil)
	for i := 1; i < 10; i++ {
		msg := receive(t, rcv2)
		require.Equal(t, fmt.Sprint("m", i), payloadOf(t, msg))
		require.Equal(t, !before[i-1].Undelivered, msg.IsRedelivered(), "message %d: flagged if and only if it was delivered before", i)
		k, ok := msg.GetProperty("k")
		require.True(t, ok)
		require.Equal(t, fmt.Sprint(i), k)
		prio, _ := msg.GetPriority()
		require.Equal(t, 3, prio)
		require.NoError(t, rcv2.Ack(msg))
	}
	// The replay log came back too.
	require.NoError(t, b2.StartReplay("default", "q1", "default", time.Time{}, ""))
	for i := range 10 {
		require.Equal(t, fmt.Sprint("m", i), payloadOf(t, receive(t, rcv2)))
	}
}

// TestDataDirPublisherFlowSurvives requires the broker to keep a publisher
// flow's last message id: the client's resend of a message the dead broker
// had processed is dropped as a duplicate, not spooled twice.
func TestDataDirPublisherFlowSurvives(t *testing.T) {
	dir := t.TempDir()
	b := startDataBroker(t, dir, "", 0)
	require.NoError(t, b.CreateQueue("default", QueueConfig{Name: "q1", Subscriptions: []string{"orders/>"}}))
	svc := connect(t, b, nil)
	publish(t, svc, startPublisher(t, svc), "orders/1", "one")
	b.mu.Lock()
	var name string
	var last uint64
	for n, pf := range b.vpns["default"].pubFlows {
		name, last = n, pf.lastID
	}
	b.mu.Unlock()
	_ = svc.Disconnect()
	require.NoError(t, b.Close())

	b2 := startDataBroker(t, dir, "", 0)
	b2.mu.Lock()
	pf := b2.vpns["default"].pubFlows[name]
	b2.mu.Unlock()
	require.NotNil(t, pf, "publisher flow %q", name)
	require.Equal(t, last, pf.lastID)

	// A new client's flow gets a name of its own. The broker's name counter
	// starts again with every life; a new flow that took the name of a kept
	// one reset its last id, so the kept flow's client, resending under that
	// name after its reconnect, had its messages discarded as out of order
	// or acknowledged as duplicates without being spooled.
	svc2 := connect(t, b2, nil)
	startPublisher(t, svc2)
	b2.mu.Lock()
	flows, kept := len(b2.vpns["default"].pubFlows), b2.vpns["default"].pubFlows[name].lastID
	b2.mu.Unlock()
	require.Equal(t, 2, flows, "the kept flow and the new client's")
	require.Equal(t, last, kept, "the kept flow's last id")
}

// TestDataDirTornTailKeepsWhatTheFlowClaims cuts the log after every
// record in turn, as a broker killed in the middle of a write leaves it, and
// requires the restarted broker never to claim more of a publisher flow than
// it holds: every id up to the flow's last id has its message in the queue.
// The client resends only what follows that id, so a claimed message that
// is missing is lost.
func TestDataDirTornTailKeepsWhatTheFlowClaims(t *testing.T) {
	dir := t.TempDir()
	b := startDataBroker(t, dir, "", 0)
	require.NoError(t, b.CreateQueue("default", QueueConfig{Name: "q1", Subscriptions: []string{"orders/>"}}))
	svc := connect(t, b, nil)
	pub := startPublisher(t, svc)
	const n = 5
	for i := range n {
		publish(t, svc, pub, "orders/a", fmt.Sprint("m", i+1))
	}
	_ = svc.Disconnect()
	require.NoError(t, b.Close())
	segs, err := filepath.Glob(filepath.Join(dir, "seg-*.log"))
	require.NoError(t, err)
	require.Len(t, segs, 1)
	data, err := os.ReadFile(segs[0])
	require.NoError(t, err)

	var cuts []int
	for off := 0; off < len(data); {
		_, _, k, err := store.DecodeRecord(data[off:])
		require.NoError(t, err)
		off += k
		cuts = append(cuts, off)
	}
	claimed := 0
	for _, cut := range cuts {
		cutDir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(cutDir, filepath.Base(segs[0])), data[:cut], 0o600))
		b2 := startDataBroker(t, cutDir, "", 0)
		b2.mu.Lock()
		var last uint64
		for _, pf := range b2.vpns["default"].pubFlows {
			last = max(last, pf.lastID)
		}
		b2.mu.Unlock()
		var held []string
		if _, _, err := b2.Queue("default", "q1"); err == nil {
			held = QueuePayloads(t, b2, "default", "q1")
		}
		require.NoError(t, b2.Close())
		for id := 1; id <= int(last); id++ {
			require.Contains(t, held, fmt.Sprint("m", id), "log cut at byte %d of %d: the flow's last id is %d", cut, len(data), last)
		}
		claimed = max(claimed, int(last))
	}
	require.Equal(t, n, claimed, "the whole log claims every message")
}

// TestDataDirRefusedWhileLocked: a second broker on a directory in use is
// refused with an error that says so, and a standby takes over as soon as
// the first one goes.
func TestDataDirRefusedWhileLocked(t *testing.T) {
	dir := t.TempDir()
	b := startDataBroker(t, dir, "", 0)
	require.NoError(t, b.CreateQueue("default", QueueConfig{Name: "q1"}))
	_, err := Start(Config{DataDir: dir})
	require.ErrorContains(t, err, "in use by another broker")

	started := make(chan *Broker, 1)
	go func() {
		sb, err := StartContext(t.Context(), Config{DataDir: dir, Standby: true})
		if err != nil {
			t.Error(err)
		}
		started <- sb
	}()
	select {
	case <-started:
		t.Fatal("the standby started while the active broker holds the directory")
	case <-time.After(100 * time.Millisecond):
	}
	require.NoError(t, b.Close())
	sb := <-started
	require.NotNil(t, sb)
	defer sb.Close()
	_, _, err = sb.Queue("default", "q1")
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = StartContext(ctx, Config{DataDir: dir, Standby: true})
	require.ErrorIs(t, err, context.Canceled)
}

// TestDataDirUnreadable: a data directory that is a file, or that holds a
// segment that is not a file, is refused with an error naming it.
func TestDataDirUnreadable(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err := Start(Config{DataDir: file})
	require.ErrorContains(t, err, "not a directory")

	require.NoError(t, os.Mkdir(filepath.Join(dir, "d"), 0o700))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "d", "seg-0000000000000001.log"), 0o700))
	_, err = Start(Config{DataDir: filepath.Join(dir, "d")})
	require.ErrorContains(t, err, "not a regular file")
}

// TestDataDirDamage damages the log after acked publishes (a truncated
// tail, a flipped byte, a missing segment) and requires the restarted
// broker to report it, keep every message recorded before the damage and
// not panic.
func TestDataDirDamage(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, segs []string)
		lost   int // at most this many of the second batch may be gone
	}{
		{"truncated tail", func(t *testing.T, segs []string) {
			last := segs[len(segs)-1]
			st, err := os.Stat(last)
			require.NoError(t, err)
			require.NoError(t, os.Truncate(last, st.Size()-5))
		}, 1},
		{"flipped byte", func(t *testing.T, segs []string) {
			last := segs[len(segs)-1]
			data, err := os.ReadFile(last)
			require.NoError(t, err)
			data[len(data)*3/4] ^= 0x40
			require.NoError(t, os.WriteFile(last, data, 0o600))
		}, 100},
		{"missing segment", func(t *testing.T, segs []string) {
			require.Greater(t, len(segs), 3)
			require.NoError(t, os.Remove(segs[1]))
		}, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			b := startDataBroker(t, dir, "", 4<<10)
			require.NoError(t, b.CreateQueue("default", QueueConfig{Name: "q1", Subscriptions: []string{"orders/>"}}))
			svc := connect(t, b, nil)
			pub := startPublisher(t, svc)
			for i := range 50 {
				publish(t, svc, pub, "orders/a", fmt.Sprint("a", i))
			}
			_ = svc.Disconnect()
			require.NoError(t, b.Close())
			// The first batch is now in the snapshot segment; the second
			// goes into segments after it.
			b = startDataBroker(t, dir, "", 4<<10)
			svc = connect(t, b, nil)
			pub = startPublisher(t, svc)
			for i := range 100 {
				publish(t, svc, pub, "orders/b", fmt.Sprint("b", i))
			}
			_ = svc.Disconnect()
			require.NoError(t, b.Close())

			segs, err := filepath.Glob(filepath.Join(dir, "seg-*.log"))
			require.NoError(t, err)
			slices.Sort(segs)
			tc.damage(t, segs)

			b2 := startDataBroker(t, dir, "", 4<<10)
			damage := b2.DataDirDamage()
			require.NotEmpty(t, damage, "damage reported")
			t.Log(damage)
			got := QueuePayloads(t, b2, "default", "q1")
			for i := range 50 {
				require.Contains(t, got, fmt.Sprint("a", i), "acked before the damage")
			}
			require.GreaterOrEqual(t, len(got), 150-tc.lost)
			damaged, err := filepath.Glob(filepath.Join(dir, "*.damaged"))
			require.NoError(t, err)
			if tc.name != "missing segment" {
				require.NotEmpty(t, damaged, "the damaged segment is kept for inspection")
			}
		})
	}
}

// FuzzRecoveryRecord feeds arbitrary record bodies of every type to
// recovery: it must never panic, and a message body it accepts must encode
// back to the same bytes.
func FuzzRecoveryRecord(f *testing.F) {
	m := &storedMsg{pid: 3, id: 9, at: time.Unix(0, 1_700_000_000_000_000_000), topic: "orders/1", flags: 0x10,
		kept: []byte{1, 2, 3}, ext: []extParam{{Type: 0x2b, Value: []byte{4}}}, summary: []byte{0x0a, 4}, payload: []byte("hi"), size: 2, ttl: time.Second}
	f.Add(recMsg, appendMsg(nil, m))
	f.Add(recSpool, binary.AppendUvarint(binary.AppendUvarint(binary.AppendVarint(binary.AppendUvarint(binary.AppendUvarint(appendStr(appendStr(nil, "default"), "q1"), 1), 3), 0), 1), 0))
	f.Add(recPubFlow, appendPubFlow(nil, "default", &pubFlow{name: "pf", lastID: 7}, &rejection{503, "Spool Over Quota"}))
	f.Add(recConfig, []byte(`{"vpns":[{"config":{"Name":"default"},"queues":[{"config":{"Name":"q"}}]}]}`))
	f.Add(recMeta, []byte{0, 0, 0, 0, 0, 0, 0, 1})
	f.Add(recRemove, []byte{0x80})
	f.Fuzz(func(t *testing.T, typ byte, body []byte) {
		r := newRecovery()
		if r.apply(typ, body) != nil || typ != recMsg {
			return
		}
		for _, m := range r.msgs {
			require.Equal(t, body, appendMsg(nil, m))
		}
	})
}

// TestDataDirKeepsSEMPConfig: objects created over SEMP (a queue with a
// subscription, a client username, an ACL exception) are there after a
// restart.
func TestDataDirKeepsSEMPConfig(t *testing.T) {
	dir := t.TempDir()
	b := startDataBroker(t, dir, "", 0)
	for _, req := range [][2]string{
		{"/msgVpns/default/queues", `{"queueName":"sq","accessType":"non-exclusive","maxRedeliveryCount":4}`},
		{"/msgVpns/default/queues/sq/subscriptions", `{"subscriptionTopic":"a/>"}`},
		{"/msgVpns/default/clientUsernames", `{"clientUsername":"app","password":"pw","enabled":true}`},
		{"/msgVpns/default/aclProfiles/default/publishTopicExceptions", `{"aclProfileName":"default","publishTopicException":"secret/>","publishTopicExceptionSyntax":"smf"}`},
	} {
		r, err := http.NewRequestWithContext(t.Context(), http.MethodPost, b.SEMPURL()+"/SEMP/v2/config"+req[0], strings.NewReader(req[1]))
		require.NoError(t, err)
		r.SetBasicAuth("admin", "admin")
		r.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(r)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", req[0], body)
	}
	require.NoError(t, b.Close())

	b2 := startDataBroker(t, dir, "", 0)
	cfg, _, err := b2.Queue("default", "sq")
	require.NoError(t, err)
	require.Equal(t, AccessNonExclusive, cfg.AccessType)
	require.Equal(t, 4, cfg.MaxRedeliveryCount)
	require.Equal(t, []string{"a/>"}, cfg.Subscriptions)
	b2.mu.Lock()
	u, okU := b2.vpns["default"].usernames["app"]
	okA := slices.Contains(b2.vpns["default"].acls["default"].Exceptions[ACLPublishTopic], "secret/>")
	b2.mu.Unlock()
	require.True(t, okU && u.Password == "pw" && u.Enabled, "client username kept")
	require.True(t, okA, "ACL exception kept")
}
