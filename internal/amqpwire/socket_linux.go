//go:build linux

package amqpwire

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// socketIO returns how a connection reads from and writes to nc. On a TCP
// socket it issues read(2) and write(2) with syscall.RawSyscall inside the
// socket's RawConn: a socket that has nothing to read or no room to write
// still parks the goroutine in the poller (EAGAIN), and the deadlines hold.
//
// Why raw: the socket is non-blocking, so these calls never sleep in the
// kernel, but a system call the runtime is told about (syscall.Syscall, as
// net.Conn uses) wakes the runtime's monitor thread when it ends while the
// process was idle, and the monitor then polls every 20 us for a
// millisecond, handing Ps to other threads; a connection pipelining to a
// broker goes idle and wakes up every few milliseconds, so at a
// broker-bound rate that polling is a real share of the process's CPU and of
// its context switches, which raw calls do not pay. Other connections (TLS)
// use nc.
func socketIO(nc net.Conn) (read, write func([]byte) (int, error)) {
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return nc.Read, nc.Write
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nc.Read, nc.Write
	}
	// opErr reports as net.Conn would: the poller's error (deadline,
	// closed) or the call's, in a *net.OpError; io.EOF as it is.
	opErr := func(op string, pollErr, callErr error) error {
		err := pollErr
		if err == nil {
			err = callErr
		}
		if err == nil || err == io.EOF {
			return err
		}
		return &net.OpError{Op: op, Net: "tcp", Source: tc.LocalAddr(), Addr: tc.RemoteAddr(), Err: err}
	}
	read = func(p []byte) (int, error) {
		if len(p) == 0 {
			return 0, nil
		}
		n := 0
		var callErr error
		err := rc.Read(func(fd uintptr) bool {
			r, e := rawIO(syscall.SYS_READ, fd, p)
			switch {
			case e == syscall.EAGAIN:
				return false // wait in the poller until readable
			case e != 0:
				callErr = os.NewSyscallError("read", e)
			case r == 0:
				callErr = io.EOF
			default:
				n = r
			}
			return true
		})
		return n, opErr("read", err, callErr)
	}
	write = func(b []byte) (int, error) {
		n := 0
		var callErr error
		err := rc.Write(func(fd uintptr) bool {
			for n < len(b) {
				r, e := rawIO(syscall.SYS_WRITE, fd, b[n:])
				switch e {
				case 0:
					n += r
				case syscall.EAGAIN:
					return false // wait in the poller until writable
				default:
					callErr = os.NewSyscallError("write", e)
					return true
				}
			}
			return true
		})
		return n, opErr("write", err, callErr)
	}
	return read, write
}

// rawIO issues read(2) or write(2) (trap) on fd for p, again when a signal
// interrupts it: the bytes done, or the call's errno (EAGAIN when the
// socket is not ready).
func rawIO(trap, fd uintptr, p []byte) (int, syscall.Errno) {
	for {
		r, _, e := syscall.RawSyscall(trap, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		if e != syscall.EINTR {
			return int(r), e
		}
	}
}
