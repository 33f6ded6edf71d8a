package solacetest

// This file is InjectDirect: direct messages that no client published, for
// benchmarks of direct consumers whose publisher must not run in their
// process (and cannot run a Go client inside the benchmark broker's child,
// which serves from package initialisation, where the client's callbacks
// from C cannot enter Go).

// InjectDirect delivers n direct messages with payload (a binary attachment)
// on topic to the subscribers of vpn, as if a client without attributes had
// published them; they count in PublishedCount. It returns once every copy
// was handed to the subscribers' connections.
func (b *Broker) InjectDirect(vpn, topic string, payload []byte, n int) error {
	raw := publishFrame(topic, Message{Topic: topic, Payload: payload}).rawBytes
	data := func() []byte { return raw }
	for range n {
		b.mu.Lock()
		v, err := b.vpnLocked(vpn)
		if err != nil {
			b.mu.Unlock()
			return err
		}
		b.published[topic]++
		b.fanoutDirect(v, topic, data)
		b.mu.Unlock()
	}
	return nil
}
