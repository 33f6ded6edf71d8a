package solacetest

import "fmt"

// ConnectionYAML is the connection block of the solace input and output for
// a broker at url, as the plugins' tests use it: the default client user and
// fast failure settings (no connect retries, quick client reconnects).
func ConnectionYAML(url string) string {
	return fmt.Sprintf(`urls: [ %s ]
username: default
password: default
connect_retries: 0
reconnect_attempts: 20
reconnect_interval: 100ms
connect_timeout: 5s
`, url)
}

// ConnectionYAML is the package's ConnectionYAML for b's SMF address.
func (b *Broker) ConnectionYAML() string { return ConnectionYAML(b.SMFURL()) }
