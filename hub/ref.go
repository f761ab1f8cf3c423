package hub

import (
	"strconv"
	"strings"
)

// DefaultQuant is the quantization picked when a reference names none. It is
// llama.cpp's default for `-hf org/repo` and a good size/quality trade-off.
const DefaultQuant = "Q4_K_M"

// Limits on the parts of a reference. Hugging Face caps a repository or
// organisation name at 96 characters; the others only keep hostile input
// (a 1 MB flag value) from going further than the parser.
const (
	maxNameLen  = 96   // per organisation or repository name (HF's own cap)
	maxFileLen  = 1024 // whole file path inside the repository
	maxQuantLen = 64   // a quantization name such as "UD-Q4_K_XL"
)

// Ref names a model on the hub: a repository and either a file inside it or
// a quantization to look for. Its zero Quant with an empty File means
// DefaultQuant.
type Ref struct {
	Repo  string // "org/repo"
	File  string // a path inside the repository ending in .gguf, or ""
	Quant string // a quantization name such as "Q4_K_M", or ""
}

// String returns the reference in the form ParseRef reads:
// "org/repo", "org/repo:QUANT" or "org/repo/path/file.gguf".
func (r Ref) String() string {
	switch {
	case r.File != "":
		return r.Repo + "/" + r.File
	case r.Quant != "":
		return r.Repo + ":" + r.Quant
	}
	return r.Repo
}

// quant returns the quantization to look for: Quant, or DefaultQuant.
func (r Ref) quant() string {
	if r.Quant == "" {
		return DefaultQuant
	}
	return r.Quant
}

// ParseRef reads a model reference as given to --hf:
//
//	org/repo                  the DefaultQuant GGUF of the repository
//	org/repo:Q8_0             the GGUF whose name carries that quantization
//	org/repo/file.gguf        that file (it may sit in a sub-folder)
//
// A leading "hf.co/", "huggingface.co/" or "https://huggingface.co/" is
// accepted and dropped. Names may hold letters, digits, '-', '_' and '.';
// file paths may not contain "..", empty segments or backslashes.
func ParseRef(s string) (Ref, error) {
	in := s
	bad := func(format string, args ...any) (Ref, error) {
		e := errorf(CodeBadRef, clip(in), nil, format, args...)
		return Ref{}, e.withHint("write it as org/repo, org/repo:QUANT or org/repo/file.gguf")
	}
	s = strings.TrimSpace(s)
	for _, p := range []string{"https://", "http://"} {
		s = strings.TrimPrefix(s, p)
	}
	for _, p := range []string{"huggingface.co/", "hf.co/"} {
		s = strings.TrimPrefix(s, p)
	}
	if s == "" {
		return bad("empty reference")
	}
	var quant string
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		s, quant = s[:i], s[i+1:]
		if quant == "" {
			return bad("empty quantization after ':'")
		}
		if len(quant) > maxQuantLen {
			return bad("quantization longer than %d bytes", maxQuantLen)
		}
		for i := 0; i < len(quant); i++ {
			if !isNameByte(quant[i]) {
				return bad("quantization %q: byte %q is not allowed", clip(quant), quant[i])
			}
		}
	}
	parts := strings.SplitN(s, "/", 3)
	if len(parts) < 2 {
		return bad("missing '/' between organisation and repository")
	}
	for _, name := range parts[:2] {
		if err := checkName(name); err != "" {
			return bad("%s", err)
		}
	}
	r := Ref{Repo: parts[0] + "/" + parts[1], Quant: quant}
	if len(parts) == 3 {
		if quant != "" {
			return bad("give either a file or a quantization, not both")
		}
		if err := checkFilePath(parts[2]); err != "" {
			return bad("%s", err)
		}
		if !hasGGUFExt(parts[2]) {
			return bad("file %q does not end in .gguf", clip(parts[2]))
		}
		r.File = parts[2]
	}
	return r, nil
}

// checkName validates an organisation or repository name and returns a
// description of the problem, or "".
func checkName(name string) string {
	switch {
	case name == "":
		return "empty organisation or repository name"
	case len(name) > maxNameLen:
		return "name longer than 96 bytes"
	case name == "." || name == "..":
		return "name " + name + " is not allowed"
	}
	for i := 0; i < len(name); i++ {
		if !isNameByte(name[i]) {
			return "name " + quoteClip(name) + ": only letters, digits, '-', '_' and '.' are allowed"
		}
	}
	return ""
}

// checkFilePath validates a path inside a repository (from a reference or
// from the hub's listing, which is not trusted either) and returns a
// description of the problem, or "". A valid path stays inside the cache
// folder when joined to it.
func checkFilePath(p string) string {
	switch {
	case p == "":
		return "empty file path"
	case len(p) > maxFileLen:
		return "file path longer than 1024 bytes"
	case strings.ContainsAny(p, "\\\x00"):
		return "file path " + quoteClip(p) + " contains a backslash or NUL"
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "file path " + quoteClip(p) + " has an empty, '.' or '..' segment"
		}
		for i := 0; i < len(seg); i++ {
			if seg[i] < 0x20 || seg[i] == 0x7f {
				return "file path " + quoteClip(p) + " contains a control byte"
			}
		}
	}
	return ""
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
}

func hasGGUFExt(p string) bool {
	return len(p) > 5 && strings.EqualFold(p[len(p)-5:], ".gguf")
}

// clip shortens s for an error message.
func clip(s string) string {
	const max = 120
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}

func quoteClip(s string) string { return strconv.Quote(clip(s)) }
