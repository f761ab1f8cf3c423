package grammar_test

import (
	"fmt"

	"conform/fsm"
	"conform/grammar"
)

func ExampleCompileSchema() {
	schema := []byte(`{"type":"object","properties":{"name":{"type":"string","maxLength":8},"age":{"type":"integer","minimum":0,"maximum":150}},"required":["name"],"additionalProperties":false}`)
	res, err := grammar.CompileSchema(schema, grammar.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	d, err := fsm.Compile(res.Node, fsm.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range []string{`{"name": "Ada", "age": 36}`, `{"name":"Ada"}`, `{"age": 36}`, `{"name": "Ada", "age": 151}`} {
		fmt.Println(fsm.Matches(d, []byte(s)), s)
	}
	// Output:
	// true {"name": "Ada", "age": 36}
	// true {"name":"Ada"}
	// false {"age": 36}
	// false {"name": "Ada", "age": 151}
}

func ExampleCompileSchema_error() {
	_, err := grammar.CompileSchema([]byte(`{"type":"array","items":{"type":"string","format":"fancy"}}`), grammar.Options{})
	fmt.Println(err)
	// Output:
	// grammar: unknown-format at #/items/format: unknown format "fancy"; known: binary, byte, date, date-time, double, duration, email, float, host-name, hostname, idn-email, idn-hostname, int32, int64, ip-address, ipv4, ipv6, iri, iri-reference, json-pointer, password, regex, relative-json-pointer, time, uri, uri-reference, uri-template, utc-millisec, uuid
}
