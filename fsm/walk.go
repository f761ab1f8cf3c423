package fsm

import (
	"math/rand/v2"
	"strconv"
	"strings"
)

// Matches reports whether d accepts all of s.
func Matches(d *DFA, s []byte) bool {
	return d.Accept[d.Run(d.Start, s)]
}

// ShortestMatch returns the shortest string d accepts (the least in byte
// order among the shortest), and false when the language is empty.
func ShortestMatch(d *DFA) ([]byte, bool) {
	if d.Start == DeadState {
		return nil, false
	}
	reps := d.classReps()
	n := d.NumStates()
	prev := make([]int32, n)
	via := make([]byte, n)
	for i := range prev {
		prev[i] = -1
	}
	prev[d.Start] = int32(d.Start)
	queue := []StateID{d.Start}
	for i := 0; i < len(queue); i++ {
		s := queue[i]
		if d.Accept[s] {
			var out []byte
			for s != d.Start {
				out = append(out, via[s])
				s = StateID(prev[s])
			}
			for l, r := 0, len(out)-1; l < r; l, r = l+1, r-1 {
				out[l], out[r] = out[r], out[l]
			}
			if out == nil {
				out = []byte{}
			}
			return out, true
		}
		for _, b := range reps {
			if t := d.Next(s, b); t != DeadState && prev[t] < 0 {
				prev[t] = int32(s)
				via[t] = b
				queue = append(queue, t)
			}
		}
	}
	return nil, false // unreachable for a trimmed DFA with a live start
}

// classReps returns the smallest byte of each class, in class order.
func (d *DFA) classReps() []byte {
	reps := make([]byte, d.NumClasses)
	seen := make([]bool, d.NumClasses)
	for b := range 256 {
		if c := d.Classes[b]; !seen[c] {
			seen[c] = true
			reps[c] = byte(b)
		}
	}
	return reps
}

// distToAccept returns, per state, the length of the shortest path to an
// accepting state (-1 for the dead state).
func (d *DFA) distToAccept() []int {
	n, k := d.NumStates(), d.NumClasses
	dist := make([]int, n)
	for i := range dist {
		dist[i] = -1
	}
	var queue []StateID
	for s := 1; s < n; s++ {
		if d.Accept[s] {
			dist[s] = 0
			queue = append(queue, StateID(s))
		}
	}
	// Reverse edges by counting sort.
	cnt := make([]int32, n+1)
	for s := 1; s < n; s++ {
		for _, t := range d.Trans[s*k : s*k+k] {
			cnt[t+1]++
		}
	}
	for i := 1; i <= n; i++ {
		cnt[i] += cnt[i-1]
	}
	preds := make([]StateID, cnt[n])
	pos := append([]int32(nil), cnt[:n]...)
	for s := 1; s < n; s++ {
		for _, t := range d.Trans[s*k : s*k+k] {
			preds[pos[t]] = StateID(s)
			pos[t]++
		}
	}
	for i := 0; i < len(queue); i++ {
		t := queue[i]
		for _, p := range preds[cnt[t]:cnt[t+1]] {
			if dist[p] < 0 {
				dist[p] = dist[t] + 1
				queue = append(queue, p)
			}
		}
	}
	return dist
}

// RandomWalk returns a random string that d accepts, for property tests,
// or nil when the language is empty. At each state it chooses uniformly
// among the live next bytes and, in an accepting state, stopping; as the
// length nears maxLen it only takes bytes that can still reach acceptance
// in time, so the result is at most maxLen bytes long unless the shortest
// accepted string is longer (then it follows a shortest path).
func RandomWalk(d *DFA, rng *rand.Rand, maxLen int) []byte {
	if d.Start == DeadState {
		return nil
	}
	dist := d.distToAccept()
	out := []byte{}
	var opts []int // byte values, or 256 for "stop"
	for s := d.Start; ; {
		left := maxLen - len(out)
		opts = opts[:0]
		if d.Accept[s] {
			opts = append(opts, 256)
		}
		for b := range 256 {
			t := d.Next(s, byte(b))
			if t != DeadState && dist[t] <= left-1 {
				opts = append(opts, b)
			}
		}
		if len(opts) == 0 {
			// Past the budget: walk a shortest path to acceptance.
			if d.Accept[s] {
				return out
			}
			for b := range 256 {
				if t := d.Next(s, byte(b)); t != DeadState && dist[t] == dist[s]-1 {
					opts = append(opts, b)
				}
			}
		}
		c := opts[rng.IntN(len(opts))]
		if c == 256 {
			return out
		}
		out = append(out, byte(c))
		s = d.Next(s, byte(c))
	}
}

// String dumps d for table tests: a header line, then one line per live
// state, "N:" ("N*:" when accepting) followed by its live transitions,
// grouped by target in increasing order, each as the byte ranges leading
// there and "->target". Bytes print as themselves when printable ASCII
// (other than space, '\\', '-' and ','), else as \xHH.
func (d *DFA) String() string {
	var b strings.Builder
	b.WriteString("dfa states=" + strconv.Itoa(d.NumStates()) + " classes=" + strconv.Itoa(d.NumClasses) +
		" start=" + strconv.Itoa(int(d.Start)) + "\n")
	for s := 1; s < d.NumStates(); s++ {
		b.WriteString(strconv.Itoa(s))
		if d.Accept[s] {
			b.WriteByte('*')
		}
		b.WriteByte(':')
		// Targets in increasing order.
		var targets []StateID
		seen := map[StateID]bool{}
		for c := range 256 {
			t := d.Next(StateID(s), byte(c))
			if t != DeadState && !seen[t] {
				seen[t] = true
				targets = append(targets, t)
			}
		}
		sortStates(targets)
		for _, t := range targets {
			b.WriteByte(' ')
			first := true
			for lo := 0; lo < 256; lo++ {
				if d.Next(StateID(s), byte(lo)) != t {
					continue
				}
				hi := lo
				for hi+1 < 256 && d.Next(StateID(s), byte(hi+1)) == t {
					hi++
				}
				if !first {
					b.WriteByte(',')
				}
				first = false
				b.WriteString(dumpByte(byte(lo)))
				if hi > lo {
					b.WriteString("-" + dumpByte(byte(hi)))
				}
				lo = hi
			}
			b.WriteString("->" + strconv.Itoa(int(t)))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func sortStates(v []StateID) {
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && v[j] < v[j-1]; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
}

func dumpByte(c byte) string {
	if c > ' ' && c < 0x7F && c != '\\' && c != '-' && c != ',' {
		return string(rune(c))
	}
	return `\x` + hex2(c)
}
