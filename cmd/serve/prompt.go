package main

import (
	"errors"
	"fmt"
	"net/http"

	"conform/runner"
	"conform/templates"
)

// chatPrompt renders and tokenizes the conversation, within lim: the
// template's output is capped at --max-prompt-bytes while it renders, and
// a rendered prompt that cannot fit the context is refused before it is
// tokenized (see promptFits).
func chatPrompt(m *Model, j *chatJob, lim Limits) ([]runner.TokenID, error) {
	text, err := renderChat(m, j, lim)
	if err != nil {
		return nil, err
	}
	return m.Tokenize(text)
}

// renderChat renders the conversation through the chat template, with the
// request's template variables (chat_template_kwargs, and enable_thinking
// as the request thinks: chatThinking.templateVars), within lim's
// --max-prompt-bytes and the context (see promptFits).
func renderChat(m *Model, j *chatJob, lim Limits) (string, error) {
	lim = lim.withDefaults()
	text, err := m.Template.Render(templates.Vars{Messages: j.Messages, Tools: j.Tools, AddGenerationPrompt: true, BosToken: m.BOS, EosToken: m.EOS,
		Extra: j.Thinking.templateVars(j.TemplateVars, m.Reasoning), Limits: templates.Limits{MaxOutput: lim.MaxPromptBytes}})
	if err != nil {
		var te *templates.Error
		if errors.As(err, &te) && te.Output {
			return "", &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "prompt_too_large", Param: "messages",
				Msg: fmt.Sprintf("the rendered prompt would be larger than %d bytes (--max-prompt-bytes, %s): %s", lim.MaxPromptBytes, envName("max-prompt-bytes"), te.Msg),
				Err: err}
		}
		return "", err
	}
	if len(text) > lim.MaxPromptBytes {
		return "", overLimit("messages", "prompt_too_large", fmt.Sprintf("the rendered prompt is %d bytes", len(text)), lim.MaxPromptBytes, "max-prompt-bytes")
	}
	if err := promptFits(m, len(text), "messages"); err != nil {
		return "", err
	}
	return text, nil
}

// promptFits refuses a prompt of n bytes that cannot fit the context
// whatever its tokens: it takes at least n/MaxTokenBytes of them. This
// keeps tokenizing (llama.cpp's is superlinear in the special tokens of a
// text) bounded by MaxTokenBytes × the context; a prompt that passes and is
// still too long is refused by the runner once tokenized.
func promptFits(m *Model, n int, param string) error {
	if m.MaxTokenBytes <= 0 || m.Context <= 0 {
		return nil
	}
	if least := (n + m.MaxTokenBytes - 1) / m.MaxTokenBytes; least > m.Context {
		return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "context_length_exceeded", Param: param,
			Msg: fmt.Sprintf("the prompt is %d bytes, at least %d tokens, longer than the context of %d tokens per slot (--ctx-size / --parallel)", n, least, m.Context)}
	}
	return nil
}
