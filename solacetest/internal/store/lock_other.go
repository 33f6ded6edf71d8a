//go:build !unix

package store

import (
	"errors"
	"os"
)

var errLocked = errors.New("locked")

func tryLock(*os.File) error {
	return errors.New("data directories need flock(2), which this platform lacks")
}
func waitLock(*os.File) error { return tryLock(nil) }
