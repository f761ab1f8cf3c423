package grammar

// CompileRegex compiles a plain regex constraint (the whole output must
// match it; see fsm.Parse for the dialect). Failures are *Error with
// CodeBadPattern.
func CompileRegex(pattern string, opts Options) (*Result, error) {
	opts = opts.withDefaults()
	if len(pattern) > opts.MaxSchemaBytes {
		return nil, errorf(CodeTooLarge, "", "", "regex is %d bytes, over the limit of %d", len(pattern), opts.MaxSchemaBytes)
	}
	n, err := parseRegex(pattern)
	if err != nil {
		return nil, errorf(CodeBadPattern, "", "", "regex %q: %v", pattern, err)
	}
	return &Result{Node: n}, nil
}

// CompileChoice compiles "exactly one of these strings" as a
// prefix-factored alternation (a trie), which keeps subset construction
// cheap even for thousands of choices. An empty list is unsatisfiable.
func CompileChoice(choices []string, opts Options) (*Result, error) {
	opts = opts.withDefaults()
	total := 0
	for _, s := range choices {
		total += len(s)
	}
	if total > opts.MaxSchemaBytes {
		return nil, errorf(CodeTooLarge, "", "", "choices total %d bytes, over the limit of %d", total, opts.MaxSchemaBytes)
	}
	if len(choices) == 0 {
		return nil, errorf(CodeUnsatisfiable, "", "", "no choices given")
	}
	return &Result{Node: trie(choices)}, nil
}
