// Command serve is Conform's OpenAI-compatible server: chat completions with
// tool calls in every tool_choice mode, structured outputs guaranteed by
// construction, streaming, over llama.cpp.
//
//	go run ./cmd/serve --model FILE.gguf [--host 127.0.0.1] [--port 8080]
//	go run ./cmd/serve --hf Qwen/Qwen2.5-1.5B-Instruct-GGUF:Q4_K_M
//	go run ./cmd/serve --demo          # a synthetic model, no download
//
// Every flag also reads CONFORM_<FLAG> (e.g. CONFORM_PORT); HF_TOKEN and
// HF_ENDPOINT are read as well. Endpoints: POST /v1/chat/completions,
// POST /v1/completions, GET /v1/models, GET /health (503 until the model is
// loaded), GET /metrics (Prometheus), GET / (the web playground, ui.go;
// off with --no-ui).
//
// Pipeline of a chat request: JSON → FromChatRequest (validation, OpenAI
// fields → turn.Spec, sampling and limits) → turn.Compiler.Compile (Build,
// fsm.Cache) → chat template → tokens → turn.Driver.Generate (budget check,
// runner.Submit per choice, the turn's parser) → turn events → the API's
// sink (one JSON body, or SSE chunks). Errors from every stage go to one
// renderer (errors.go) that maps them to OpenAI's envelope and status.
//
// Extensions: when a schema was compiled leniently (strict absent or false),
// the keywords not enforced are listed in the X-Conform-Unenforced header
// ("PARAM#POINTER KEYWORD, ...") and in the conform_unenforced response field
// ([{param, pointer, keyword, message}]).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		os.Exit(1)
	}
}

// run is the whole server: parse the config, listen, load the model in the
// background (/health is 503 until then), serve until ctx is done, then shut
// down gracefully. ready, if not nil, receives the listen address once the
// model is loaded (for tests).
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer, ready chan<- string) error {
	cfg, err := ParseConfig(args, getenv, stderr)
	if err != nil {
		if errors.Is(err, errHelp) {
			return nil
		}
		return err
	}
	level := map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}[cfg.LogLevel]
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	srv := NewServer(cfg, log)
	ln, err := net.Listen("tcp", cfg.Addr())
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 30 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(ln) }()
	addr := ln.Addr().String()
	log.Info("listening (GET /health is 503 until the model is loaded)", "addr", addr)

	runCtx, cancelRun := context.WithCancel(context.Background())
	defer cancelRun()
	loaded := make(chan error, 1)
	runDone := make(chan struct{})
	var closeModel func() error
	// stopModel ends the generation loop, waits for it, and frees the model.
	stopModel := func() error {
		cancelRun()
		<-runDone
		return closeModel()
	}
	go func() {
		m, closeFn, err := loadModel(ctx, cfg, log, stderr)
		if err != nil {
			loaded <- err
			return
		}
		if err := srv.SetModel(m); err != nil {
			closeFn()
			loaded <- err
			return
		}
		closeModel = closeFn
		go func() { m.Run(runCtx); close(runDone) }()
		log.Info(m.Summary())
		fmt.Fprintf(stderr, "\nReady. Try:\n  curl -s http://%s/v1/chat/completions -H 'Content-Type: application/json' -d '{\"model\": %q, \"messages\": [{\"role\": \"user\", \"content\": \"Say hello\"}], \"max_tokens\": 32}'\n", addr, m.Name)
		if !cfg.NoUI {
			fmt.Fprintf(stderr, "or open the playground: http://%s/\n", addr)
		}
		fmt.Fprintln(stderr)
		loaded <- nil
	}()

	select {
	case err := <-loaded:
		if err != nil {
			shutdown(hs, cfg.ShutdownTimeout)
			return err
		}
		if ready != nil {
			ready <- addr
		}
	case err := <-serveErr:
		return err
	case <-ctx.Done():
		shutdown(hs, cfg.ShutdownTimeout)
		if err := <-loaded; err != nil {
			return nil
		}
		return stopModel()
	}
	select {
	case err := <-serveErr:
		stopModel()
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: waiting for requests in flight", "timeout", cfg.ShutdownTimeout)
	shutdown(hs, cfg.ShutdownTimeout)
	return stopModel()
}

func shutdown(hs *http.Server, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := hs.Shutdown(ctx); err != nil {
		hs.Close()
	}
}
