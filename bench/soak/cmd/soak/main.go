// Command soak runs concurrent streaming clients against a Conform server
// for a fixed time (package conform/bench/soak), prints a table and one
// JSON line, and exits 1 when a request failed or a slot was still busy one
// second after the end.
//
//	go run ./bench/soak/cmd/soak -url http://127.0.0.1:8080 [-pid PID] [-clients 16] [-duration 1m] [-rounds N]
//	go run ./bench/soak/cmd/soak -server build/conform-serve [-server-args "--demo --parallel 4 ..."]
//	make soak ARGS="-clients 64 -duration 10m"
//
// With -url it soaks a server that is already running (-pid gives its
// process id, for its RSS from /proc; without it RSS comes from /metrics).
// With -server it starts that serve binary itself on a free loopback port
// with -server-args, waits for GET /health, soaks it, and stops it with
// SIGTERM (its exit status is reported). -rounds N soaks the same server N
// times in a row, a table and a JSON line each: memory that grows in the
// first round and not after is warm-up (caches, allocator), memory that
// grows every round is a leak. Exit status: 0 pass, 1 fail, 2 the run could
// not be made (flags, server start, probes).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"conform/bench/soak"
)

// defaultServerArgs serve the demo model with 4 slots, one decode thread
// (the tiny model needs no more, and llama.cpp's workers spin while they
// wait, which on a shared machine's cores cost 4× the throughput in a
// 16-client run; bench/README.md) and a queue that holds every
// client of a 64-client soak plus the requests its disconnecting clients
// leave behind while their slots are freed (the default --max-queue 64
// would answer some of them 429).
const defaultServerArgs = "--demo --parallel 4 --threads 1 --max-queue 256 --log-level warn"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg soak.Config
	var server, serverArgs, jsonOut string
	var serverTimeout time.Duration
	var quiet bool
	var rounds int
	fs.StringVar(&cfg.BaseURL, "url", "", "base URL of a running server (e.g. http://127.0.0.1:8080)")
	fs.IntVar(&cfg.PID, "pid", 0, "the running server's process id, for its RSS from /proc (with -url)")
	fs.StringVar(&server, "server", "", "a serve binary to start (instead of -url)")
	fs.StringVar(&serverArgs, "server-args", defaultServerArgs, "flags of the started server, split at spaces (--host and --port are set by soak)")
	fs.DurationVar(&serverTimeout, "server-timeout", 5*time.Minute, "how long the started server may take to answer GET /health")
	fs.IntVar(&cfg.Clients, "clients", soak.DefaultClients, "concurrent streaming clients")
	fs.DurationVar(&cfg.Duration, "duration", time.Minute, "how long clients start new requests")
	fs.IntVar(&cfg.MaxTokens, "max-tokens", soak.DefaultMaxTokens, "max_tokens of every request")
	fs.DurationVar(&cfg.RequestTimeout, "timeout", soak.DefaultRequestTimeout, "bound on one request, send to [DONE]")
	fs.IntVar(&cfg.DisconnectEvery, "disconnect-every", soak.DefaultDisconnectEvery, "one client in N disconnects after the first chunk (negative: none)")
	fs.Float64Var(&cfg.Temperature, "temperature", 1, "sampling temperature (0 < t ≤ 2)")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed of the request mix")
	fs.StringVar(&cfg.Model, "model", "", "the request's model field (empty: left out)")
	fs.StringVar(&cfg.APIKey, "api-key", "", "bearer token (the server's --api-key)")
	fs.BoolVar(&cfg.AllowCut, "allow-cut", false, "do not count constrained outputs cut by max_tokens as errors (for servers that do not keep the budget to close them)")
	fs.DurationVar(&cfg.ProgressEvery, "progress", 10*time.Second, "interval of the progress lines on stderr")
	fs.BoolVar(&quiet, "quiet", false, "no progress lines")
	fs.StringVar(&jsonOut, "json", "", "also write the JSON report to this file (a line per round)")
	fs.IntVar(&rounds, "rounds", 1, "soaks one after the other on the same server (RSS that grows in the first only is warm-up)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "soak: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if rounds < 1 {
		fmt.Fprintf(stderr, "soak: -rounds %d: want ≥ 1\n", rounds)
		return 2
	}
	if !quiet {
		cfg.Progress = stderr
	}
	switch {
	case server != "" && cfg.BaseURL != "":
		fmt.Fprintln(stderr, "soak: give -url (a running server) or -server (start one), not both")
		return 2
	case server == "" && cfg.BaseURL == "":
		fmt.Fprintln(stderr, "soak: give -url (a running server) or -server (a serve binary to start)")
		return 2
	case server != "" && cfg.PID != 0:
		fmt.Fprintln(stderr, "soak: -pid is for -url; a started server's pid is known")
		return 2
	}
	var srv *startedServer
	if server != "" {
		var err error
		if srv, err = startServer(ctx, server, strings.Fields(serverArgs), serverTimeout, stderr); err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		cfg.BaseURL, cfg.PID = srv.url, srv.cmd.Process.Pid
		fmt.Fprintf(stderr, "soak: started %s (pid %d) at %s\n", server, cfg.PID, cfg.BaseURL)
	}
	code := 0
	var lines []byte
	for round := 1; round <= rounds; round++ {
		if rounds > 1 {
			fmt.Fprintf(stdout, "round %d of %d\n", round, rounds)
		}
		c := cfg
		c.Seed = cfg.Seed + uint64(round-1)
		rep, err := soak.Run(ctx, c)
		if err != nil {
			fmt.Fprintln(stderr, err)
			code = 2
			break
		}
		if err := rep.Table(stdout); err != nil {
			fmt.Fprintln(stderr, "soak:", err)
			code = 2
			break
		}
		line, err := json.Marshal(rep)
		if err != nil {
			fmt.Fprintln(stderr, "soak:", err)
			code = 2
			break
		}
		fmt.Fprintf(stdout, "%s\n", line)
		lines = append(append(lines, line...), '\n')
		if !rep.OK() {
			code = max(code, 1)
		}
		if rep.Interrupted {
			break
		}
	}
	if srv != nil {
		if err := srv.stop(); err != nil {
			fmt.Fprintf(stderr, "soak: the server did not stop cleanly: %v\n", err)
			code = max(code, 1)
		}
	}
	if jsonOut != "" && len(lines) > 0 {
		if err := os.WriteFile(jsonOut, lines, 0o644); err != nil {
			fmt.Fprintln(stderr, "soak:", err)
			return 2
		}
	}
	return code
}

// startedServer is a serve process this command started.
type startedServer struct {
	cmd    *exec.Cmd
	url    string
	exited chan error
}

// startServer runs the serve binary on a free loopback port and waits until
// GET /health answers 200.
func startServer(ctx context.Context, path string, args []string, timeout time.Duration, stderr io.Writer) (*startedServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, &soak.Error{Code: soak.CodeServer, Msg: "pick a free port", Err: err}
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	args = append(append([]string{}, args...), "--host", "127.0.0.1", "--port", strconv.Itoa(port))
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Start(); err != nil {
		return nil, &soak.Error{Code: soak.CodeServer, Msg: "start " + path, Err: err}
	}
	s := &startedServer{cmd: cmd, url: "http://127.0.0.1:" + strconv.Itoa(port), exited: make(chan error, 1)}
	go func() { s.exited <- cmd.Wait() }()
	deadline := time.Now().Add(timeout)
	hc := &http.Client{Timeout: 5 * time.Second}
	for {
		resp, err := hc.Get(s.url + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		select {
		case err := <-s.exited:
			return nil, &soak.Error{Code: soak.CodeServer, Msg: fmt.Sprintf("%s %s exited before it was ready", path, strings.Join(args, " ")), Err: err}
		case <-ctx.Done():
			s.stop()
			return nil, &soak.Error{Code: soak.CodeServer, Msg: "interrupted while the server started", Err: ctx.Err()}
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, &soak.Error{Code: soak.CodeServer, Msg: fmt.Sprintf("GET %s/health not 200 within %s", s.url, timeout)}
		}
	}
}

// stopGrace is how long a stopped server may take to exit after SIGTERM
// (its own --shutdown-timeout defaults to 10 s) before it is killed.
const stopGrace = 30 * time.Second

// stop sends SIGTERM and waits for the exit; a server that does not exit
// in stopGrace is killed, and that is an error.
func (s *startedServer) stop() error {
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	select {
	case err := <-s.exited:
		return err
	case <-time.After(stopGrace):
		s.cmd.Process.Kill()
		<-s.exited
		return fmt.Errorf("no exit %s after SIGTERM: killed", stopGrace)
	}
}
