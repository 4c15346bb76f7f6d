//go:build unix

package streamemu

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// partitioner assigns a map output key to one of n reduce tasks.
type partitioner func(key []byte, n int) int

// javaPartition is Hadoop's (hash & Integer.MAX_VALUE) % n.
func javaPartition(hash int32, n int) int {
	return int(hash&0x7fffffff) % n
}

// hashPartitioner is Hadoop's default HashPartitioner over a Text key:
// Text.hashCode is WritableComparator.hashBytes, 31*h + b from h = 1, the
// bytes signed as Java's are.
func hashPartitioner(key []byte, n int) int {
	return javaPartition(javaHash(1, key), n)
}

// javaHash is 31*h + b over b from h, the bytes signed as Java's are.
func javaHash(h int32, b []byte) int32 {
	for _, c := range b {
		h = 31*h + int32(int8(c))
	}
	return h
}

// keyFieldPartitioner is KeyFieldBasedPartitioner with options "-kF,L"
// (or "-kF"): the hash (31*h + b from h = 0, bytes signed) of the key's
// fields F to L (1-based; L = 0 or absent: to the last), fields separated
// by sep. A key with fewer than F fields goes to partition 0. Hadoop
// hashes the key's UTF-8 re-encoding (Text.toString then getBytes), which
// changes only invalid UTF-8; the emulator re-encodes the same way,
// approximately (one replacement character per run of invalid bytes).
func keyFieldPartitioner(options string, sep byte) (partitioner, error) {
	first, last, err := parseKeySpec(options)
	if err != nil {
		return nil, err
	}
	return func(key []byte, n int) int {
		if !utf8.Valid(key) {
			key = bytes.ToValidUTF8(key, []byte("\uFFFD"))
		}
		if len(key) == 0 {
			return 0
		}
		start, end := fieldRange(key, sep, first, last)
		if start < 0 {
			return javaPartition(0, n)
		}
		return javaPartition(javaHash(0, key[start:end]), n)
	}, nil
}

// parseKeySpec parses "-kF[,L]" (without character offsets or flags: the
// emulator supports no more).
func parseKeySpec(options string) (first, last int, err error) {
	s := strings.TrimSpace(options)
	spec, ok := strings.CutPrefix(s, "-k")
	if !ok || strings.ContainsAny(spec, " .nr") {
		return 0, 0, fmt.Errorf("emulator: key field options %q: only -kF or -kF,L are supported", options)
	}
	f, l, hasL := strings.Cut(spec, ",")
	if first, err = strconv.Atoi(f); err != nil || first < 1 {
		return 0, 0, fmt.Errorf("emulator: key field options %q: bad first field", options)
	}
	if hasL {
		if last, err = strconv.Atoi(l); err != nil || last < 0 || (last > 0 && last < first) {
			return 0, 0, fmt.Errorf("emulator: key field options %q: bad last field", options)
		}
	}
	return first, last, nil
}

// fieldRange returns the byte range of fields first..last of key (last 0:
// to the end); start is -1 if the key has fewer than first fields.
func fieldRange(key []byte, sep byte, first, last int) (start, end int) {
	start, field := 0, 1
	for field < first {
		i := bytes.IndexByte(key[start:], sep)
		if i < 0 {
			return -1, -1
		}
		start += i + 1
		field++
	}
	if last == 0 {
		return start, len(key)
	}
	end = start
	for {
		i := bytes.IndexByte(key[end:], sep)
		if i < 0 {
			return start, len(key)
		}
		if field == last {
			return start, end + i
		}
		end += i + 1
		field++
	}
}

// splitKeyValue splits a map output line as Streaming does: the key is
// the first n fields (up to the n-th separator), the value what follows;
// a line with fewer separators is all key, with an empty value.
func splitKeyValue(line []byte, sep byte, n int) (key, value []byte) {
	pos := -1
	for i := 0; i < n; i++ {
		j := bytes.IndexByte(line[pos+1:], sep)
		if j < 0 {
			return line, nil
		}
		pos += j + 1
	}
	return line[:pos], line[pos+1:]
}
