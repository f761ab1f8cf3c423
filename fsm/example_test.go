package fsm_test

import (
	"errors"
	"fmt"

	"conform/fsm"
)

// Compile a regex built with the constructors, then match byte strings.
func ExampleCompile() {
	digits := fsm.Plus(fsm.RuneClass(fsm.RuneRange{Lo: '0', Hi: '9'}))
	n := fsm.Cat(fsm.Lit("id-"), digits)
	d, err := fsm.Compile(n, fsm.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(n)
	fmt.Println(fsm.Matches(d, []byte("id-42")), fsm.Matches(d, []byte("id-")))
	w, _ := fsm.ShortestMatch(d)
	fmt.Printf("%q\n", w)
	// Output:
	// id-[0-9]+
	// true false
	// "id-0"
}

// A JSON Schema pattern is unanchored unless ^ or $ anchor it.
func ExampleParsePattern() {
	n, err := fsm.ParsePattern(`^[a-z]+\d$`)
	if err != nil {
		panic(err)
	}
	fmt.Println(n)
	m, _ := fsm.ParsePattern(`\d`)
	fmt.Println(m)
	_, err = fsm.ParsePattern(`(?<=a)b`)
	fmt.Println(err)
	// Output:
	// [a-z]+[0-9]
	// [\x{0}-\x{10FFFF}]*[0-9][\x{0}-\x{10FFFF}]*
	// fsm: unsupported construct: "lookbehind (?<=" at offset 0
}

// Intersection and complement: JSON-ish keys that are not "id".
func ExampleDiff() {
	key, _ := fsm.Parse(`"[a-z]+"`)
	n := fsm.Diff(key, fsm.Lit(`"id"`))
	d, _ := fsm.Compile(n, fsm.Options{})
	fmt.Println(n)
	fmt.Println(fsm.Matches(d, []byte(`"name"`)), fsm.Matches(d, []byte(`"id"`)))
	empty, _ := fsm.IsEmpty(fsm.And(key, fsm.Lit(`"ID"`)), fsm.Options{})
	fmt.Println(empty)
	// Output:
	// "[a-z]+"&~("id")
	// true false
	// true
}

// Budgets fail with a typed error that carries the limit and the size.
func ExampleOptions() {
	n, _ := fsm.Parse(`[ab]*a[ab]{12}`)
	_, err := fsm.Compile(n, fsm.Options{MaxDFAStates: 1000})
	var e *fsm.Error
	if errors.As(err, &e) && e.Code == fsm.ErrTooManyDFAStates {
		fmt.Println(e.Limit, e.Size > e.Limit)
	}
	// Output:
	// 1000 true
}
