// Package turn turns what a chat request asks for (response_format,
// the vLLM structured_outputs / guided_* extras, tools with tool_choice and
// parallel_tool_calls) into one regex AST, an *fsm.Node, that covers the whole
// assistant turn, and parses the text generated under it back into content and
// tool calls. It knows nothing about HTTP.
//
// # Pipeline
//
//	Spec (request fields + the model's tool-call Format + which marker
//	texts are special tokens in the vocabulary)
//	  → per tool: grammar.CompileSchema(parameters) → arguments node
//	  → per format: the call wrapper around {"name": "<n>", "arguments": <args_n>}
//	    as an alternation over tools, repeated with the format's separator
//	    (exactly once when parallel_tool_calls is false or a function is named)
//	  → per tool_choice: required/named = the calls only; auto = text that
//	    cannot contain any plain-text marker of the format (trigger, closing
//	    tag), then optionally the calls; none = such text only
//	  → Result{Node, Key, Unenforced}; the caller compiles Node with
//	    fsm.CompileConstraint and caches it under Key.
//
// The generated text then goes through a Parser of the same Format (a
// streaming state machine, STYLE rule 14) that emits content deltas, call
// starts (name), argument fragments and call ends. Because the parser follows
// the same wrapper strings the constraint enforces, markup never reaches the
// content and a started call always parses.
//
// # Tool-call formats
//
//	hermes, qwen   <tool_call>\n{"name": "<n>", "arguments": {…}}\n</tool_call>
//	               calls separated by "\n"; trigger "<tool_call>"
//	llama3_json    {"name": "<n>", "parameters": {…}}, optionally after
//	               <|python_tag|>; calls separated by "; "; a turn is either
//	               text or calls (calls only at its start: when tools are
//	               offered, text may not begin with "{" nor contain
//	               `{"name": "`)
//	mistral        [TOOL_CALLS][{"name": "<n>", "arguments": {…}}, …]
//
// A marker that is a special token of the vocabulary (Spec.IsSpecial) is
// written in the constraint as its 0xFF-prefixed bytes, as package tokenizer
// stores specials; a marker that is plain text stays text. Free text is valid
// UTF-8 and therefore never contains a special token.
//
// # Strictness
//
// A tool or json_schema with strict: true is compiled in grammar's Strict mode:
// a keyword that cannot be enforced exactly is an *Error (CodeSchema) naming
// the keyword and its JSON Pointer. Without strict the schema is compiled
// leniently and the keywords not enforced are listed in Result.Unenforced
// (cmd/serve reports them in the X-Conform-Unenforced header and the
// conform_unenforced response field).
//
// # Conventions
//
// Errors are *Error with a Code and the request parameter at fault (Param,
// OpenAI's "param"). n is an *fsm.Node; p a *Parser.
package turn
