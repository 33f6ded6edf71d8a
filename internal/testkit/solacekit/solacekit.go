// Package solacekit holds what the solace plugins' tests share about the
// plugins themselves (solacetest, the broker, knows nothing of them): the
// connection block their configs start with. Only _test.go files import it.
package solacekit

import "fmt"

// ConnectionYAML is the connection block of the solace input and output for
// a broker at url (a solacetest broker's SMFURL), as the plugins' tests use
// it: the default client user and fast failure settings (no connect
// retries, quick client reconnects).
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
