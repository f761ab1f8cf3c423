package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// BenchmarkChatToolCall measures one non-streaming chat request with
// tool_choice required through the whole server (HTTP, validation,
// constraint from the cache, template, runner over the fake engine, parser).
func BenchmarkChatToolCall(b *testing.B) {
	ts := newTestServer(b, Config{}, "")
	body, _ := json.Marshal(chatBody(map[string]any{"tools": testTools, "tool_choice": "required", "seed": 1, "max_tokens": 64}))
	for b.Loop() {
		resp, err := http.Post(ts.http.URL+"/v1/chat/completions", "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
}
