package main

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"conform/fsm"
	"conform/grammar"
	"conform/runner"
	"conform/turn"
)

// Context keys set by the middleware.
const (
	ctxLogger    = "conform.logger"
	ctxRequestID = "conform.request_id"
)

// Server is the HTTP side: routes, middleware, the model once loaded.
type Server struct {
	cfg     Config
	log     *slog.Logger
	model   atomic.Pointer[served]
	cache   *fsm.Cache
	metrics *metrics
	engine  *gin.Engine
	started int64
	// slots bounds the generations admitted (busy slots + --max-queue).
	slots chan struct{}
	// wrapGuide, when set (tests only), wraps every request's
	// matcher: fault injection through a guide.
	wrapGuide func(runner.Guide) runner.Guide
}

// served is the model being served with the turn compiler the server made
// for it (over the server's constraint cache and grammar options).
type served struct {
	*Model
	turns *turn.Compiler
}

// NewServer makes the server; SetModel makes it ready.
func NewServer(cfg Config, log *slog.Logger) *Server {
	s := &Server{cfg: cfg, log: log, cache: fsm.NewCache(0), started: time.Now().Unix()}
	s.slots = make(chan struct{}, cfg.Parallel+cfg.MaxQueue)
	s.metrics = newMetrics(cfg.Parallel, s.cache)
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	// A wrong method on a known path is a 405 naming the allowed ones, and
	// a path that differs by a trailing slash is a 404, not a redirect
	// (clients replay a redirected POST without its body).
	e.HandleMethodNotAllowed = true
	e.RedirectTrailingSlash = false
	e.Use(s.edge)
	e.GET("/health", s.health)
	// Claude Code probes the base URL with HEAD / at startup.
	e.HEAD("/", func(c *gin.Context) { c.Status(http.StatusOK) })
	s.routeUI(e) // GET /: the playground (ui.go), unless --no-ui
	e.GET("/metrics", gin.WrapH(promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{})))
	v1 := e.Group("/v1", s.auth)
	v1.GET("/models", s.handle(s.models))
	v1.POST("/chat/completions", s.handle(s.chat))
	v1.POST("/completions", s.handle(s.completions))
	v1.POST("/responses", s.handle(s.responses))
	v1.POST("/conform/explain", s.handle(s.explain))
	// The Messages routes carry Anthropic's auth and error envelope.
	e.POST("/v1/messages", s.anthropicAuth, s.handleAnthropic(s.messages))
	e.POST("/v1/messages/count_tokens", s.anthropicAuth, s.handleAnthropic(s.countTokens))
	e.NoRoute(notFound)
	e.NoMethod(func(c *gin.Context) {
		allow := c.Writer.Header().Get("Allow")
		renderError(c, &apiError{Status: http.StatusMethodNotAllowed, Type: "invalid_request_error", Code: "method_not_allowed",
			Msg: fmt.Sprintf("%s is not allowed on %s (allowed: %s)", c.Request.Method, clipText(c.Request.URL.Path, 200), allow)})
	})
	s.engine = e
	return s
}

// notFound answers a route the server does not have.
func notFound(c *gin.Context) {
	renderError(c, &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "not_found", Msg: fmt.Sprintf("no route %s %s", c.Request.Method, clipText(c.Request.URL.Path, 200))})
}

// Handler returns the http.Handler.
func (s *Server) Handler() http.Handler { return s.engine }

// SetModel makes the server ready to serve m.
func (s *Server) SetModel(m *Model) error {
	opts := turn.Options{MaxTools: s.cfg.MaxTools, Description: m.Description} // the converters check MaxTools first, naming --max-tools
	if s.cfg.PropertyOrder == "any" {
		opts.Grammar.PropertyOrder = grammar.OrderAny
	}
	tc, err := turn.NewCompiler(turn.CompilerConfig{Vocab: m.Tokens, Format: m.Format, Cache: s.cache, Options: opts, Observer: s.metrics})
	if err != nil {
		return err
	}
	panics := func() int64 { return m.Runner.Stats().Panics }
	s.metrics.runnerPanics.Store(&panics)
	s.model.Store(&served{Model: m, turns: tc})
	return nil
}

// driver runs the turns of m on its runner, within the server's admission
// and with its metrics.
func (s *Server) driver(m *Model) *turn.Driver {
	return &turn.Driver{Runner: m.Runner, Context: m.Context, Acquire: s.acquire, Release: s.release, Observer: s.metrics, WrapGuide: s.wrapGuide}
}

// edge is the outermost middleware: request id, logger, body limit, the
// recover that turns a panic into a 500 for this request only, and the
// request metrics.
func (s *Server) edge(c *gin.Context) {
	id := c.GetHeader("X-Request-Id")
	if id == "" || len(id) > 64 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		id = "req-" + hex.EncodeToString(b[:])
	}
	log := s.log.With("request_id", id)
	c.Set(ctxRequestID, id)
	c.Set(ctxLogger, log)
	c.Header("X-Request-Id", id)
	if c.Request.Body != nil {
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, s.cfg.MaxBodyBytes)
	}
	start := time.Now()
	defer func() {
		if p := recover(); p != nil {
			s.metrics.panics.Inc()
			log.Error("panic in request", "panic", p, "stack", string(debug.Stack()))
			if strings.HasPrefix(c.Request.URL.Path, "/v1/messages") {
				renderAnthropicError(c, fmt.Errorf("panic: %v", p))
			} else {
				renderError(c, fmt.Errorf("panic: %v", p))
			}
		}
		status := c.Writer.Status()
		path := c.FullPath()
		if path == "" {
			path = "other"
		}
		s.metrics.request(path, status)
		log.Info("request", "method", c.Request.Method, "path", c.Request.URL.Path, "status", status, "duration", time.Since(start).Round(time.Microsecond))
	}()
	c.Next()
}

// auth checks the API key on /v1.
func (s *Server) auth(c *gin.Context) {
	if s.cfg.APIKey == "" {
		return
	}
	// The scheme is case-insensitive (RFC 9110 section 11.1).
	h := c.GetHeader("Authorization")
	ok := len(h) > 7 && strings.EqualFold(h[:7], "Bearer ")
	if !ok || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(h[7:])), []byte(s.cfg.APIKey)) != 1 {
		renderError(c, &apiError{Status: http.StatusUnauthorized, Type: "authentication_error", Code: "invalid_api_key", Msg: "missing or wrong API key: send Authorization: Bearer <key> (--api-key)"})
		return
	}
}

// handle adapts a handler that returns an error to gin: every error goes to
// the one renderer.
func (s *Server) handle(h func(c *gin.Context) error) gin.HandlerFunc {
	return handleWith(renderError, h)
}

// handleWith is handle with the renderer of an API's error body.
func handleWith(render func(*gin.Context, error), h func(c *gin.Context) error) gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.IsAborted() {
			return
		}
		if err := h(c); err != nil {
			render(c, err)
		}
	}
}

func (s *Server) health(c *gin.Context) {
	if s.model.Load() == nil {
		c.JSON(http.StatusServiceUnavailable, gin.H{"status": "loading"})
		return
	}
	c.JSON(http.StatusOK, gin.H{"status": "ok"})
}

func (s *Server) models(c *gin.Context) error {
	m := s.model.Load()
	if m == nil {
		return errLoading
	}
	c.JSON(http.StatusOK, ModelList{Object: "list", Data: []ModelCard{{ID: m.Name, Object: "model", Created: s.started, OwnedBy: "conform"}}})
	return nil
}

// ready returns the model, checking the requested name. An absent name
// means the one model this server serves, as llama-server does; a wrong
// name is a 404.
func (s *Server) ready(name string) (*served, error) {
	m := s.model.Load()
	if m == nil {
		return nil, errLoading
	}
	if name != "" && name != m.Name {
		return nil, &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "model_not_found", Param: "model",
			Msg: fmt.Sprintf("the model %q does not exist; this server serves %q", name, m.Name)}
	}
	return m, nil
}

// acquire admits n generations, or fails with 429 when the queue is full.
func (s *Server) acquire(n int) error {
	for i := 0; i < n; i++ {
		select {
		case s.slots <- struct{}{}:
			s.metrics.inflight.Add(1)
		default:
			s.release(i)
			return errQueueFull
		}
	}
	return nil
}

func (s *Server) release(n int) {
	for i := 0; i < n; i++ {
		<-s.slots
		s.metrics.inflight.Add(-1)
	}
}

// bind reads the body (edge bounds it by --max-body-bytes: a larger one is
// a 413) and decodes it into v with decodeRequest. The ignored fields it
// carried are listed in the X-Conform-Ignored header.
func bind(c *gin.Context, v any) error {
	var body []byte
	if c.Request.Body != nil {
		var err error
		if body, err = io.ReadAll(c.Request.Body); err != nil {
			var mb *http.MaxBytesError
			if errors.As(err, &mb) {
				return err
			}
			return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "invalid_json", Msg: "the request body could not be read: " + err.Error()}
		}
	}
	ignored, err := decodeRequest(body, v)
	if err != nil {
		return err
	}
	if len(ignored) > 0 {
		c.Header("X-Conform-Ignored", strings.Join(ignored, ", "))
	}
	return nil
}
