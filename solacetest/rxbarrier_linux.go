//go:build linux

package solacetest

import (
	"net"

	"golang.org/x/sys/unix"
)

// socketPending reports the bytes waiting in the socket's receive buffer.
func socketPending(c *net.TCPConn) (int, bool) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, false
	}
	n, ioErr := 0, error(nil)
	if err := rc.Control(func(fd uintptr) { n, ioErr = unix.IoctlGetInt(int(fd), unix.TIOCINQ) }); err != nil || ioErr != nil {
		return 0, false
	}
	return n, true
}
