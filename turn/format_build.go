package turn

import (
	"encoding/json"
	"fmt"
	"strings"

	"conform/fsm"
	"conform/grammar"
)

// This file derives the constraint of a turn's calls from the format's
// flattened description (syntax): the calls, and the text that may not
// start one.

// lookupFormat returns the description Build uses: opts.Description when
// set (a detected format that is no registered one), else the registered
// description of opts.Format.
func lookupFormat(opts Options) (Description, bool) {
	if opts.Description != nil {
		return *opts.Description, true
	}
	d, ok := formats[opts.Format]
	return d, ok
}

// withoutCalls restricts text so that no call can start in it: it may not
// contain a plain-text marker (a special-token marker is already impossible
// in UTF-8 text), or, for formats whose calls open the turn, it may not start
// like a call. A format with a ContentOpen writes it before the text.
func (b *builder) withoutCalls(text *fsm.Node, sx syntax, jsonContent bool) *fsm.Node {
	var banned []*fsm.Node
	// No plain-text marker of the format (the trigger, a closing tag) may
	// appear in text; special-token markers cannot appear in UTF-8 text.
	for _, m := range sx.markerBytes {
		if m[0] != 0xFF {
			banned = append(banned, fsm.Cat(anyBytes, fsm.Lit(m), anyBytes))
		}
	}
	switch {
	case sx.Trigger != "" || sx.Content != "":
		// The trigger, or ContentOpen, tells text from calls.
	case sx.InObject:
		// The turn is calls iff it starts with Begin or a call object.
		if jsonContent {
			banned = append(banned, fsm.Cat(fsm.Lit(callPrefix), anyBytes))
		} else {
			// Text may not start like JSON, nor hold a call's start
			// anywhere (it would read as a call that was not made).
			banned = append(banned, fsm.Cat(fsm.Lit("{"), anyBytes), fsm.Cat(anyBytes, fsm.Lit(callPrefix), anyBytes))
		}
		if sx.Begin != "" && !sx.OptBegin {
			// Calls that open with a required Begin ("[" of a JSON
			// list) cannot be text's start either.
			banned = append(banned, fsm.Cat(fsm.Lit(sx.Begin+sx.Open), anyBytes))
		}
	default:
		banned = append(banned, fsm.Cat(fsm.Lit(sx.Begin+sx.Open), anyBytes))
		if sx.OptBegin {
			banned = append(banned, fsm.Cat(fsm.Lit(sx.Open), anyBytes))
		}
	}
	if len(banned) > 0 {
		text = fsm.And(text, fsm.Not(fsm.Alt(banned...)))
	}
	if sx.Content != "" {
		text = fsm.Cat(fsm.Lit(sx.Content), text)
	}
	return text
}

// indexNode is a call index: a decimal number without leading zeros.
var indexNode = fsm.Alt(fsm.Lit("0"), fsm.Cat(fsm.ByteClass(fsm.ByteRange{Lo: '1', Hi: '9'}), fsm.Star(fsm.ByteClass(fsm.ByteRange{Lo: '0', Hi: '9'}))))

// calls builds the calls of a turn over tools (all: the request's tools, for
// error positions), and records how each ArgsParams parameter is written.
func (b *builder) calls(tools, all []Tool, sx syntax, parallel bool) (*fsm.Node, error) {
	index := map[string]int{}
	for i, t := range all {
		index[t.Name] = i
	}
	alts := make([]*fsm.Node, 0, len(tools))
	for _, t := range tools {
		param := t.Param
		if param == "" {
			param = fmt.Sprintf("tools[%d].function.parameters", index[t.Name])
		}
		schema := t.Parameters
		if len(strings.TrimSpace(string(schema))) == 0 || strings.TrimSpace(string(schema)) == "null" {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		var args *fsm.Node
		var err error
		if sx.Params {
			var kinds map[string]paramKind
			args, kinds, err = b.paramArgs(schema, t.Strict, param, sx)
			if b.params == nil {
				b.params = paramKinds{}
			}
			b.params[t.Name] = kinds
		} else {
			args, err = b.schema(schema, t.Strict, param, grammar.ExtrasAllowed)
		}
		if err != nil {
			return nil, err
		}
		parts := []*fsm.Node{fsm.Lit(t.Name + sx.NameEnd)}
		if sx.Index {
			parts = append(parts, indexNode, fsm.Lit(sx.IndexEnd))
		}
		parts = append(parts, args, fsm.Lit(sx.Close))
		alts = append(alts, fsm.Cat(parts...))
	}
	call := fsm.Cat(fsm.Lit(sx.Open), fsm.Alt(alts...))
	seq := call
	if parallel && !sx.Single {
		seq = fsm.Cat(call, fsm.Star(fsm.Cat(fsm.Lit(sx.Sep), call)))
	}
	begin := fsm.Lit(sx.Begin)
	if sx.OptBegin {
		begin = fsm.Opt(begin)
	}
	return fsm.Cat(begin, seq, fsm.Lit(sx.End)), nil
}
