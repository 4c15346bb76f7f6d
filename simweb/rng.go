package simweb

import (
	"math"
	"sort"
)

// Randomness in simweb is counter-based: every random quantity is a hash of
// (seed, stream, coordinates), so any value can be recomputed on its own, in
// any order, by any goroutine, without simulation state. The hash is the
// SplitMix64 finalizer; sequences (rng) are SplitMix64 streams whose
// starting state is such a hash.

// Stream tags keep the hashes of different quantities independent.
const (
	sHostSize uint64 = iota + 1
	sHostOrder
	sHostRole
	sHostProfile
	sGenre
	sTree
	sPage
	sLinks
	sPopularity
	sRate
	sEvent
	sTitle
	sPara
	sRender
	sVocab
	sRobots
	sSpecial
	sFailure
	sImage
	sTopic
	sTopicLink
	sTopicText
	sDrift
)

const golden = 0x9e3779b97f4a7c15

// mix64 is the SplitMix64 finalizer, a bijective 64-bit mixer.
func mix64(z uint64) uint64 {
	z ^= z >> 30
	z *= 0xbf58476d1ce4e5b9
	z ^= z >> 27
	z *= 0x94d049bb133111eb
	z ^= z >> 31
	return z
}

// hash3 hashes a seed, a stream tag and two coordinates.
func hash3(seed, stream, a, b uint64) uint64 {
	h := mix64(seed ^ mix64(stream*golden))
	h = mix64(h ^ (a + golden))
	return mix64(h ^ (b*0xd6e8feb86659fd93 + 0x632be59bd9b4e019))
}

// hash4 hashes a seed, a stream tag and three coordinates.
func hash4(seed, stream, a, b, c uint64) uint64 {
	return mix64(hash3(seed, stream, a, b) ^ (c*0xa0761d6478bd642f + 0xe7037ed1a0b428db))
}

// unit maps a hash to a float64 in [0, 1).
func unit(h uint64) float64 { return float64(h>>11) * (1.0 / (1 << 53)) }

// rng is a SplitMix64 sequence.
type rng struct{ s uint64 }

// newRNG starts the sequence of (seed, stream, a, b).
func newRNG(seed, stream, a, b uint64) rng { return rng{s: hash3(seed, stream, a, b)} }

func (r *rng) next() uint64 {
	r.s += golden
	return mix64(r.s)
}

// float returns a uniform float64 in [0, 1).
func (r *rng) float() float64 { return unit(r.next()) }

// intn returns a uniform int in [0, n); n must be positive.
func (r *rng) intn(n int) int {
	hi, _ := mulHi(r.next(), uint64(n))
	return int(hi)
}

// mulHi returns the high and low 64 bits of a*b.
func mulHi(a, b uint64) (uint64, uint64) {
	const mask32 = 1<<32 - 1
	a0, a1 := a&mask32, a>>32
	b0, b1 := b&mask32, b>>32
	w0 := a0 * b0
	t := a1*b0 + w0>>32
	w1 := t&mask32 + a0*b1
	return a1*b1 + t>>32 + w1>>32, a * b
}

// between returns a uniform int in [lo, hi].
func (r *rng) between(lo, hi int) int { return lo + r.intn(hi-lo+1) }

// chance returns true with probability p.
func (r *rng) chance(p float64) bool { return r.float() < p }

// normal returns a standard normal deviate (Box–Muller, one of the pair).
func (r *rng) normal() float64 {
	u1 := 1 - r.float() // (0, 1]
	u2 := r.float()
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

// exp returns an exponential deviate with mean 1.
func (r *rng) exp() float64 { return -math.Log(1 - r.float()) }

// poisson returns a Poisson deviate of the given (small) mean.
func (r *rng) poisson(mean float64) int {
	if mean <= 0 {
		return 0
	}
	if mean > 30 {
		n := int(math.Round(mean + math.Sqrt(mean)*r.normal()))
		return max(n, 0)
	}
	l := math.Exp(-mean)
	k, p := 0, r.float()
	for p > l {
		k++
		p *= r.float()
	}
	return k
}

// pick returns an index drawn from cumulative weights cum (ascending, last
// element the total).
func pick(cum []float64, u float64) int {
	x := u * cum[len(cum)-1]
	i := sort.SearchFloat64s(cum, x)
	if i < len(cum) && cum[i] == x {
		i++ // SearchFloat64s finds the first >= x; we want the first > x
	}
	return min(i, len(cum)-1)
}

// zipfTable holds the cumulative Zipf weights 1/(r+1)^s for ranks
// 0..len-1. A prefix of it is the Zipf distribution over that many ranks.
type zipfTable []float64

func newZipf(n int, s float64) zipfTable {
	t := make(zipfTable, n)
	sum := 0.0
	for r := range n {
		sum += math.Pow(float64(r+1), -s)
		t[r] = sum
	}
	return t
}

// sample draws a rank in [0, n) (n <= len(t)) with Zipf probabilities.
func (t zipfTable) sample(n int, u float64) int {
	if n <= 1 {
		return 0
	}
	return pick(t[:n], u)
}

// normCDF is the standard normal distribution function.
func normCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// aliasTable samples from a discrete distribution in O(1) (Vose's method).
type aliasTable struct {
	prob  []float64
	alias []int32
}

func newAlias(weights []float64) aliasTable {
	n := len(weights)
	sum := 0.0
	for _, w := range weights {
		sum += w
	}
	t := aliasTable{prob: make([]float64, n), alias: make([]int32, n)}
	scaled := make([]float64, n)
	var small, large []int32
	for i, w := range weights {
		scaled[i] = w * float64(n) / sum
		if scaled[i] < 1 {
			small = append(small, int32(i))
		} else {
			large = append(large, int32(i))
		}
	}
	for len(small) > 0 && len(large) > 0 {
		s, l := small[len(small)-1], large[len(large)-1]
		small = small[:len(small)-1]
		t.prob[s], t.alias[s] = scaled[s], l
		scaled[l] -= 1 - scaled[s]
		if scaled[l] < 1 {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	for _, i := range large {
		t.prob[i], t.alias[i] = 1, i
	}
	for _, i := range small {
		t.prob[i], t.alias[i] = 1, i
	}
	return t
}

// sample draws an index using one 64-bit random value.
func (t aliasTable) sample(h uint64) int {
	hi, lo := mulHi(h, uint64(len(t.prob)))
	i := int(hi)
	if unit(lo) < t.prob[i] {
		return i
	}
	return int(t.alias[i])
}
