package turn

import (
	"testing"

	"conform/fsm"
)

// BenchmarkBuildCompile measures Build plus fsm.Compile of a two-tool hermes
// turn in auto mode: the cost of a constraint cache miss before masks.
func BenchmarkBuildCompile(b *testing.B) {
	spec := so(Spec{Tools: twoTools, ToolMode: ToolAuto, Parallel: true}, FormatHermes, nil)
	for b.Loop() {
		res, err := Build(spec.spec, spec.opts)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := fsm.Compile(res.Node, fsm.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParser measures streaming a turn with two calls through the parser
// in 4-byte chunks.
func BenchmarkParser(b *testing.B) {
	text := "Checking.\n\n" + hCallW + "\n" + hCallT
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		p, _ := NewParser(FormatHermes, nil)
		for i := 0; i < len(text); i += 4 {
			p.Feed(text[i:min(i+4, len(text))])
		}
		p.Close()
	}
}
