//go:build !linux

package solacetest

import "net"

// socketPending is not available here: SEMP reads do not wait.
func socketPending(*net.TCPConn) (int, bool) { return 0, false }
