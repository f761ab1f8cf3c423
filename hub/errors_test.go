package hub

import (
	"errors"
	"strings"
	"testing"
)

func TestErrorCodesNamedAndHinted(t *testing.T) {
	for c := CodeInternal; c <= CodeProtocol; c++ {
		if strings.HasPrefix(c.String(), "ErrorCode(") {
			t.Errorf("code %d has no name", c)
		}
		if e := errorf(c, "p", nil, "d"); e.Hint == "" {
			t.Errorf("errorf(%v) has no default hint", c)
		}
	}
	if got, want := ErrorCode(200).String(), "ErrorCode(200)"; got != want {
		t.Errorf("ErrorCode(200).String() = %q, want %q", got, want)
	}
}

func TestErrorFormat(t *testing.T) {
	cause := errors.New("line one\nline two")
	e := errorf(CodeIO, "/c/m.gguf", cause, "writing").withHint("do this")
	if got, want := e.Error(), "hub: /c/m.gguf: file error: writing: line one line two (do this)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(e, cause) {
		t.Errorf("errors.Is(%v, cause) = false, want true (Unwrap)", e)
	}
	if got, want := (&Error{Code: CodeOffline}).Error(), "hub: not cached (offline)"; got != want {
		t.Errorf("bare Error() = %q, want %q", got, want)
	}
}
