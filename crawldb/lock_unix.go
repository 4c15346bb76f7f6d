//go:build unix

package crawldb

import (
	"errors"
	"syscall"
)

type aliveness int

const (
	aliveUnknown aliveness = iota
	aliveYes
	aliveNo
)

// processAlive reports whether process pid exists on this host: signal 0
// checks without sending anything; EPERM means it exists but belongs to
// another user.
func processAlive(pid int) aliveness {
	err := syscall.Kill(pid, 0)
	switch {
	case err == nil, errors.Is(err, syscall.EPERM):
		return aliveYes
	case errors.Is(err, syscall.ESRCH):
		return aliveNo
	}
	return aliveUnknown
}
