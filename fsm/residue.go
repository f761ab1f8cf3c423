package fsm

import (
	"strconv"
	"strings"
)

// residueDFA is the DFA of Residues(m, accept): the decimal digit strings
// whose value modulo m is an accepted remainder. State 1 is the start (no
// digit read yet) and state 2+r holds the remainder r of the digits read
// so far: a digit d takes r to (10r + d) mod m. From any remainder the
// right digits reach any other (appending enough of them covers every
// residue), so the DFA is trimmed when some remainder is accepted. It is
// not minimal where m shares factors with 10 (divisibility by 4 reads only
// the last two digits), so it is loose and Compile minimizes it.
func residueDFA(m int, accept []bool) (*DFA, error) {
	if m < 1 || m > MaxModulus || len(accept) != m {
		return nil, &Error{Code: ErrInvalidNode, Expr: "residues modulo " + strconv.Itoa(m) + " (want a modulus from 1 to " + strconv.Itoa(MaxModulus) + " and one flag per remainder)", Pos: -1}
	}
	any := false
	for _, a := range accept {
		any = any || a
	}
	if !any {
		return &DFA{NumClasses: 1, Trans: []StateID{DeadState}, Accept: []bool{false}, Start: DeadState}, nil
	}
	const classes = 11 // class 0: every byte but a digit; 1+d: digit d
	d := &DFA{NumClasses: classes, Start: 1, loose: true}
	for c := '0'; c <= '9'; c++ {
		d.Classes[c] = uint8(1 + c - '0')
	}
	n := 2 + m
	d.Trans = make([]StateID, n*classes)
	d.Accept = make([]bool, n)
	copy(d.Accept[2:], accept)
	for s := 1; s < n; s++ {
		r := 0 // the start reads its first digit as remainder 0 does
		if s >= 2 {
			r = s - 2
		}
		for dig := 0; dig <= 9; dig++ {
			d.Trans[s*classes+1+dig] = StateID(2 + (10*r+dig)%m)
		}
	}
	return d, nil
}

// residueList writes the accepted remainders as ranges: 0,3-5.
func residueList(accept []bool) string {
	var b strings.Builder
	for r := 0; r < len(accept); r++ {
		if !accept[r] {
			continue
		}
		e := r
		for e+1 < len(accept) && accept[e+1] {
			e++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(r))
		if e > r {
			b.WriteString("-" + strconv.Itoa(e))
		}
		r = e
	}
	return b.String()
}

// parseResidues reads what residueList writes, for modulus m.
func parseResidues(m int, s string) ([]bool, bool) {
	accept := make([]bool, m)
	for _, part := range strings.Split(s, ",") {
		a, b, isRange := strings.Cut(part, "-")
		lo, err1 := strconv.Atoi(a)
		hi, err2 := lo, error(nil)
		if isRange {
			hi, err2 = strconv.Atoi(b)
		}
		if err1 != nil || err2 != nil || lo < 0 || hi < lo || hi >= m {
			return nil, false
		}
		for r := lo; r <= hi; r++ {
			accept[r] = true
		}
	}
	return accept, true
}
