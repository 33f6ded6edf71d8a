//go:build !linux

package amqpwire

import "net"

// socketIO returns how a connection reads from and writes to nc.
func socketIO(nc net.Conn) (read, write func([]byte) (int, error)) { return nc.Read, nc.Write }
