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
//	      per format (a Description, format.go): the call wrapper around
//	        the name and the arguments (one JSON value, or each parameter on
//	        its own: strings raw, grammar.CompileRawString; others JSON)
//	        as an alternation over tools, repeated with the format's separator
//	        (exactly once when parallel is off, a function is named, or the
//	        format holds one call a turn)
//	      per tool mode: required/named = the calls only; auto = text that
//	        cannot contain any plain-text marker of the format (trigger,
//	        closing tag), then optionally the calls; none = such text only
//	      per reasoning format (reasoning.go), the outer layer:
//	        [open] R close after sep? [answer] INNER, INNER being the node above
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
// A format is a Description: data from which Build derives the calls'
// constraint and the Parser its state machine, so that both follow the
// same strings. The registry (format.go) holds these, with the marker
// strings the models' own templates render (NAME the function, ARGS a JSON
// object, K=V a parameter: string values raw, others JSON; IDX the call's
// index):
//
//	hermes, qwen   <tool_call>\n{"name": "NAME", "arguments": ARGS}\n</tool_call>
//	               calls separated by "\n"; trigger "<tool_call>"
//	llama3_json    {"name": "NAME", "parameters": ARGS}, optionally after
//	               <|python_tag|>; calls separated by "; "; a turn is either
//	               text or calls (calls only at its start: when tools are
//	               offered, text may not begin with "{" nor contain
//	               `{"name": "`)
//	mistral        [TOOL_CALLS][{"name": "NAME", "arguments": ARGS}, …]
//	deepseek_v3    <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME
//	               ```json\nARGS\n```<｜tool▁call▁end｜>, calls separated by
//	               "\n", then <｜tool▁calls▁end｜> (DeepSeek-V3, R1, R1 distills)
//	deepseek_v31   <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>ARGS
//	               <｜tool▁call▁end｜>…<｜tool▁calls▁end｜> (V3.1 and later)
//	kimi_k2        <|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX
//	               <|tool_call_argument_begin|>ARGS<|tool_call_end|>…
//	               <|tool_calls_section_end|> (IDX any number; not checked)
//	harmony        <|channel|>commentary to=functions.NAME <|constrain|>json
//	               <|message|>ARGS, one call a turn, ended by <|call|> (an
//	               EOS); a text turn is <|channel|>final<|message|>TEXT,
//	               ended by <|return|> (gpt-oss; its analysis channel is
//	               the harmony reasoning format)
//	qwen3_coder    <tool_call>\n<function=NAME>\n<parameter=K>\nV\n</parameter>\n…
//	               </function>\n</tool_call>, calls separated by "\n"
//	minimax_m2     <minimax:tool_call>\n<invoke name="NAME">\n
//	               <parameter name="K">V</parameter>\n…</invoke>\n…
//	               </minimax:tool_call>
//	glm45          <tool_call>NAME<arg_key>K</arg_key>\n<arg_value>V</arg_value>…
//	               </tool_call>, calls separated by "\n"
//
// A per-parameter format (qwen3_coder, minimax_m2, glm45) enforces the
// tool's schema exactly: each declared parameter at most once, in the
// order its properties list them (in any order under grammar.OrderAny, the
// server's --property-order any), the required ones present, none other;
// a string parameter's raw text by its string schema (pattern, length,
// format, enum, const, not; grammar.CompileRawString), any other by its
// JSON; no value can hold the marker that closes it. A schema the format
// cannot carry (not an object schema, a parameter that may be a string or
// another value, object-level keywords such as minProperties or anyOf) is
// refused under strict and listed in Unenforced otherwise (the parameter
// then written as JSON). The parser writes the arguments back as one JSON
// object, strings JSON-quoted, streamed in fragments.
//
// DetectFormat and DetectDescription (detect.go) work the format out by
// rendering the template with a known call and reading the pieces around
// its name and arguments; a shape of a known kind with new marker strings
// gets a Description of its own (Options.Description, NewParserOf,
// Vocab.DetokenizerOf).
//
// # Reasoning
//
// A model's reasoning format (Options.Reasoning: "think" for the
// <think>…</think> family, "harmony" for gpt-oss's analysis channel, or
// "none"; DetectReasoningFormat reads it from the chat template) puts a
// block ahead of the answer. Each request fills
// Spec.Reasoning, a Reasoning value, from its API's fields:
//
//	Enabled  the model may think (Chat Completions: on unless the request
//	         turns it off; Anthropic Messages: thinking.type "enabled";
//	         Responses: a reasoning object)
//	Budget   the block's text in tokens: NoBudget (-1) unbounded but for
//	         max_tokens, 0 no thinking, N forced to close after N
//	         (EffortBudget maps low/medium/high to 1024/4096/16384;
//	         Anthropic's thinking.budget_tokens is a budget as it is)
//	Prompt   ReasoningFormat.PromptState of the rendered prompt: whether
//	         the template opened the block (then the turn starts inside
//	         it) or closed it (then the model answers at once)
//
// The turn is then [open] R close after sep? [answer] INNER: R is free
// UTF-8 text without the close marker, after a fixed string (harmony's
// <|start|>assistant, the answer's message header; none for think), sep
// up to two newlines (think), answer the opening of a turn without tools
// (harmony's <|channel|>final<|message|>; with tools the tool-call format
// opens the answer or the call), INNER the content or calls constraint.
// The formats are rows of one table (reasoning.go):
//
//	think    <think>R</think>\n\n INNER
//	harmony  <|channel|>analysis<|message|>R<|end|><|start|>assistant
//	         [<|channel|>final<|message|>] INNER
//
// gpt-oss has no off switch (its template's reasoning_effort is low,
// medium or high): thinking off (Enabled false, Budget 0, and so
// reasoning_effort none or minimal) is mapped to the smallest budget, an
// empty analysis channel, <|channel|>analysis<|message|><|end|>, rather
// than a turn without one.
//
// Thinking off with a prompt that opened the block forces the close
// first; a turn without a constraint of its own gets one when it
// has a block (free text without the markers after it), so the block is
// always bounded and closed. The budget is each choice's guide
// (reasoning_guide.go): it counts the tokens inside the block and, at the
// budget, allows only tokens that write the close marker, within the
// matcher's FillMaskWithin, so max_tokens still leaves room for the
// shortest answer. The parser releases the block's text as
// EventReasoning, before any content, and drops the markers and the
// separator; Finish.Usage.ReasoningTokens counts the block's tokens,
// markers included; After and the answer's opening are not counted.
//
// # Special tokens
//
// A marker that is a special token of the vocabulary (Vocab.IsSpecial) is
// written in the constraint as its 0xFF-prefixed bytes, as package
// tokenizer stores specials; a marker that is plain text stays text. Free
// text is valid UTF-8 and therefore never contains a special token. The
// detokenizer (Vocab.Detokenizer; DetokenizerWith adds the reasoning
// format's markers) lets through only the special tokens that are markers
// of the format, so that the parser sees them; a Turn's parser
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
// Events are API-neutral: reasoning has its own kind (EventReasoning),
// and FinishReason says why in no API's words (ReasonOf). n is an *fsm.Node; p a *Parser; t a *Turn; st a Step.
package turn
