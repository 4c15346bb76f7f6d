//go:build !unix

package flock

import "os"

func lockFile(*os.File) error { return ErrUnsupported }
