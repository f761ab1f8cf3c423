// Package turn owns the assistant turn, from what a request asks of it to
// the parsed stream of what the model said: it turns an API-neutral Spec
// (structured output, tools, tool mode) into one constraint over the whole
// turn, compiles it through the shared cache, runs the request's choices on
// the runner under it, and reads their text back into events (content,
// reasoning, tool-call start / argument fragments / end, and a finish with
// its reason and usage). It knows nothing of HTTP or of any API's wire
// shape: cmd/serve's adapters convert each API's request into a Spec and a
// Request, and write the events in that API's shape.
//
// # Pipeline
//
//	Vocab (token bytes, specials, EOS)      once per model
//	  → Compiler (Vocab, Format, fsm.Cache, grammar options)
//	Spec (the request's output, tools, tool mode)
//	  → Compiler.Compile: Build → one *fsm.Node of the whole turn
//	      per tool: grammar.CompileSchema(parameters) → arguments node
//	      per format: the call wrapper around {"name": "<n>", "arguments": <args_n>}
//	        as an alternation over tools, repeated with the format's separator
//	        (exactly once when parallel is off or a function is named)
//	      per tool mode: required/named = the calls only; auto = text that
//	        cannot contain any plain-text marker of the format (trigger,
//	        closing tag), then optionally the calls; none = such text only
//	    → fsm.Cache (keyed by Build's key, the options, the vocabulary)
//	      → fsm.CompileConstraint
//	  → *Turn (NewMatcher, NewParser, Unenforced, MinTokens, CheckBudget)
//	Request (Turn, prompt tokens, N choices per prompt, sampling, limits)
//	  → Driver.Generate: CheckBudget, admission, runner.Submit per choice
//	    → runner events → Parser (+ cleaning) → Steps of Events
//	  → *Stream (Next, Usage, Close)
//
// Because the parser follows the same wrapper strings the constraint
// enforces, markup never reaches the content and a started call always
// parses. A choice's last step ends with one EventFinish.
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
// # Special tokens
//
// A marker that is a special token of the vocabulary (Vocab.IsSpecial) is
// written in the constraint as its 0xFF-prefixed bytes, as package
// tokenizer stores specials; a marker that is plain text stays text. Free
// text is valid UTF-8 and therefore never contains a special token. The
// detokenizer (Vocab.Detokenizer) lets through only the special tokens that
// are markers of the format, so that the parser sees them; a Turn's parser
// cleans them, and stray bytes that are not UTF-8, from content (both can
// appear only in unconstrained output).
//
// # Strictness
//
// A tool or json_schema with strict: true is compiled in grammar's Strict
// mode: a keyword that cannot be enforced exactly is an *Error (CodeSchema)
// naming the keyword and its JSON Pointer. Without strict the schema is
// compiled leniently and the keywords not enforced are listed in
// Turn.Unenforced (cmd/serve reports them in the X-Conform-Unenforced
// header and the conform_unenforced response field).
//
// # Conventions
//
// Errors are *Error with a Code and the request parameter at fault (Param,
// in OpenAI's dotted form, which the adapters of other APIs rename).
// Events are API-neutral: reasoning has its own kind (EventReasoning)
// though no format produces it yet, and FinishReason says why in no API's
// words (ReasonOf). n is an *fsm.Node; p a *Parser; t a *Turn; st a Step.
package turn
