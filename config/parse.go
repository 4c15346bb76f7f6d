package config

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// parse checks raw against s's kind and returns the typed value.
func parse(s Setting, raw string) (any, error) {
	raw = strings.TrimSpace(raw)
	switch s.Kind {
	case String:
		if len(s.Choices) > 0 && !slices.Contains(s.Choices, raw) {
			return nil, fmt.Errorf("%q is not one of %s", raw, strings.Join(s.Choices, ", "))
		}
		return raw, nil
	case Int:
		n, err := strconv.Atoi(raw)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", raw)
		}
		return n, nil
	case Float:
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%q is not a number", raw)
		}
		return f, nil
	case Bool:
		return ParseBool(raw)
	case Duration:
		return ParseDuration(raw)
	case Size:
		return ParseSize(raw)
	case List:
		var out []string
		for _, it := range strings.Split(raw, ",") {
			if it = strings.TrimSpace(it); it != "" {
				out = append(out, it)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown kind %d", s.Kind)
}

// ParseBool parses true/false, 1/0, yes/no, on/off (any case).
func ParseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1", "yes", "on", "t", "y":
		return true, nil
	case "false", "0", "no", "off", "f", "n":
		return false, nil
	}
	return false, fmt.Errorf("%q is not a boolean (true or false)", s)
}

// ParseDuration parses a non-negative Go duration that may also use days:
// "30d", "1d12h", "90s", "0".
func ParseDuration(s string) (time.Duration, error) {
	in := strings.TrimSpace(s)
	if in == "0" {
		return 0, nil
	}
	if in == "" {
		return 0, fmt.Errorf("empty duration")
	}
	bad := func() error {
		return fmt.Errorf("%q is not a duration (like 90s, 15m, 12h or 30d)", s)
	}
	var total float64 // nanoseconds; float to detect overflow
	rest := in
	for rest != "" {
		i := 0
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.') {
			i++
		}
		j := i
		for j < len(rest) && !(rest[j] >= '0' && rest[j] <= '9' || rest[j] == '.') {
			j++
		}
		num, unit := rest[:i], rest[i:j]
		rest = rest[j:]
		if num == "" || unit == "" {
			return 0, bad()
		}
		if unit == "d" {
			f, err := strconv.ParseFloat(num, 64)
			if err != nil {
				return 0, bad()
			}
			total += f * float64(24*time.Hour)
			continue
		}
		d, err := time.ParseDuration(num + unit)
		if err != nil {
			return 0, bad()
		}
		total += float64(d)
	}
	if total >= math.MaxInt64 {
		return 0, fmt.Errorf("%q is too long a duration", s)
	}
	return time.Duration(total), nil
}

// ParseSize parses a byte count: a number with an optional unit B, K/KB/KiB,
// M/MB/MiB, G/GB/GiB, T/TB/TiB (any case; all powers of 1024, as memory is
// counted).
func ParseSize(s string) (int64, error) {
	in := strings.TrimSpace(s)
	i := 0
	for i < len(in) && (in[i] >= '0' && in[i] <= '9' || in[i] == '.') {
		i++
	}
	num, unit := in[:i], strings.ToLower(strings.TrimSpace(in[i:]))
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a size (like 256MiB, 1GiB or 65536)", s)
	}
	var mult float64
	switch unit {
	case "", "b":
		mult = 1
	case "k", "kb", "kib":
		mult = 1 << 10
	case "m", "mb", "mib":
		mult = 1 << 20
	case "g", "gb", "gib":
		mult = 1 << 30
	case "t", "tb", "tib":
		mult = 1 << 40
	default:
		return 0, fmt.Errorf("%q has an unknown unit %q (use KiB, MiB, GiB or TiB)", s, in[i:])
	}
	v := f * mult
	if v >= math.MaxInt64 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return int64(v), nil
}
