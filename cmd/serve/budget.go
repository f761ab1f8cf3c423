package main

import (
	"errors"
	"fmt"
	"net/http"

	"conform/fsm"
)

// checkBudget refuses, before anything is generated, a constrained job
// whose shortest valid output does not fit its budget: max_tokens, or the
// room its longest prompt leaves in the context. The runner closes a
// constrained output within the budget (runner.BudgetConstraint), which
// can only work when the shortest output fits; refusing here says by how
// much, where a generation could only fail. maxParam names the request
// field that set MaxTokens, promptParam the prompt's.
//
// A minimum the closing search cannot find within its state budget
// (fsm.ErrCloseBudget) lets the job through: the runner then closes the
// output if the budget turns out to be enough, and fails it otherwise.
func checkBudget(j *job, maxParam, promptParam string) error {
	if j.cons == nil {
		return nil
	}
	need, err := j.cons.NewMatcher().MinTokens()
	var fe *fsm.Error
	switch {
	case errors.As(err, &fe) && fe.Code == fsm.ErrCloseBudget:
		return nil
	case errors.As(err, &fe) && fe.Code == fsm.ErrUnclosable:
		return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "unsatisfiable",
			Msg: "no sequence of this model's tokens completes an output of the requested format", Err: err}
	case err != nil:
		return err
	}
	longest := 0
	for _, p := range j.prompts {
		longest = max(longest, len(p))
	}
	room := j.model.Context - longest
	if mt := j.gen.MaxTokens; mt > 0 && mt < need && mt <= room {
		return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "max_tokens_too_small", Param: maxParam,
			Msg: fmt.Sprintf("%s is %d, but the shortest output of the requested format takes %d tokens: set %s to at least %d", maxParam, mt, need, maxParam, need)}
	}
	if room > 0 && room < need {
		return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "context_length_exceeded", Param: promptParam,
			Msg: fmt.Sprintf("the prompt (%d tokens) leaves %d of the context's %d tokens, but the shortest output of the requested format takes %d: shorten the prompt", longest, room, j.model.Context, need)}
	}
	return nil
}

// chatMaxParam names the field that set a chat request's token limit.
func chatMaxParam(r *ChatRequest) string {
	if r.MaxCompletionTokens != nil {
		return "max_completion_tokens"
	}
	return "max_tokens"
}
