package hdfs

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"time"

	gohdfs "github.com/colinmarc/hdfs/v2"
)

// The backoff of Close while the namenode reports the last block as not
// yet replicated: it starts at closeFirstDelay and doubles up to
// closeMaxDelay (the Java client starts at 400 ms and doubles).
const (
	closeFirstDelay = 100 * time.Millisecond
	closeMaxDelay   = 5 * time.Second
)

// writer is an HDFS file being written. Its library writer belongs to the
// client of slot and is used only with slot.mu held.
type writer struct {
	fs   *FS
	slot *slot
	name string

	mu     sync.Mutex
	w      fileWriter
	bw     *bufio.Writer // in front of slotWriter{w}
	closed bool
}

func newWriter(f *FS, s *slot, w fileWriter, name string) *writer {
	wr := &writer{fs: f, slot: s, name: name, w: w}
	wr.bw = bufio.NewWriterSize(slotWriter{wr}, f.st.writeBufferSize)
	return wr
}

// slotWriter writes to the library's writer with the slot held.
type slotWriter struct{ w *writer }

func (s slotWriter) Write(p []byte) (int, error) {
	s.w.slot.mu.Lock()
	defer s.w.slot.mu.Unlock()
	if s.w.slot.c == nil {
		return 0, fs.ErrClosed
	}
	var n int
	err := s.w.fs.bounded(s.w.w.SetDeadline, func() error {
		var err error
		n, err = s.w.w.Write(p)
		return err
	})
	return n, mapError(err)
}

// Write buffers p, sending full buffers to the datanodes. After an error
// every Write and Close fails.
func (w *writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, w.fs.pathError("write", w.name, fs.ErrClosed)
	}
	n, err := w.bw.Write(p)
	if err != nil {
		return n, w.fs.pathError("write", w.name, err)
	}
	return n, nil
}

// Close sends what is buffered and completes the file on the namenode.
// While the namenode answers that the last block is not yet replicated
// enough (the library's ErrReplicating: the datanodes acknowledged every
// byte, the namenode has not heard from them yet), Close asks again with
// backoff, for at most CloseRetryTimeout, as the Java client does. If a
// write failed the file is not completed: a short file never passes for a
// whole one. Close returns nil only for a complete file; a second Close
// fails with fs.ErrClosed.
func (w *writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return w.fs.pathError("close", w.name, fs.ErrClosed)
	}
	w.closed = true
	if err := w.bw.Flush(); err != nil {
		return w.fs.pathError("close", w.name, fmt.Errorf("file left incomplete: %w", err))
	}
	timeout := w.fs.st.closeRetryTimeout
	start := w.fs.now()
	delay := closeFirstDelay
	for attempt := 1; ; attempt++ {
		err := w.complete()
		if err == nil {
			return nil
		}
		if !errors.Is(err, gohdfs.ErrReplicating) {
			return w.fs.pathError("close", w.name, err)
		}
		waited := w.fs.now().Sub(start)
		if waited >= timeout {
			return w.fs.pathError("close", w.name, fmt.Errorf(
				"the namenode still finds the last block not replicated after %d attempts in %s: %w",
				attempt, waited.Round(time.Millisecond), err))
		}
		w.fs.st.log.Debug("hdfs: close: last block not replicated yet; retrying",
			"path", w.fs.uri(w.name), "attempt", attempt, "delay", delay)
		w.fs.sleep(min(delay, timeout-waited))
		delay = min(2*delay, closeMaxDelay)
	}
}

// complete calls the library's Close once, with the slot held.
func (w *writer) complete() error {
	w.slot.mu.Lock()
	defer w.slot.mu.Unlock()
	if w.slot.c == nil {
		return fs.ErrClosed
	}
	return mapError(w.fs.bounded(w.w.SetDeadline, w.w.Close))
}
