package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"conform/fsm"
	"conform/runner"
	"conform/sampler"
	"conform/templates"
	"conform/turn"
)

// apiError is the server's one error type: an HTTP status and the fields of
// OpenAI's error envelope. Handlers return errors; renderError turns any
// error into one of these, once.
type apiError struct {
	Status int
	Type   string // invalid_request_error, authentication_error, ...
	Code   string
	Param  string
	Msg    string
	Err    error
}

func (e *apiError) Error() string {
	s := fmt.Sprintf("%d %s", e.Status, e.Msg)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *apiError) Unwrap() error { return e.Err }

func badParam(param, msg string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "invalid_value", Param: param, Msg: msg}
}

// errLoading is returned while the model is being loaded.
var errLoading = &apiError{Status: http.StatusServiceUnavailable, Type: "server_error", Code: "model_loading", Msg: "the model is still loading; retry when GET /health returns 200"}

// errQueueFull is returned when every slot is busy and the queue is full.
var errQueueFull = &apiError{Status: http.StatusTooManyRequests, Type: "rate_limit_error", Code: "queue_full", Msg: "the server is at capacity (every slot busy and the queue full); retry later"}

// toAPIError maps any error to its status and envelope: the one place where
// error codes of the other packages become HTTP.
func toAPIError(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return &apiError{Status: http.StatusRequestEntityTooLarge, Type: "invalid_request_error", Code: "request_too_large",
			Msg: fmt.Sprintf("the request body is larger than %d bytes (--max-body-bytes)", mb.Limit), Err: err}
	}
	var ce *turn.Error
	if errors.As(err, &ce) {
		code := ce.Code.String()
		if ce.Code == turn.CodeInternal || ce.Code == turn.CodeInvalidConfig {
			return &apiError{Status: http.StatusInternalServerError, Type: "server_error", Code: "internal_error", Msg: "internal error building the constraint", Err: err}
		}
		msg := ce.Msg
		if ce.Pointer != "" || ce.Keyword != "" {
			msg = fmt.Sprintf("%s (at JSON Pointer %q of %s", msg, ce.Pointer, ce.Param)
			if ce.Keyword != "" {
				msg += ", keyword " + ce.Keyword
			}
			msg += ")"
		}
		return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: code, Param: ce.Param, Msg: msg, Err: err}
	}
	var fe *fsm.Error
	if errors.As(err, &fe) {
		switch {
		case fe.Code.IsLimit(), fe.Code == fsm.ErrMaskBudget:
			return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "constraint_too_large", Msg: "the requested constraint is too large to compile: " + fe.Error(), Err: err}
		case fe.Code == fsm.ErrEmptyLanguage:
			return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "unsatisfiable", Msg: "no output can satisfy the requested constraints together", Err: err}
		case fe.Code < fsm.ErrTooManyNFAStates:
			return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "invalid_regex", Msg: fe.Error(), Err: err}
		}
	}
	var se *sampler.Error
	if errors.As(err, &se) && se.Code == sampler.CodeInvalidParam {
		return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "invalid_value", Param: se.Field, Msg: se.Msg, Err: err}
	}
	var re *runner.Error
	if errors.As(err, &re) {
		switch re.Code {
		case runner.CodeInvalidRequest:
			return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "invalid_value", Param: re.Place, Msg: re.Msg, Err: err}
		case runner.CodePromptTooLong:
			return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "context_length_exceeded", Param: "messages", Msg: "the prompt is too long for the context: " + re.Msg, Err: err}
		case runner.CodeClosed:
			return &apiError{Status: http.StatusServiceUnavailable, Type: "server_error", Code: "shutting_down", Msg: "the server is shutting down", Err: err}
		case runner.CodePanic:
			return &apiError{Status: http.StatusInternalServerError, Type: "server_error", Code: "internal_error",
				Msg: "internal error while generating: this request was ended (the server logged it with the request id and goes on serving)", Err: err}
		}
	}
	var te *templates.Error
	if errors.As(err, &te) {
		msg := "the chat template could not render these messages: " + te.Msg
		if te.Code == templates.CodeRaised {
			msg = te.Msg
		}
		return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "template_error", Param: "messages", Msg: msg, Err: err}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &apiError{Status: http.StatusServiceUnavailable, Type: "server_error", Code: "timeout", Msg: "the request timed out", Err: err}
	}
	return &apiError{Status: http.StatusInternalServerError, Type: "server_error", Code: "internal_error", Msg: "internal server error", Err: err}
}

// envelope builds OpenAI's error body.
func envelope(ae *apiError) ErrorBody {
	d := ErrorDetail{Message: ae.Msg, Type: ae.Type}
	if ae.Param != "" {
		p := ae.Param
		d.Param = &p
	}
	if ae.Code != "" {
		c := ae.Code
		d.Code = &c
	}
	return ErrorBody{Error: d}
}

// renderError writes err as OpenAI's error envelope and logs it with the
// request id. Client errors log at info, server faults at error.
func renderError(c *gin.Context, err error) {
	renderErrorAs(c, err, func(ae *apiError) any { return envelope(ae) })
}

// renderErrorAs is renderError with the error body of another API: the
// classification (toAPIError) and the logging are the same for every API,
// only body(ae) differs.
func renderErrorAs(c *gin.Context, err error, body func(*apiError) any) {
	ae := toAPIError(err)
	log := requestLogger(c)
	if ae.Status >= 500 && ae.Status != http.StatusServiceUnavailable {
		log.Error("request failed", append([]any{"status", ae.Status, "code", ae.Code, "err", err}, panicStack(err)...)...)
	} else {
		log.Info("request refused", "status", ae.Status, "code", ae.Code, "param", ae.Param, "msg", ae.Msg)
	}
	if c.Writer.Written() {
		return
	}
	c.AbortWithStatusJSON(ae.Status, body(ae))
}

// requestLogger returns the logger carrying the request id.
func requestLogger(c *gin.Context) *slog.Logger {
	if l, ok := c.Get(ctxLogger); ok {
		return l.(*slog.Logger)
	}
	return slog.Default()
}

// panicStack returns the log attributes of a recovered panic's stack ("stack",
// the stack) when err carries one, else none.
func panicStack(err error) []any {
	var re *runner.Error
	if errors.As(err, &re) && re.Stack != "" {
		return []any{"stack", re.Stack}
	}
	return nil
}
