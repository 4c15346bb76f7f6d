package resolver

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/miekg/dns"
)

// Server back-off after consecutive time-outs: 100 ms doubled per
// time-out, at most 10 s.
const (
	backoffBase = 100 * time.Millisecond
	backoffMax  = 10 * time.Second
	// udpReadBuffer is the receive buffer asked for each socket (the
	// kernel caps it at net.core.rmem_max): bursts of replies must not
	// be dropped while the receiver is busy.
	udpReadBuffer = 4 << 20
	// ednsSize is the UDP payload size advertised (EDNS0): large enough
	// for most answers, small enough not to fragment.
	ednsSize = 1232
)

// upstream is one name server: its sockets and health.
type upstream struct {
	addr  string
	socks []*udpSock
	next  atomic.Uint32 // round-robin over socks
	// bad counts ignored replies from this server (for error messages).
	bad atomic.Int64

	mu          sync.Mutex
	outstanding int
	fails       int
	downUntil   time.Time
}

// failed records a time-out of the server.
func (u *upstream) failed(now time.Time) {
	u.mu.Lock()
	u.fails++
	d := backoffBase << min(u.fails-1, 10)
	u.downUntil = now.Add(min(d, backoffMax))
	u.mu.Unlock()
}

// answered records a reply from the server.
func (u *upstream) answered() {
	u.mu.Lock()
	u.fails, u.downUntil = 0, time.Time{}
	u.mu.Unlock()
}

// udpSock is a connected UDP socket to an upstream with its pending
// queries by message id.
type udpSock struct {
	conn *net.UDPConn
	up   *upstream

	mu      sync.Mutex
	pending map[uint16]*query
	rng     *mrand.Rand
}

// query is one question to one server, from its resolution goroutine to
// the sender and back from the receiver.
type query struct {
	name  string // FQDN, lower case
	qtype uint16
	sock  *udpSock
	reply chan reply // buffered: one reply at most is sent

	// guarded by sock.mu
	id         uint16
	registered bool
	abandoned  bool
}

// reply is the outcome of a query: a message or an error.
type reply struct {
	msg *dns.Msg
	err error
}

// client is the asynchronous DNS client: upstreams, the send queue and
// the goroutines that serve them.
type client struct {
	cfg   *Config
	ups   []*upstream
	sendq chan *query
	ctr   *counters
	rr    atomic.Uint32 // tie-break among equally loaded servers
}

// newClient opens the sockets. Its goroutines are started by start.
func newClient(cfg *Config, ctr *counters) (*client, error) {
	c := &client{cfg: cfg, sendq: make(chan *query, cfg.QueueSize), ctr: ctr}
	for _, s := range cfg.Servers {
		raddr, err := net.ResolveUDPAddr("udp", s)
		if err != nil {
			c.close()
			return nil, fmt.Errorf("resolver: name server %s: %w", s, err)
		}
		u := &upstream{addr: s}
		for range max(1, cfg.SocketsPerServer) {
			conn, err := net.DialUDP("udp", nil, raddr)
			if err != nil {
				c.close()
				return nil, fmt.Errorf("resolver: socket to %s: %w", s, err)
			}
			_ = conn.SetReadBuffer(udpReadBuffer) // best effort
			var seed [32]byte
			_, _ = rand.Read(seed[:])
			u.socks = append(u.socks, &udpSock{conn: conn, up: u, pending: map[uint16]*query{},
				rng: mrand.New(mrand.NewChaCha8(seed))})
		}
		c.ups = append(c.ups, u)
	}
	return c, nil
}

// start runs the sender and one receiver per socket until ctx ends and
// the sockets are closed.
func (c *client) start(ctx context.Context, wg *sync.WaitGroup) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.sender(ctx)
	}()
	for _, u := range c.ups {
		for _, s := range u.socks {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.receiver(s)
			}()
		}
	}
}

// close closes the sockets (ending the receivers).
func (c *client) close() {
	for _, u := range c.ups {
		for _, s := range u.socks {
			_ = s.conn.Close()
		}
	}
}

// sender writes the queued queries to their sockets.
func (c *client) sender(ctx context.Context) {
	buf := make([]byte, 0, 512)
	m := new(dns.Msg)
	for {
		select {
		case <-ctx.Done():
			return
		case q := <-c.sendq:
			buf = c.send(q, m, buf)
		}
	}
}

// send registers q under a free id of its socket and writes it.
func (c *client) send(q *query, m *dns.Msg, buf []byte) []byte {
	s := q.sock
	s.mu.Lock()
	if q.abandoned {
		s.mu.Unlock()
		return buf
	}
	if len(s.pending) >= 1<<16-1 {
		s.mu.Unlock()
		q.reply <- reply{err: fmt.Errorf("%s: %w: 65,535 queries pending on one socket", s.up.addr, ErrServerFailure)}
		return buf
	}
	id := uint16(s.rng.Uint32())
	for s.pending[id] != nil {
		id = uint16(s.rng.Uint32())
	}
	q.id, q.registered = id, true
	s.pending[id] = q
	s.mu.Unlock()

	*m = dns.Msg{}
	m.Id = id
	m.RecursionDesired = true
	m.Question = []dns.Question{{Name: q.name, Qtype: q.qtype, Qclass: dns.ClassINET}}
	m.SetEdns0(ednsSize, false)
	out, err := m.PackBuffer(buf[:cap(buf)])
	if err == nil {
		c.ctr.queries.Add(1)
		_, err = s.conn.Write(out)
		buf = out[:0]
	}
	if err != nil && s.take(q) {
		q.reply <- reply{err: fmt.Errorf("send to %s: %w", s.up.addr, err)}
	}
	return buf
}

// take removes q from the pending queries if it is still there, and
// reports whether it was (whoever takes it sends its one reply).
func (s *udpSock) take(q *query) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q.registered && s.pending[q.id] == q {
		delete(s.pending, q.id)
		return true
	}
	return false
}

// abandon stops q: the sender will not send it, and a late reply finds
// no pending query.
func (s *udpSock) abandon(q *query) {
	s.mu.Lock()
	q.abandoned = true
	if q.registered && s.pending[q.id] == q {
		delete(s.pending, q.id)
	}
	s.mu.Unlock()
}

// receiver reads replies from one socket and hands each to the query
// pending under its id, until the socket is closed.
func (c *client) receiver(s *udpSock) {
	buf := make([]byte, 65535)
	for {
		n, err := s.conn.Read(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if errors.Is(err, syscall.ECONNREFUSED) {
				// ICMP port unreachable: nothing listens there. Fail the
				// pending queries now rather than at their time-outs.
				c.failPending(s, fmt.Errorf("%s: %w: connection refused", s.up.addr, ErrServerFailure))
				continue
			}
			c.cfg.Log.Debug("resolver: read", "server", s.up.addr, "err", err)
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			time.Sleep(10 * time.Millisecond) // an unexpected error: do not spin
			continue
		}
		if n < 12 {
			c.ignore(s)
			continue
		}
		id := binary.BigEndian.Uint16(buf)
		s.mu.Lock()
		q := s.pending[id]
		s.mu.Unlock()
		if q == nil {
			c.ignore(s)
			continue
		}
		m := new(dns.Msg)
		if err := m.Unpack(buf[:n]); err != nil || !m.Response || !answers(m, q) {
			c.ignore(s)
			continue
		}
		if s.take(q) {
			q.reply <- reply{msg: m}
		}
	}
}

// answers reports whether m's question is q's (a reply without a question
// is accepted only as an error code, as some servers send FORMERR).
func answers(m *dns.Msg, q *query) bool {
	if len(m.Question) == 0 {
		return m.Rcode != dns.RcodeSuccess
	}
	mq := m.Question[0]
	return len(m.Question) == 1 && mq.Qtype == q.qtype && mq.Qclass == dns.ClassINET && strings.EqualFold(mq.Name, q.name)
}

func (c *client) ignore(s *udpSock) {
	c.ctr.ignored.Add(1)
	s.up.bad.Add(1)
}

// failPending fails every query pending on s with err.
func (c *client) failPending(s *udpSock, err error) {
	s.mu.Lock()
	qs := make([]*query, 0, len(s.pending))
	for id, q := range s.pending {
		delete(s.pending, id)
		qs = append(qs, q)
	}
	s.mu.Unlock()
	for _, q := range qs {
		q.reply <- reply{err: err}
	}
}

// pick chooses the server for an attempt: among those not backing off,
// the one with the fewest queries outstanding, preferring servers not in
// tried; with all backing off, the one that comes back first.
func (c *client) pick(tried []*upstream, now time.Time) *upstream {
	n := len(c.ups)
	if n == 1 {
		return c.ups[0]
	}
	start := int(c.rr.Add(1) % uint32(n))
	var best *upstream
	bestScore := 0
	for i := range n {
		u := c.ups[(start+i)%n]
		u.mu.Lock()
		score := u.outstanding
		if now.Before(u.downUntil) {
			score += 1 << 30
		}
		u.mu.Unlock()
		for _, t := range tried {
			if t == u {
				score += 1 << 40
				break
			}
		}
		if best == nil || score < bestScore {
			best, bestScore = u, score
		}
	}
	return best
}

// exchange asks name's qtype records of one server once: over UDP, then
// over TCP if the reply is truncated. It returns ErrTimeout (wrapped) if
// no reply came within the configured time-out.
func (c *client) exchange(ctx context.Context, u *upstream, name string, qtype uint16) (*dns.Msg, error) {
	u.mu.Lock()
	u.outstanding++
	u.mu.Unlock()
	defer func() {
		u.mu.Lock()
		u.outstanding--
		u.mu.Unlock()
	}()
	s := u.socks[int(u.next.Add(1))%len(u.socks)]
	q := &query{name: name, qtype: qtype, sock: s, reply: make(chan reply, 1)}
	bad := u.bad.Load()
	timer := time.NewTimer(c.cfg.Timeout)
	defer timer.Stop()
	c.ctr.inFlight.Add(1)
	defer c.ctr.inFlight.Add(-1)
	select {
	case c.sendq <- q:
	case <-timer.C:
		c.ctr.timeouts.Add(1)
		u.failed(time.Now())
		return nil, fmt.Errorf("%s: %w: the send queue stayed full for %v", u.addr, ErrTimeout, c.cfg.Timeout)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	var r reply
	select {
	case r = <-q.reply:
	case <-timer.C:
		s.abandon(q)
		c.ctr.timeouts.Add(1)
		u.failed(time.Now())
		msg := fmt.Sprintf("no reply from %s within %v", u.addr, c.cfg.Timeout)
		if n := u.bad.Load() - bad; n > 0 {
			msg += fmt.Sprintf(" (%d malformed or mismatched replies ignored)", n)
		}
		return nil, fmt.Errorf("%w: %s", ErrTimeout, msg)
	case <-ctx.Done():
		s.abandon(q)
		return nil, ctx.Err()
	}
	if r.err != nil {
		u.failed(time.Now())
		return nil, r.err
	}
	u.answered()
	if !r.msg.Truncated {
		return r.msg, nil
	}
	c.ctr.truncated.Add(1)
	c.ctr.tcp.Add(1)
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	m.RecursionDesired = true
	tctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	tc := &dns.Client{Net: "tcp", Timeout: c.cfg.Timeout}
	in, _, err := tc.ExchangeContext(tctx, m, u.addr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			c.ctr.timeouts.Add(1)
			return nil, fmt.Errorf("%w: truncated reply from %s, and over TCP: %v", ErrTimeout, u.addr, err)
		}
		return nil, fmt.Errorf("%w: truncated reply from %s, and over TCP: %v", ErrServerFailure, u.addr, err)
	}
	if in.Id != m.Id || !answers(in, &query{name: name, qtype: qtype}) {
		return nil, fmt.Errorf("%w: TCP reply from %s does not answer the question", ErrMalformed, u.addr)
	}
	return in, nil
}

// ask asks name's qtype records with retries: a time-out, a server
// failure or a refused connection moves to another server. It returns a
// reply whose Rcode is NOERROR or NXDOMAIN.
func (c *client) ask(ctx context.Context, name string, qtype uint16) (*dns.Msg, error) {
	var tried []*upstream
	var errs []error
	for attempt := 0; attempt <= c.cfg.Retries; attempt++ {
		if attempt > 0 {
			c.ctr.retries.Add(1)
		}
		u := c.pick(tried, time.Now())
		tried = append(tried, u)
		m, err := c.exchange(ctx, u, name, qtype)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			c.cfg.Log.Debug("resolver: query failed", "server", u.addr, "name", name, "err", err)
			errs = append(errs, err)
			continue
		}
		switch m.Rcode {
		case dns.RcodeSuccess, dns.RcodeNameError:
			return m, nil
		}
		errs = append(errs, fmt.Errorf("%w: %s answered %s", ErrServerFailure, u.addr, dns.RcodeToString[m.Rcode]))
	}
	return nil, joinAttempts(errs)
}

// joinAttempts summarizes the errors of all attempts: the last one's
// cause, with every attempt's message.
func joinAttempts(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	last := errs[len(errs)-1]
	for _, e := range errs { // a time-out anywhere makes the lookup a time-out
		if errors.Is(e, ErrTimeout) {
			last = e
		}
	}
	return &attemptsError{cause: last, msg: fmt.Sprintf("%d attempts: %s", len(errs), strings.Join(msgs, "; "))}
}

// attemptsError is the failure of every attempt of a query.
type attemptsError struct {
	cause error
	msg   string
}

func (e *attemptsError) Error() string { return e.msg }
func (e *attemptsError) Unwrap() error { return e.cause }
