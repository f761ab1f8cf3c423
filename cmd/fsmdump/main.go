// Command fsmdump prints the intermediate forms of a regex constraint: the
// AST (printed and as a tree), the Thompson NFA, the minimized byte DFA and
// its statistics. It is a debugging aid for fsm/.
//
// Usage:
//
//	fsmdump [flags] REGEX
//	fsmdump [flags] -schema FILE
//
// The regex is read in the project dialect by default (fsm.Parse); -user
// reads a user regex (fsm.ParseRegex, Python-like), -pattern an ECMA-262
// JSON Schema pattern (fsm.ParsePattern, search semantics). -schema
// compiles a JSON Schema file ("-" for stdin) with grammar's defaults.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"conform/fsm"
	"conform/grammar"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fsmdump", flag.ContinueOnError)
	fs.SetOutput(stderr)
	user := fs.Bool("user", false, "parse as a user regex (Python-like, no & ~ \\y extensions)")
	pattern := fs.Bool("pattern", false, "parse as an ECMA-262 JSON Schema pattern (search semantics)")
	showNFA := fs.Bool("nfa", false, "print the Thompson NFA")
	showDFA := fs.Bool("dfa", true, "print the DFA")
	maxDFA := fs.Int("max-dfa-states", 0, "DFA state budget (0: default)")
	maxNFA := fs.Int("max-nfa-states", 0, "NFA state budget (0: default)")
	noMin := fs.Bool("no-minimize", false, "skip minimization")
	schema := fs.String("schema", "", "compile the JSON Schema in this file (- for stdin) instead of a regex")
	showAST := fs.Bool("ast", true, "print the regex and its AST")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: fsmdump [flags] REGEX")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if (*schema == "") != (fs.NArg() == 1) {
		fs.Usage()
		return 2
	}
	var n *fsm.Node
	var err error
	switch {
	case *user && *pattern:
		fmt.Fprintln(stderr, "fsmdump: -user and -pattern are exclusive")
		return 2
	case *schema != "":
		n, err = compileSchema(*schema)
	case *user:
		n, err = fsm.ParseRegex(fs.Arg(0))
	case *pattern:
		n, err = fsm.ParsePattern(fs.Arg(0))
	default:
		n, err = fsm.Parse(fs.Arg(0))
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if *showAST {
		fmt.Fprintf(stdout, "regex: %s\nast:   %s\n", n, n.Dump())
	}
	var stats fsm.Stats
	opts := fsm.Options{MaxDFAStates: *maxDFA, MaxNFAStates: *maxNFA, NoMinimize: *noMin, Stats: &stats}
	if *showNFA {
		s, err := fsm.DumpNFA(n, opts)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		fmt.Fprintf(stdout, "nfa:\n%s", s)
	}
	start := time.Now()
	d, err := fsm.Compile(n, opts)
	elapsed := time.Since(start)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	fmt.Fprintf(stdout, "compiled in %v: %d states, %d byte classes (NFA %d states, raw DFA %d states, work %d)\n",
		elapsed, d.NumStates(), d.NumClasses, stats.NFAStates, stats.RawDFAStates, stats.Work)
	if w, ok := fsm.ShortestMatch(d); ok {
		fmt.Fprintf(stdout, "shortest match: %q\n", w)
	} else {
		fmt.Fprintln(stdout, "language is empty")
	}
	if *showDFA {
		fmt.Fprint(stdout, d)
	}
	return 0
}

func compileSchema(path string) (*fsm.Node, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, err
	}
	// fsmdump prints whole DFAs: free-form values two levels deep, not
	// the default eight that lazy constraints afford.
	res, err := grammar.CompileSchema(data, grammar.Options{AnyValueDepth: 2})
	if err != nil {
		return nil, err
	}
	return res.Node, nil
}
