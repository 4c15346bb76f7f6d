//go:build !unix

package crawldb

type aliveness int

const (
	aliveUnknown aliveness = iota
	aliveYes
	aliveNo
)

// processAlive cannot check processes on this platform.
func processAlive(pid int) aliveness { return aliveUnknown }
