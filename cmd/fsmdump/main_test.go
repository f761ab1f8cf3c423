package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-nfa", "ab|c"}, 0, "regex: ab|c\nast:   alt{lit{\"ab\"}lit{\"c\"}}\nnfa:\nstart 5\n"},
		{[]string{"-pattern", "^a$"}, 0, "shortest match: \"a\"\n"},
		{[]string{"-user", "a&b"}, 0, "regex: a\\&b\n"},
		{[]string{"-dfa=false", "[^\\x{0}-\\x{10FFFF}]"}, 0, "language is empty\n"},
		{[]string{"(a"}, 1, "missing closing )"},
		{[]string{"-max-dfa-states", "100", "[ab]*a[ab]{10}"}, 1, "too many DFA states"},
		{[]string{}, 2, "usage"},
		{[]string{"-schema", "testdata/point.json", "-ast=false"}, 0, "shortest match: \"{\\\"x\\\":0,\\\"y\\\":0}\""},
	} {
		var out, errb bytes.Buffer
		code := run(tt.args, &out, &errb)
		got := out.String() + errb.String()
		if code != tt.code || !strings.Contains(got, tt.want) {
			t.Errorf("run(%q) = %d, output %q; want %d and output containing %q", tt.args, code, got, tt.code, tt.want)
		}
	}
}
