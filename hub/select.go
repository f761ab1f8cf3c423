package hub

import (
	"cmp"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// remoteFile is one file of a repository as the listing describes it.
type remoteFile struct {
	Path   string // path inside the repository, validated by checkFilePath
	Size   int64  // bytes
	SHA256 string // lower-case hex of the content (the LFS oid); "" when the hub gave none
}

// model is one loadable GGUF model: a single file, or the parts of a split
// model in order (llama.cpp loads the first part and finds the others).
type model struct {
	parts []remoteFile
	quant string // the quantization read from the name, upper case, or ""
	split bool
}

// splitRE matches the suffix llama.cpp's gguf-split writes:
// "<prefix>-00001-of-00003.gguf" (llama_split_path in llama.cpp).
var splitRE = regexp.MustCompile(`(?i)-(\d{5})-of-(\d{5})\.gguf$`)

// quantRE matches a token naming a llama.cpp quantization type
// (ggml_ftype / llama_ftype names: Q4_K_M, IQ2_XXS, Q8_0, TQ1_0, BF16, …).
var quantRE = regexp.MustCompile(`(?i)^(I?Q[0-9](_[0-9A-Z]+)*|TQ[0-9]_[0-9]|B?F16|F32|FP16|FP32|MXFP4(_MOE)?)$`)

// maxSplitParts bounds the part count read from a split file name, so that
// a hostile listing cannot make groupModels allocate much. gguf-split's
// counter has five digits; real models have a handful of parts (a 700 GB
// model in 50 GB shards has 14).
const maxSplitParts = 1000

// splitInfo reports the part number and count of a split file name, or
// ok=false for a file that is not split.
func splitInfo(p string) (part, of int, prefix string, ok bool) {
	m := splitRE.FindStringSubmatchIndex(p)
	if m == nil {
		return 0, 0, "", false
	}
	part, _ = strconv.Atoi(p[m[2]:m[3]])
	of, _ = strconv.Atoi(p[m[4]:m[5]])
	if part < 1 || of < 1 || part > of || of > maxSplitParts {
		return 0, 0, "", false
	}
	return part, of, p[:m[0]], true
}

// splitPath returns the path of part n of the split model whose parts start
// with prefix, in llama.cpp's "%s-%05d-of-%05d.gguf" form.
func splitPath(prefix string, n, of int) string {
	return fmt.Sprintf("%s-%05d-of-%05d.gguf", prefix, n, of)
}

// quantOf returns the quantization named in a file path (upper case), or ""
// when none is recognisable. It reads the last matching token of the base
// name (tokens split on '-' and '.'), then the folders from the innermost.
func quantOf(p string) string {
	segs := strings.Split(p, "/")
	for i := len(segs) - 1; i >= 0; i-- {
		name := segs[i]
		if i == len(segs)-1 {
			if _, _, prefix, ok := splitInfo(name); ok {
				name = prefix
			} else if hasGGUFExt(name) {
				name = name[:len(name)-5]
			}
		}
		toks := strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '.' })
		for j := len(toks) - 1; j >= 0; j-- {
			if quantRE.MatchString(toks[j]) {
				return strings.ToUpper(toks[j])
			}
		}
	}
	return ""
}

// matchQuant reports whether the quantization q occurs in path p, ignoring
// case, as a whole token: the byte before it is not a letter or digit (so
// "Q4_0" does not match "IQ4_0") and the byte after it is not a letter,
// digit or '_' (so "Q4_K" does not match "Q4_K_M").
func matchQuant(p, q string) bool {
	if q == "" {
		return false
	}
	lp, lq := strings.ToLower(p), strings.ToLower(q)
	for from := 0; from <= len(lp)-len(lq); {
		i := strings.Index(lp[from:], lq)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(lq)
		if (i == 0 || !isAlnum(lp[i-1])) && (end == len(lp) || !isAlnum(lp[end]) && lp[end] != '_') {
			return true
		}
		from = i + 1
	}
	return false
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// isProjector reports whether a GGUF file is a multimodal projector
// (mmproj-*.gguf), which sits beside the language model but is not one.
func isProjector(p string) bool {
	return strings.Contains(strings.ToLower(path.Base(p)), "mmproj")
}

// groupModels gathers the GGUF files of a listing into models: single files
// as they are, split parts under their common prefix (parts in order, with
// gaps left for choose to report). Projectors are left out.
func groupModels(files []remoteFile) []model {
	var out []model
	splits := map[string]int{} // prefix+count → index in out
	for _, f := range files {
		if !hasGGUFExt(f.Path) || isProjector(f.Path) {
			continue
		}
		part, of, prefix, ok := splitInfo(f.Path)
		if !ok {
			out = append(out, model{parts: []remoteFile{f}, quant: quantOf(f.Path)})
			continue
		}
		key := prefix + "\x00" + strconv.Itoa(of)
		i, seen := splits[key]
		if !seen {
			i = len(out)
			splits[key] = i
			out = append(out, model{parts: make([]remoteFile, of), quant: quantOf(f.Path), split: true})
		}
		out[i].parts[part-1] = f
	}
	return out
}

// first returns the path llama.cpp is given: the only file, or part 1.
func (m model) first() string {
	for _, p := range m.parts {
		if p.Path != "" {
			return p.Path
		}
	}
	return ""
}

// complete checks that every part of a split model is listed.
func (m model) complete(repo string) error {
	var missing []string
	_, of, prefix, _ := splitInfo(m.first())
	for i, p := range m.parts {
		if p.Path == "" {
			missing = append(missing, path.Base(splitPath(prefix, i+1, of)))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if len(missing) > 3 {
		missing = append(missing[:3], fmt.Sprintf("and %d more", len(missing)-3))
	}
	return errorf(CodeSplit, repo, nil, "%s lacks %s", m.first(), strings.Join(missing, ", ")).
		withHint("pick another quantization, or download the model by hand and pass --model PATH")
}

// choose picks the files to download for ref from a repository listing. The
// result is the parts of one model in order; the first is what llama.cpp
// loads.
//
// A File reference must be listed. A quantization picks among the models
// whose path names it (matchQuant), preferring an exact quantization token
// (Q4_K_XL over UD-Q4_K_XL), then a single file over a split one, then the
// shallowest and shortest path. With no quantization given and no
// DefaultQuant file, a repository holding exactly one model gives that model.
func choose(files []remoteFile, ref Ref) ([]remoteFile, error) {
	models := groupModels(files)
	if ref.File != "" {
		for _, m := range models {
			for _, p := range m.parts {
				if p.Path == ref.File {
					if err := m.complete(ref.Repo); err != nil {
						return nil, err
					}
					return m.parts, nil
				}
			}
		}
		for _, f := range files { // a projector or other file named explicitly
			if f.Path == ref.File {
				return []remoteFile{f}, nil
			}
		}
		return nil, errorf(CodeNotFound, ref.String(), nil, "no such file in the repository").
			withHint("available GGUF files: %s", listFiles(models))
	}
	if len(models) == 0 {
		return nil, errorf(CodeNoGGUF, ref.Repo, nil, "the repository has no .gguf file").
			withHint("pick a repository with GGUF files (often named …-GGUF), or pass a local file with --model PATH")
	}
	q := ref.quant()
	var matches []model
	for _, m := range models {
		if matchQuant(m.first(), q) {
			matches = append(matches, m)
		}
	}
	if len(matches) == 0 {
		if ref.Quant == "" && len(models) == 1 {
			matches = models
		} else {
			return nil, errorf(CodeUnknownQuant, ref.String(), nil, "no GGUF file for %s", q).
				withHint("available quantizations: %s; pick one with %s:QUANT", listQuants(models), ref.Repo)
		}
	}
	uq := strings.ToUpper(q)
	best := slices.MinFunc(matches, func(a, b model) int {
		return cmp.Or(
			boolCmp(a.quant != uq, b.quant != uq),
			boolCmp(a.split, b.split),
			cmp.Compare(strings.Count(a.first(), "/"), strings.Count(b.first(), "/")),
			cmp.Compare(len(a.first()), len(b.first())),
			strings.Compare(a.first(), b.first()),
		)
	})
	if err := best.complete(ref.Repo); err != nil {
		return nil, err
	}
	return best.parts, nil
}

// boolCmp orders false before true.
func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// listQuants names the quantizations of models, sorted and de-duplicated;
// a model whose name carries none is listed by its file name.
func listQuants(models []model) string {
	var qs []string
	for _, m := range models {
		q := m.quant
		if q == "" {
			q = path.Base(m.first())
		}
		qs = append(qs, q)
	}
	slices.Sort(qs)
	return strings.Join(slices.Compact(qs), ", ")
}

// listFiles names the first files of models, at most maxListed of them.
func listFiles(models []model) string {
	const maxListed = 20 // enough to see the naming scheme; the rest is on the model page
	var fs []string
	for _, m := range models {
		fs = append(fs, m.first())
	}
	if len(fs) == 0 {
		return "none"
	}
	slices.Sort(fs)
	if len(fs) > maxListed {
		fs = append(fs[:maxListed], fmt.Sprintf("and %d more", len(fs)-maxListed))
	}
	return strings.Join(fs, ", ")
}
