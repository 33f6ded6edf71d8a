//go:build unix

package store

import (
	"errors"
	"os"
	"syscall"
)

var errLocked = errors.New("locked")

// tryLock takes f's exclusive flock without waiting.
func tryLock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errLocked
	}
	return err
}

// waitLock takes f's exclusive flock, waiting for it.
func waitLock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
