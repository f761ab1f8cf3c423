package fsm

import "testing"

func TestCompileSmoke(t *testing.T) {
	for _, n := range []*Node{
		Lit("abc"),
		Cat(Lit("a"), Star(RuneClass(RuneRange{'a', 'z'}))),
		Alt(Lit("foo"), Lit("bar"), Lit("baz")),
		AnyRune(),
		And(Star(RuneClass(RuneRange{'a', 'b'})), Not(Cat(Star(AnyRune()), Lit("aa"), Star(AnyRune())))),
	} {
		d, err := Compile(n, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s\n%s", n, d)
		nd, _ := DumpNFA(n, Options{})
		t.Logf("%s", nd)
	}
}
