// Package toolcall turns a model's streamed output into content deltas and
// tool-call deltas, for the tool-call text formats chat templates teach:
//
//	hermes        <tool_call>{"name": …, "arguments": {…}}</tool_call>   (Hermes, Qwen 2.5/3)
//	qwen_coder    <tools>{"name": …, "arguments": {…}}</tools>           (Qwen2.5-Coder)
//	llama3_json   [<|python_tag|>]{"name": …, "parameters": {…}}        (Llama 3.1/3.2 JSON)
//	mistral       [TOOL_CALLS][{"name": …, "arguments": {…}}, …]         (Mistral v0.3)
//
// Pipeline, in words: Detect picks a Format from the template text; New
// returns a Parser for it; the server feeds each decoded text chunk to
// Parser.Feed and sends the Events it returns; Close flushes at the end of
// the stream.
//
// Every parser is an explicit state machine (a named state type and a
// buffer). Text that could still be the start of a tag is held back until
// the next chunk decides it, so an event is only emitted once it is
// certain. A call's name is emitted once, as soon as it is complete, and its
// arguments then stream as raw JSON text fragments. The JSON inside a call
// is followed structurally (strings, escapes, nesting), not validated: the
// constrained decoder upstream guarantees its validity. Splitting the same
// output into chunks anywhere yields the same content and the same calls
// (only the fragment boundaries differ); the tests check this at every byte
// position.
//
// Errors are *Error with a Code; after the first error a Parser returns it
// again on every call (a sticky error).
package toolcall
