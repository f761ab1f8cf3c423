package templates_test

import (
	"fmt"

	"conform/templates"
)

func Example() {
	tmpl, err := templates.Parse(`{% for m in messages %}<|{{ m.role }}|>{{ m.content | trim }}
{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}`)
	if err != nil {
		panic(err)
	}
	msgs, err := templates.DecodeJSON([]byte(`[{"role": "user", "content": " Hi! "}]`))
	if err != nil {
		panic(err)
	}
	out, err := tmpl.Render(templates.Vars{Messages: msgs, AddGenerationPrompt: true})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%q\n", out)
	// Output: "<|user|>Hi!\n<|assistant|>"
}

func ExampleError() {
	tmpl, _ := templates.Parse(`{{ raise_exception("roles must alternate") }}`)
	_, err := tmpl.Render(templates.Vars{})
	if e, ok := err.(*templates.Error); ok {
		fmt.Println(e.Code, e.Msg)
	}
	// Output: raise_exception roles must alternate
}
