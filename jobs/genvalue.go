package jobs

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
)

// Generate's selection job keys each value by its host (or domain) and its
// rank, so that the engine's sort does the ranking and a reducer sees one
// host's values together, in the order it needs them:
//
//	pending URL:  host 0x00 0x00 URL
//	candidate:    host 0x00 0x01 key(score) URL
//
// that is all the host's pending URLs first (the URLs of fetch lists not yet
// merged by updatedb), then its candidates best first: by decreasing score
// (Nutch's generatorSortValue), ties by increasing URL. key(score) is 4 bytes
// that sort as the score decreases. Hosts and URLs never hold a NUL byte
// (the map side checks), so the keys of one host are contiguous. The
// partitioner hashes the host part only (selectPartitioner).

const (
	selPending   byte = 0
	selCandidate byte = 1
)

// scoreKey maps a score to a number whose increasing order is the
// decreasing order of scores. NaN sorts after every number; -0 and +0 are
// equal.
func scoreKey(s float32) uint32 {
	if s != s { // NaN
		return math.MaxUint32
	}
	if s == 0 {
		s = 0
	}
	b := math.Float32bits(s)
	if b&0x80000000 != 0 {
		b = ^b
	} else {
		b |= 0x80000000
	}
	return ^b
}

// candidateKey is the selection key of a candidate.
func candidateKey(host string, score float32, url string) string {
	var b strings.Builder
	b.Grow(len(host) + 6 + len(url))
	b.WriteString(host)
	b.WriteByte(0)
	b.WriteByte(selCandidate)
	var k [4]byte
	binary.BigEndian.PutUint32(k[:], scoreKey(score))
	b.Write(k[:])
	b.WriteString(url)
	return b.String()
}

// pendingKey is the selection key of a pending URL.
func pendingKey(host, url string) string {
	return host + "\x00\x00" + url
}

// parseSelectKey splits a selection key; rank is the score key of a
// candidate (0 for a pending URL).
func parseSelectKey(key string) (host string, kind byte, rank uint32, url string, err error) {
	i := strings.IndexByte(key, 0)
	if i < 0 || i+1 >= len(key) {
		return "", 0, 0, "", errors.New("generate: malformed selection key")
	}
	host, kind, rest := key[:i], key[i+1], key[i+2:]
	switch kind {
	case selPending:
		return host, kind, 0, rest, nil
	case selCandidate:
		if len(rest) < 4 {
			return "", 0, 0, "", errors.New("generate: malformed candidate key")
		}
		return host, kind, binary.BigEndian.Uint32([]byte(rest[:4])), rest[4:], nil
	}
	return "", 0, 0, "", errors.New("generate: selection key of unknown kind")
}

// selectPartitioner partitions selection keys by their host part (FNV-1a of
// the host, as mapreduce.HashPartitioner).
func selectPartitioner(hash func(string, int) int) func(string, int) int {
	return func(key string, n int) int {
		if i := strings.IndexByte(key, 0); i >= 0 {
			key = key[:i]
		}
		return hash(key, n)
	}
}
