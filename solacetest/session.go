package solacetest

// This file is the session layer: one client connection, its login,
// keepalives, direct subscriptions, publisher flow and the dispatch of each
// incoming frame to the router and spool layers, and what happens to a
// message larger than the broker accepts (handleOversize).

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/connect-solace/connect-solace/internal/selector"
)

// conn is one client connection. Fields after "session state" are guarded by
// Broker.mu; the outgoing queue by outMu.
type conn struct {
	b  *Broker
	nc net.Conn

	closeOnce sync.Once
	closed    chan struct{}
	readDone  chan struct{} // closed when the read loop has ended

	outMu  sync.Mutex
	out    [][]byte
	outSig chan struct{}

	// lastTopic is the topic of the last publish (topicOf); only the read
	// loop touches it.
	lastTopic string
	// pendingAck is the highest publisher message id to acknowledge once the
	// read buffer is drained; only the read loop touches it.
	pendingAck uint64
	// inflateNext makes the read loop decompress what follows the current
	// frame (compressed TLS, compress.go); only the read loop touches it.
	inflateNext bool
	// downgradeNext makes the read loop go on in plain text when the
	// client's TLS close_notify arrives (tls.go); only the read loop
	// touches it after login.
	downgradeNext bool
	// idleTimeout closes a connection that sends nothing for this long: until
	// login loginTimeout, then three keepalive intervals as the client's
	// login announces them; 0 never. Only the read loop touches it.
	idleTimeout time.Duration

	// session state
	loggedIn   bool
	vpn        *vpnState
	user       string
	clientName string
	// subs are the session's direct subscriptions, in the order added: a
	// slice, as every published message walks every session's list.
	subs    []string
	pubFlow *pubFlow
	flows   map[uint32]*flow
	login   loginInfo

	stats connStats // atomic, see clients.go
	rx    rxCounter // atomic, see rxbarrier.go
}

// pubFlow is a publisher flow. It outlives its connection so that a client
// that reconnects with the same flow name resumes its message ids.
//
// Reconciliation follows PubSub+: a flow accepts messages only in sequence.
// Each guaranteed message carries its id (P17) and the id of the message the
// client sent before it on the flow (P18). The broker processes a message
// only when its P18 is the last id it processed, so "id <= lastID" reliably
// means a resend of something processed before. A message whose predecessor
// never arrived is discarded unacknowledged (PubSub+ counts these as
// outOfOrderDiscardedMsgCount, duplicates as duplicateDiscardedMsgCount); the
// client resends it with the rest of its unacknowledged window. Without this,
// a client that after a reconnect first sent message 702 and then resent 701
// and 702 had 701 acknowledged as a duplicate although it was never spooled.
type pubFlow struct {
	name   string
	flowID uint32
	pubID  uint32
	lastID uint64 // highest publisher message id processed (acked or nacked), in sequence
	// owner is the connection the flow is bound to; frames that reach the
	// broker late on an older connection are discarded.
	owner *conn
	// nacked remembers recent rejections by id, so a resend of a message
	// whose nack was lost with its connection is rejected again instead
	// of being acknowledged as a duplicate.
	nacked map[uint64]rejection
	// Discard counters, as PubSub+ keeps them per publisher flow.
	duplicates, outOfOrder, staleConn int
}

// rejection is a remembered nack.
type rejection struct {
	code uint32
	text string
}

// nackMemory bounds pubFlow.nacked: the client's window is at most 255
// messages, so older rejections cannot be resent.
const nackMemory = 1024

// loginTimeout bounds how long a connection may stay open without logging in.
const loginTimeout = 30 * time.Second

// deadlineSlack is how finely the read loop follows a connection's idle
// timeout: it renews the read deadline once a 64th of the timeout has passed.
const deadlineSlack = 64

func newConn(b *Broker, nc net.Conn) *conn {
	return &conn{
		b:           b,
		idleTimeout: loginTimeout,
		nc:          nc,
		closed:      make(chan struct{}),
		readDone:    make(chan struct{}),
		outSig:      make(chan struct{}, 1),
		flows:       map[uint32]*flow{},
	}
}

// close shuts the socket; the read loop then cleans up broker state.
func (c *conn) close() {
	c.closeOnce.Do(func() {
		close(c.closed)
		_ = c.nc.Close()
	})
}

// send queues a control frame for the writer goroutine (data messages go
// through sendData). It never blocks on the network, so it may be called with
// Broker.mu held.
func (c *conn) send(b []byte) {
	c.stats.countTx(false, len(b))
	c.enqueue(b)
}

func (c *conn) enqueue(b []byte) {
	c.outMu.Lock()
	c.out = append(c.out, b)
	c.outMu.Unlock()
	select {
	case c.outSig <- struct{}{}:
	default:
	}
}

func (c *conn) writeLoop() {
	defer c.b.wg.Done()
	w := bufio.NewWriterSize(c.nc, 64<<10)
	for {
		select {
		case <-c.closed:
			return
		case <-c.outSig:
		}
		c.outMu.Lock()
		batch := c.out
		c.out = nil
		c.outMu.Unlock()
		// Deliveries leave only once their delivery counts are written.
		c.b.st.writeBarrier()
		for _, b := range batch {
			if isDowngradeMark(b) { // startDowngrade's: plain text from here on
				tc := c.tlsConn()
				// CloseWrite leaves a past write deadline behind, on
				// the TCP connection too.
				if err := w.Flush(); err != nil || tc.CloseWrite() != nil || tc.NetConn().SetWriteDeadline(time.Time{}) != nil {
					c.close()
					return
				}
				w = bufio.NewWriterSize(tc.NetConn(), 64<<10)
				continue
			}
			if b == nil { // startCompression's marker: deflate from here on
				if err := w.Flush(); err != nil {
					c.close()
					return
				}
				w = bufio.NewWriterSize(newDeflateWriter(c.nc), 64<<10)
				continue
			}
			if _, err := w.Write(b); err != nil {
				c.close()
				return
			}
		}
		if err := w.Flush(); err != nil {
			c.close()
			return
		}
	}
}

func (c *conn) readLoop() {
	defer c.b.wg.Done()
	defer close(c.readDone)
	defer c.cleanup()
	r := bufio.NewReaderSize(countingReader{c.nc, &c.rx.raw}, 64<<10)
	// The read deadline is pushed out at most every idleTimeout/
	// deadlineSlack, not on every frame: resetting a deadline costs a timer
	// update, about as much as a small publish's other bookkeeping. A client
	// may so be dropped up to that fraction of the timeout early.
	// The deadline counts from when the last frame arrived (last), the time
	// the loop reads once per frame anyway, for the frame's rxAt.
	var deadlineFor time.Duration // the timeout the deadline was set with; 0 none
	var deadlineAt time.Time      // the arrival it was set from
	var cur frame                 // reused for every frame (see readFrameInto)
	var sl slab                   // the frames' bytes
	last := time.Now()
	for {
		switch {
		case c.idleTimeout > 0:
			if deadlineFor != c.idleTimeout || last.Sub(deadlineAt) >= c.idleTimeout/deadlineSlack {
				_ = c.nc.SetReadDeadline(last.Add(c.idleTimeout))
				deadlineFor, deadlineAt = c.idleTimeout, last
			}
		case deadlineFor != 0:
			_ = c.nc.SetReadDeadline(time.Time{})
			deadlineFor = 0
		}
		f, err := readFrameInto(r, &cur, &sl)
		last = time.Now()
		if err == nil {
			f.rxAt = last
		}
		if err != nil && c.downgradeNext && errors.Is(err, io.EOF) {
			// The client's close_notify: TLS is over, plain text follows.
			c.downgradeNext = false
			c.endTLS()
			r = bufio.NewReaderSize(countingReader{c.tlsConn().NetConn(), &c.rx.raw}, 64<<10)
			continue
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				select {
				case <-c.closed:
				default:
					c.b.log.Debug("reading from client", "client", c.clientName, "error", err)
				}
			}
			return
		}
		select {
		case <-c.closed:
			// Closed by the broker (e.g. replaced by a newer session of
			// the same client): what it still had buffered is discarded,
			// as the socket would have been.
			return
		default:
		}
		c.stats.countRx(f)
		if !c.handle(f) {
			return
		}
		c.rx.done.Add(int64(f.Wire))
		if c.inflateNext {
			c.inflateNext = false
			r = bufio.NewReaderSize(newInflateReader(r), 64<<10)
		}
		// Acks are cumulative: answer a burst of publishes with one ack.
		if c.pendingAck != 0 && r.Buffered() == 0 {
			c.b.mu.Lock()
			c.flushAck()
			c.b.mu.Unlock()
		}
	}
}

// cleanup forgets the connection: its subscriptions go, its consumer flows'
// unsettled messages are requeued as redeliveries, and its temporary queues
// start their grace period.
func (c *conn) cleanup() {
	c.close()
	b := c.b
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.conns, c)
	if !c.loggedIn {
		return
	}
	c.loggedIn = false
	if c.vpn.clients[c.clientName] == c {
		delete(c.vpn.clients, c.clientName)
	}
	for _, f := range c.flows {
		b.unbindFlow(f, "consumer connection lost")
	}
	c.flows = map[uint32]*flow{}
	for _, q := range c.vpn.queues {
		if q.tempOwner == c.clientName && q.orphanedAt.IsZero() && c.vpn.clients[c.clientName] == nil {
			q.orphanedAt = time.Now()
		}
	}
	b.log.Info("client disconnected", "client", c.clientName, "vpn", c.vpn.name)
}

// handle processes one frame and reports whether to keep reading.
func (c *conn) handle(f *frame) bool {
	if !c.loggedIn && f.Proto != protoClientCtrl {
		c.b.log.Warn("frame before login; closing", "proto", f.Proto)
		return false
	}
	if f.Oversize > 0 {
		c.handleOversize(f)
		return true
	}
	switch f.Proto {
	case protoKeepAliveV2:
		c.send(slices.Clone(f.rawBytes))
		c.b.mu.Lock()
		c.b.keepalives++
		c.b.mu.Unlock()
	case protoClientCtrl:
		return c.handleClientCtrl(f)
	case protoSMP:
		c.handleSMP(f)
	case protoTrMsg:
		if f.Flags&flagADF != 0 {
			c.handleGuaranteed(f)
		} else {
			c.handleDirect(f)
		}
	case protoAssuredCtrl:
		c.handleAdCtrl(f)
	default:
		c.b.log.Warn("ignoring unsupported SMF protocol", "client", c.clientName, "proto", f.Proto)
	}
	return true
}

// reply builds a broker response frame: P8, the request's correlation tag and
// an optional payload.
func reply(proto byte, tag []byte, code uint32, text string, payload []byte) []byte {
	fr := &frame{Proto: proto, TTL: 1, Params: []param{responseParam(code, text)}, Payload: payload}
	if tag != nil {
		fr.Params = append(fr.Params, param{Light: true, Type: lightCorrelationTag, Value: tag})
	}
	return fr.encode(nil)
}

func (c *conn) sendAdCtrl(tag []byte, code uint32, text string, typ byte, params []adParam) {
	c.send(reply(protoAssuredCtrl, tag, code, text, encodeAdCtrl(typ, params)))
}

// ---- login ----

// routerCapabilities is p9 of the login response: 27 booleans (MSB first)
// and the maximum message sizes. Enabled: guaranteed subscriber and publisher
// flows (2, 4), temporary endpoints (3), selectors (7), endpoint message TTL (8), queue
// subscriptions (9), flow recover, subscription manager, eliding (10-12),
// no-local, flow-change updates (14, 15), sequenced topics, discard behaviour
// (16, 17), replay (20), long selectors (22), endpoint error id (24), app-ack FAILED (25),
// variable-length extended parameters (26). Disabled because the broker does
// not implement them: JNDI, compression, browser, endpoint management,
// transactions, cut-through, OpenMAMA, compressed TLS,
// shared subscriptions.
func routerCapabilities(overTLS bool) []byte {
	on := []int{2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 14, 15, 16, 17, 20, 22, 23, 24, 25, 26}
	if overTLS {
		on = append(on, capCompressedTLS) // see compress.go
	}
	bools := make([]byte, 4)
	for _, i := range on {
		bools[i/8] |= 0x80 >> (i % 8)
	}
	b := append([]byte{27}, bools...)
	for _, t := range []byte{2, 3} { // max guaranteed / direct message size
		b = append(b, t, 0, 0, 0, 9)
		b = append(b, u32(30_000_000)...)
	}
	return b
}

// extendedCapabilities is p19: no booleans, then AssuredCtrl versions 2..4.
var extendedCapabilities = []byte{0, 4, 0, 0, 0, 7, 2, 4}

func (c *conn) handleClientCtrl(f *frame) bool {
	cc, err := decodeClientCtrl(f.Payload)
	if err != nil {
		c.b.log.Warn("bad ClientCtrl message; closing", "error", err)
		return false
	}
	if cc.Type != ccLogin {
		// Updates (type 1) change client attributes the broker does not track.
		c.send(reply(protoClientCtrl, nil, 200, "OK", nil))
		return true
	}
	b := c.b
	user := decodeB64(f.param(pUsername))
	pass := decodeB64(f.param(pPassword))
	vpnName := trimNUL(cc.Params[ccVPNName])
	if vpnName == "" {
		vpnName = "default"
	}
	clientName := trimNUL(cc.Params[ccClientName])
	fail := func(code uint32, text string) bool {
		b.log.Info("login refused", "user", user, "vpn", vpnName, "client", clientName, "status", code, "reason", text)
		c.send(reply(protoClientCtrl, nil, code, text, nil))
		return true // the client closes the socket
	}
	// OAuth tokens are checked before taking the lock: that may fetch a
	// provider's key set (oauth.go).
	var oauth *oauthResult
	if v := cc.Params[ccAuthScheme]; len(v) == 1 && v[0] == authSchemeOAuth {
		res := b.oauthLogin(vpnName, oauthTokensOf(f))
		oauth = &res
	} else if len(v) == 1 && v[0] == authSchemeGSSKrb {
		res := b.kerberosLogin(vpnName, f)
		oauth = &res
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.faults.refusingLogins() {
		return fail(503, "Service Unavailable")
	}
	v, ok := b.vpns[vpnName]
	if !ok {
		if want, known := b.cfg.Users[user]; !known || want != pass {
			return fail(401, "Unauthorized")
		}
		return fail(403, "Message VPN Not Allowed")
	}
	if oauth != nil {
		switch {
		case !v.cfg.Enabled:
			return fail(503, "Message VPN Unavailable")
		case oauth.code != 0:
			return fail(oauth.code, oauth.text)
		}
		if cc.Params[ccAuthScheme][0] != authSchemeGSSKrb || user == "" || !v.cfg.KerberosAllowAPIProvidedUsername {
			user = oauth.user // else the API-provided username stands (kerberos.go)
		}
	} else if _, hasPassword := f.param(pPassword); !hasPassword && len(peerCertificates(c)) > 0 {
		code, text, certUser := b.certLoginLocked(v, peerCertificates(c), user)
		if code != 0 {
			return fail(code, text)
		}
		user = certUser
	} else if code, text := b.authenticateLocked(v, user, pass); code != 0 {
		return fail(code, text)
	}
	downgrade := c.wantsDowngrade(cc)
	if downgrade && !v.cfg.TLSAllowDowngradeToPlainText {
		return fail(403, downgradeRefusedText)
	}
	if clientName == "" {
		clientName = "solacetest-client-" + strconv.Itoa(len(b.conns))
	}
	if old := v.clients[clientName]; old != nil && old != c {
		// A real broker disconnects the older session of a client name.
		b.log.Info("replacing session with the same client name", "client", clientName)
		old.close()
	}
	c.loggedIn, c.vpn, c.user, c.clientName = true, v, user, clientName
	c.login = newLoginInfo(cc, c.nc)
	c.login.tlsDowngraded = downgrade
	// The login's keep-alive value matched the client's interval in seconds
	// (smf-wire-notes §2.1). A dead client that keeps its TCP connection
	// open is dropped after three silent intervals, so its unsettled
	// messages are redelivered, as a real broker does.
	c.idleTimeout = 0
	if ka := beUint(cc.Params[ccKeepAlive]); ka > 0 && ka < 3600 {
		c.idleTimeout = 3 * time.Duration(ka) * time.Second
	}
	v.clients[clientName] = c
	for _, q := range v.queues {
		if q.tempOwner == clientName {
			q.orphanedAt = time.Time{}
		}
	}
	router := b.cfg.RouterName
	resp := encodeClientCtrl(ccLogin, []ccParam{
		{ccSoftwareVersion, cstr("solacetest 1.0")},
		{ccVRIDName, cstr("v:" + router)}, // the client names temporary queues #P2P/QTMP/<this>/...
		{ccP2PTopic, cstr("#P2P/v:" + router + "/" + clientName)},
		{ccRouterCaps, routerCapabilities(c.overTLS())},
		{ccExtendedCaps, extendedCapabilities},
	})
	if oauth != nil && oauth.gssReply != nil {
		c.send((&frame{Proto: protoClientCtrl, TTL: 1, Params: []param{responseParam(200, "OK"),
			{Type: pExtendedStream, Value: encodeExtStream([]extParam{{Type: extGSSToken, Value: oauth.gssReply}})}},
			Payload: resp}).encode(nil))
	} else {
		c.send(reply(protoClientCtrl, nil, 200, "OK", resp))
	}
	if c.overTLS() && beUint(cc.Params[ccConnectionType]) == connCompressedTLS {
		c.startCompression()
	}
	if downgrade {
		c.startDowngrade()
	}
	b.log.Info("client logged in", "client", clientName, "user", user, "vpn", vpnName, "remote", c.nc.RemoteAddr().String())
	return true
}

func decodeB64(v []byte, ok bool) string {
	if !ok {
		return ""
	}
	d, err := base64.StdEncoding.DecodeString(string(v))
	if err != nil {
		return string(v)
	}
	return string(d)
}

// decodeCtrlFrame decodes the payload of f, a control message (what, of
// protocol proto), with decode, and returns it with f's correlation tag;
// one that does not decode is answered with 400 "Bad Request" (ok false).
func decodeCtrlFrame[T any](c *conn, f *frame, proto byte, what string, decode func([]byte) (T, error)) (m T, tag []byte, ok bool) {
	tag, _ = f.correlationTag()
	m, err := decode(f.Payload)
	if err != nil {
		c.b.log.Warn("bad "+what+" message", "client", c.clientName, "error", err)
		c.send(reply(proto, tag, 400, "Bad Request", nil))
		return m, tag, false
	}
	return m, tag, true
}

// ---- SMP ----

func (c *conn) handleSMP(f *frame) {
	m, tag, ok := decodeCtrlFrame(c, f, protoSMP, "SMP", decodeSMP)
	if !ok {
		return
	}
	b := c.b
	code, text := uint32(200), "OK"
	b.mu.Lock()
	switch m.Type {
	case smpAddSubscription:
		if !c.maySubscribe(m.Topic) {
			code, text = 403, "Subscription ACL Denied"
			b.log.Info("subscription denied by ACL", "client", c.clientName, "topic", m.Topic)
			break
		}
		if !slices.Contains(c.subs, m.Topic) {
			c.subs = append(c.subs, m.Topic)
		}
		b.log.Debug("subscribed", "client", c.clientName, "topic", m.Topic)
	case smpRemoveSubscription:
		if i := slices.Index(c.subs, m.Topic); i >= 0 {
			c.subs = slices.Delete(c.subs, i, i+1)
		}
		b.log.Debug("unsubscribed", "client", c.clientName, "topic", m.Topic)
	case smpAddQueueSubscription, smpRemoveQueueSub:
		code, text = c.changeQueueSubscription(m)
	}
	b.mu.Unlock()
	if m.Flags&smpFlagResponseRequired != 0 || code != 200 {
		c.send(reply(protoSMP, tag, code, text, nil))
	}
}

// ---- messages from publishers ----

// handleDirect forwards a direct message verbatim to every session with a
// matching subscription (once per session) and spools it to matching queues,
// as a real broker does.
func (c *conn) handleDirect(f *frame) {
	topicB, _ := f.param(pTopic)
	topic := c.topicOf(topicB)
	b := c.b
	b.mu.Lock()
	defer b.mu.Unlock()
	b.published[topic]++
	if !c.mayPublish(topic) {
		b.log.Info("direct message discarded by publish ACL", "client", c.clientName, "topic", topic)
		return
	}
	raw := f.rawBytes
	b.fanoutDirect(c.vpn, topic, func() []byte { return raw })
	if _, isQueue := queueFromTopic(topic); isQueue {
		return
	}
	var m *storedMsg
	for _, q := range c.vpn.subscribedQueues(topic) {
		if !q.overQuota(len(f.Payload)) {
			if m == nil {
				m = b.storedFromFrame(f, topic)
				if _, ok := f.param(pDeliveryMode); !ok {
					m.kept = appendParam(m.kept, param{Type: pDeliveryMode, Value: u8(0)})
				}
			}
			b.spool(q, m, 0)
		}
	}
}

// topicOf is the topic of a publish (P6, NUL-terminated) as a string. A
// publisher mostly sends to the same topic over and over, so the read loop
// keeps the last one and reuses it rather than making a new string per
// message. Only the read loop calls it.
func (c *conn) topicOf(p []byte) string {
	if n := len(p); n > 0 && p[n-1] == 0 {
		p = p[:n-1]
	}
	if string(p) != c.lastTopic {
		c.lastTopic = string(p)
	}
	return c.lastTopic
}

// storedFromFrame captures a published message for spooling, giving it the
// next message id.
func (b *Broker) storedFromFrame(f *frame, topic string) *storedMsg {
	kept, ext := keptParams(f)
	summary, _ := f.param(pContentsSummary)
	prio, _ := f.param(pPriority)
	mode, hasMode := f.param(pDeliveryMode)
	b.nextStored++
	return &storedMsg{
		id:         b.nextStored,
		at:         f.arrival(),
		priority:   byte(beUint(prio)),
		persistent: f.Flags&flagADF != 0 && (!hasMode || beUint(mode) == 1),
		topic:      topic,
		flags:      f.Flags &^ flagADF,
		byte2:      f.Byte2,
		kept:       kept,
		ext:        ext,
		payload:    f.Payload,
		summary:    summary,
		ttl:        messageTTL(f),
		size:       len(f.Payload),
	}
}

// handleGuaranteed spools a persistent or non-persistent message and acks or
// nacks it on the publisher flow. The steps: publisher-flow reconciliation
// (inSequence), admission (admitGuaranteed: injected faults, ACL, routing,
// quota), spooling to the destination queues, the replay log, the copy to
// direct subscribers, then the ack (unless a fault drops the connection).
func (c *conn) handleGuaranteed(f *frame) {
	topicB, _ := f.param(pTopic)
	topic := c.topicOf(topicB)
	idB, _ := f.param(pADMsgID)
	id := beUint(idB)
	b := c.b
	b.mu.Lock()
	defer b.mu.Unlock()
	pf, ok := c.inSequence(f, id)
	if !ok {
		return
	}
	b.published[topic]++
	dests, rej := c.admitGuaranteed(topic, len(f.Payload))
	if rej != nil {
		c.nackPublish(pf, id, topic, *rej)
		return
	}
	m := b.storedFromFrame(f, topic)
	m.queue, _ = queueFromTopic(topic)
	for _, q := range dests {
		b.spool(q, m, 0)
	}
	c.vpn.logForReplay(m)
	// After the message's records: a broker killed mid-write keeps a
	// prefix of the log, and a flow's last id that outlived its message
	// would have the resend acked as a duplicate, and the message lost.
	if id != 0 {
		b.st.pubFlowAdvanced(c.vpn, pf, nil)
	}
	// Guaranteed messages also reach matching direct subscribers, as direct
	// messages.
	b.fanoutDirect(c.vpn, topic, m.directFrame)
	if b.log.Enabled(context.Background(), slog.LevelDebug) {
		// Guarded: the arguments alone were four allocations per publish
		// with debug logging off.
		b.log.Debug("guaranteed message spooled", "client", c.clientName, "id", id, "topic", topic, "queues", len(dests))
	}
	if b.faults.takeDropAfterSpool() {
		c.pendingAck = 0
		c.close()
		return
	}
	c.queueAck(id)
}

// inSequence applies publisher-flow reconciliation (see pubFlow) to the
// guaranteed message id. It returns the flow and true when the message is the
// next in sequence and is to be processed; the flow's last id then is id.
// Otherwise it has dealt with the message: a resend is acked, or nacked again,
// without spooling; a message without a flow, from a replaced connection or
// out of order is discarded.
func (c *conn) inSequence(f *frame, id uint64) (*pubFlow, bool) {
	b := c.b
	pf := c.pubFlow
	if pf == nil {
		b.log.Warn("guaranteed message without a publisher flow", "client", c.clientName)
		return nil, false
	}
	if pf.owner != c {
		pf.staleConn++
		b.log.Debug("guaranteed message from a replaced connection discarded", "client", c.clientName, "id", id)
		return nil, false
	}
	if id != 0 && id <= pf.lastID {
		pf.duplicates++
		if n, ok := pf.nacked[id]; ok {
			b.log.Debug("resent message nacked again", "client", c.clientName, "id", id)
			c.flushAck()
			c.sendPubAck(pf, id, n)
			return nil, false
		}
		b.log.Debug("duplicate guaranteed message acked without spooling", "client", c.clientName, "id", id)
		c.queueAck(id)
		return nil, false
	}
	if prevB, ok := f.param(pADPrevMsgID); ok && id != 0 && beUint(prevB) != pf.lastID {
		pf.outOfOrder++
		b.log.Debug("out-of-order guaranteed message discarded", "client", c.clientName, "id", id, "prev", beUint(prevB), "last_id", pf.lastID)
		return nil, false
	}
	if id != 0 {
		// Recorded in the data directory by the caller, after the
		// message's own records (see handleGuaranteed).
		pf.lastID = id
	}
	return pf, true
}

// admitGuaranteed decides whether a guaranteed message of size payload bytes
// to topic is spooled, checking in this order an injected nack (faults.go),
// the publish ACL, routing (router.go) and the destination queues' quotas. It
// returns the destination queues, sorted by name, or the rejection to nack
// the message with.
func (c *conn) admitGuaranteed(topic string, size int) ([]*queue, *rejection) {
	if r, ok := c.b.faults.takePublishNack(); ok {
		rej := r // declared here, so that only a nack moves it to the heap
		return nil, &rej
	}
	if !c.mayPublish(topic) {
		return nil, &rejection{403, "Publish ACL Denied"}
	}
	dests, rej := c.routeGuaranteed(topic)
	if rej != nil {
		return nil, rej
	}
	for _, q := range dests {
		if q.overQuota(size) {
			return nil, &rejection{503, "Spool Over Quota"}
		}
	}
	return dests, nil
}

// nackPublish rejects the guaranteed message id on the publisher flow and
// remembers the rejection, so that a resend is rejected again.
func (c *conn) nackPublish(pf *pubFlow, id uint64, topic string, r rejection) {
	if id != 0 {
		pf.rememberNack(id, r)
		c.b.st.pubFlowAdvanced(c.vpn, pf, &r)
	}
	c.flushAck()
	c.b.log.Info("guaranteed message nacked", "client", c.clientName, "topic", topic, "status", r.code, "reason", r.text)
	c.sendPubAck(pf, id, r)
}

// rememberNack records the rejection of id, forgetting rejections too old
// to be resent once more than nackMemory are kept.
func (pf *pubFlow) rememberNack(id uint64, r rejection) {
	if pf.nacked == nil {
		pf.nacked = map[uint64]rejection{}
	}
	pf.nacked[id] = r
	if len(pf.nacked) > nackMemory {
		for old := range pf.nacked {
			if old+nackMemory < pf.lastID {
				delete(pf.nacked, old)
			}
		}
	}
}

// sendPubAck acknowledges (status 200) or rejects the publisher messages up
// to id on the flow pf.
func (c *conn) sendPubAck(pf *pubFlow, id uint64, r rejection) {
	params := []adParam{
		{Type: apLastMsgIDAcked, Value: u64(id)},
		{Type: apFlowID, Value: u32(pf.flowID)},
	}
	if st := c.b.st; st != nil {
		// Not before what it confirms is on disk (persist.go).
		st.ackAfterSync(c, reply(protoAssuredCtrl, nil, r.code, r.text, encodeAdCtrl(adAck, params)))
		return
	}
	c.sendAdCtrl(nil, r.code, r.text, adAck, params)
}

// directFrame encodes the message as a direct delivery, for the direct
// subscribers a guaranteed message also reaches.
func (m *storedMsg) directFrame() []byte {
	fr := &frame{Flags: m.flags, UH: 2, Proto: protoTrMsg, Byte2: m.byte2, TTL: 255, rawParams: m.kept, Payload: m.payload}
	if len(m.ext) > 0 {
		fr.Params = []param{{Type: pExtendedStream, Value: encodeExtStream(m.ext)}}
	}
	return fr.encode(nil)
}

func (c *conn) queueAck(id uint64) {
	if id > c.pendingAck {
		c.pendingAck = id
	}
}

// flushAck sends the pending cumulative publisher ack. Called from the read
// loop with Broker.mu held.
func (c *conn) flushAck() {
	if c.pendingAck == 0 || c.pubFlow == nil {
		return
	}
	id := c.pendingAck
	c.pendingAck = 0
	c.sendPubAck(c.pubFlow, id, rejection{200, "OK"})
}

// ---- AssuredCtrl ----

func (c *conn) handleAdCtrl(f *frame) {
	a, tag, ok := decodeCtrlFrame(c, f, protoAssuredCtrl, "AssuredCtrl", decodeAdCtrl)
	if !ok {
		return
	}
	b := c.b
	b.mu.Lock()
	defer b.mu.Unlock()
	switch a.Type {
	case adOpenFlow:
		c.openPublisherFlow(tag, a)
	case adAck:
		c.clientAck(a)
	case adBind:
		c.bind(tag, a)
	case adUnbind:
		id, _ := a.uint(apFlowID)
		if fl := c.flows[uint32(id)]; fl != nil {
			delete(c.flows, fl.id)
			q := fl.q
			b.unbindFlow(fl, "consumer unbound")
			if !q.cfg.Durable && len(q.flows) == 0 && q.vpn.queues[q.cfg.Name] == q {
				// A temporary queue lives as long as its consumer flow.
				b.deleteQueueLocked(q)
			}
			b.log.Info("consumer unbound", "client", c.clientName, "queue", q.cfg.Name, "flow", fl.id)
		}
		c.sendAdCtrl(tag, 200, "OK", adUnbind, []adParam{{Type: apFlowID, Value: u32(uint32(id))}})
	case adCloseFlow:
		id, _ := a.uint(apFlowID)
		c.sendAdCtrl(tag, 200, "OK", adCloseFlow, []adParam{{Type: apFlowID, Value: u32(uint32(id))}})
	case adCreate, adDelete:
		c.provisionEndpoint(tag, a)
	case adFlowUpdate:
		// The client acknowledges a flow-change update with one of its own;
		// it expects no answer (an error answer deactivates the flow).
	default:
		b.log.Warn("unsupported AssuredCtrl message", "client", c.clientName, "type", a.Type)
		c.sendAdCtrl(tag, 403, "Permission Not Allowed", a.Type, nil)
	}
}

// openPublisherFlow answers the publisher-flow open the client sends at
// connect. A known flow name resumes that flow and reports the last message
// id the broker processed, so the client resends only what it has not seen.
func (c *conn) openPublisherFlow(tag []byte, a *adctrl) {
	b := c.b
	nameB, _ := a.get(apFlowName)
	name := trimNUL(nameB)
	window, ok := a.get(apWindow)
	if !ok {
		window = u8(255)
	}
	pf := c.vpn.pubFlows[name]
	if pf == nil {
		// A new flow's name must not be one the VPN holds: the counter
		// starts again with every broker life, while a data directory
		// keeps the flows of earlier lives, whose clients resend under
		// their names when they reconnect.
		for n := b.nextFlow + 1; name == "" || c.vpn.pubFlows[name] != nil; n++ {
			name = "solacetest-pubflow-" + strconv.FormatUint(uint64(n), 10)
		}
		acked, _ := a.uint(apLastMsgIDAcked)
		pf = &pubFlow{name: name, lastID: acked}
		c.vpn.pubFlows[name] = pf
		b.st.pubFlowAdvanced(c.vpn, pf, nil)
	}
	b.nextFlow++
	pf.flowID = b.nextFlow
	pf.pubID = b.nextFlow
	pf.owner = c
	c.pubFlow = pf
	// The reply's last id tells the client what the broker already has; the
	// client resends what follows. A rejection the client may not have heard
	// of (its nack went out on the old connection) must not hide behind that
	// id, so report the id before the first such rejection: its resend is
	// nacked again and the rest are acked as duplicates.
	last := pf.lastID
	clientAcked, _ := a.uint(apLastMsgIDAcked)
	for id := range pf.nacked {
		if id > clientAcked && id <= last {
			last = id - 1
		}
	}
	params := []adParam{
		{Type: apLastMsgIDAcked, Value: u64(last)},
		{Type: apWindow, Value: window},
		{Type: apFlowID, Value: u32(pf.flowID)},
		{Type: apFlowName, Value: cstr(pf.name)},
		{Type: apPublisherID, Value: u32(pf.pubID)},
	}
	if b.st != nil {
		// The last id confirms what it covers: not before that is on disk.
		b.st.ackAfterSync(c, reply(protoAssuredCtrl, tag, 200, "OK", encodeAdCtrl(adOpenFlow, params)))
	} else {
		c.sendAdCtrl(tag, 200, "OK", adOpenFlow, params)
	}
	b.log.Debug("publisher flow opened", "client", c.clientName, "flow", pf.name, "last_id", last)
}

// bind attaches a consumer flow to a queue, creating a temporary queue when
// the client asks for durability 2.
func (c *conn) bind(tag []byte, a *adctrl) {
	b := c.b
	fail := func(code uint32, text string) {
		c.sendAdCtrl(tag, code, text, adBind, nil)
	}
	if _, ok := a.get(apDTEName); ok {
		fail(503, "Unknown Durable Topic Endpoint")
		return
	}
	var sel *selector.Selector
	if text, ok := a.get(apSelector); ok && trimNUL(text) != "" {
		var err error
		if sel, err = selector.Compile(trimNUL(text)); err != nil {
			b.log.Info("bind with an invalid selector refused", "client", c.clientName, "selector", trimNUL(text), "error", err)
			fail(400, "Invalid Selector")
			return
		}
	}
	replay, wantsReplay := a.get(apStartReplay)
	nameB, _ := a.get(apQueueName)
	name := trimNUL(nameB)
	durability, _ := a.uint(apDurability)
	q := c.vpn.queues[name]
	if q != nil && (durability == 2) == q.cfg.Durable {
		b.log.Info("bind with the wrong durability refused", "client", c.clientName, "queue", name, "durable", q.cfg.Durable)
		fail(400, "Invalid Queue or Topic Endpoint Durability")
		return
	}
	if q == nil {
		if durability != 2 {
			b.log.Info("bind to unknown queue refused", "client", c.clientName, "queue", name)
			fail(503, "Unknown Queue")
			return
		}
		if !c.mayCreateEndpoint(false) {
			fail(403, "Permission Not Allowed")
			return
		}
		q = newQueue(c.vpn, QueueConfig{Name: name, AccessType: AccessExclusive, IngressEnabled: true, EgressEnabled: true, RespectTTL: true})
		q.tempOwner = c.clientName
		c.vpn.queues[name] = q
		b.log.Info("temporary queue created", "client", c.clientName, "queue", name)
	}
	if !q.cfg.EgressEnabled {
		fail(503, "Queue Shutdown")
		return
	}
	if q.cfg.AccessType != AccessNonExclusive && !q.cfg.Durable && len(q.flows) > 0 {
		fail(503, "Max clients exceeded for Queue")
		return
	}
	window, _ := a.uint(apWindow)
	_, wantUpdates := a.get(apWantFlowUpdate)
	b.nextFlow++
	fl := &flow{
		sel:         sel,
		id:          b.nextFlow,
		q:           q,
		c:           c,
		window:      int(window),
		unsettled:   map[uint64]*qmsg{},
		wantUpdates: wantUpdates,
		maxUnacked:  defaultMaxUnacked,
	}
	q.flows = append(q.flows, fl)
	c.flows[fl.id] = fl
	fl.active = q.activeSlot(len(q.flows) - 1)
	if wantsReplay {
		// The window is still closed, so nothing is delivered before the
		// bind response.
		if code, text := b.startReplay(fl, replay); code != 200 {
			q.flows = q.flows[:len(q.flows)-1]
			delete(c.flows, fl.id)
			b.log.Info("replay refused", "client", c.clientName, "queue", name, "reason", text)
			fail(code, text)
			return
		}
	}
	access, dur := byte(1), byte(1)
	if q.cfg.AccessType == AccessNonExclusive {
		access = 2
	}
	if !q.cfg.Durable {
		dur = 2
	}
	maxRedeliv := q.cfg.MaxRedeliveryCount
	if maxRedeliv > 255 {
		maxRedeliv = 255
	}
	params := []adParam{
		{Type: apLastMsgIDAcked, Value: u64(0)},
		{Type: apLastMsgIDRecved, Value: u64(0)},
		{Type: apFlowID, Value: u32(fl.id)},
		{Type: apQueueName, Value: cstr(name)},
		{Type: apAccessType, Value: u8(access)},
		{Type: apDurability, Value: u8(dur)},
		{Type: apGrantedPerms, Value: u32(7)},
		{Type: apRespectTTL, Value: u8(boolByte(q.cfg.RespectTTL))},
		{Type: apEndpointID, Value: u32(fl.id)},
		{Type: apMaxRedelivery, Value: u8(byte(maxRedeliv))},
		{Type: apMaxUnacked, Value: u32(uint32(fl.maxUnacked))},
		{Type: apEPBehaviour, Value: []byte{epDeliveryCountEnabled, 0}},
		{Type: apSpoolerUniqueID, Value: u64(b.spoolerID)},
	}
	if wantUpdates {
		params = append(params, adParam{Type: apActiveFlow, Value: u8(boolByte(fl.active))})
	}
	c.sendAdCtrl(tag, 200, "OK", adBind, params)
	b.log.Info("consumer bound", "client", c.clientName, "queue", name, "flow", fl.id, "active", fl.active, "window", window)
	b.dispatch(q)
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// clientAck handles a consumer's transport ack, window update and
// application acks (settlements).
func (c *conn) clientAck(a *adctrl) {
	b := c.b
	id, _ := a.uint(apFlowID)
	fl := c.flows[uint32(id)]
	if fl == nil {
		return // an ack for a flow that is gone (e.g. from before a reconnect)
	}
	if v, ok := a.uint(apLastMsgIDAcked); ok {
		fl.transportAck(v)
	}
	if v, ok := a.uint(apWindow); ok {
		fl.window = int(v)
	}
	for _, p := range a.Params {
		if p.Type != apAppAck {
			continue
		}
		if r, ok := decodeAppAck(p.Value); ok {
			b.settle(fl, r)
		}
	}
	b.dispatch(fl.q)
}

// ---- oversized messages ----
//
// readFrame skips the payload of a message larger than the broker accepts.
// As on PubSub+, the connection stays up, a direct message is discarded, and
// a guaranteed one is rejected to its publisher with 400 "Document Is Too
// Large".

// handleOversize answers an oversized frame.
func (c *conn) handleOversize(f *frame) {
	b := c.b
	topicB, _ := f.param(pTopic)
	topic := trimNUL(topicB)
	if f.Proto != protoTrMsg || f.Flags&flagADF == 0 {
		b.log.Info("message above the maximum size discarded", "client", c.clientName, "topic", topic, "bytes", f.Oversize)
		return
	}
	idB, _ := f.param(pADMsgID)
	id := beUint(idB)
	b.mu.Lock()
	defer b.mu.Unlock()
	pf := c.pubFlow
	if pf == nil {
		return
	}
	if id > pf.lastID {
		pf.lastID = id
	}
	c.flushAck()
	b.log.Info("guaranteed message above the maximum size rejected", "client", c.clientName, "topic", topic, "bytes", f.Oversize)
	c.sendAdCtrl(nil, 400, "Document Is Too Large", adAck, []adParam{
		{Type: apLastMsgIDAcked, Value: u64(id)},
		{Type: apFlowID, Value: u32(pf.flowID)},
	})
}
