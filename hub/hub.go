package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// refsFile is the per-repository index, in <cache>/<org>/<repo>/, from a
// quantization as asked ("" for the default) to the file it resolved to, so
// that "org/repo:Q8_0" finds its cached file without listing the repository.
const refsFile = ".conform-refs.json"

// Resolve returns the local path of a verified GGUF file for ref, from the
// cache when it is there (without any request), else downloaded from the
// hub into the cache. For a split model the path is that of the first part,
// which is what llama.cpp loads; the other parts sit beside it.
//
// The steps: check ref; look for it in the cache (File directly, a
// quantization through the repository's index); unless Offline, list the
// repository (GET {endpoint}/api/models/{repo}/tree/main?recursive=true),
// choose the model's files, download each one that is not cached (resuming
// a .part, verifying size and SHA-256, writing a sidecar, renaming), and
// record the choice in the index.
//
// Every error is an *Error with a code and a one-line hint.
func Resolve(ctx context.Context, ref Ref, o Options) (string, error) {
	if err := checkRef(ref); err != nil {
		return "", err
	}
	c, err := newClient(o)
	if err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", errorf(CodeCanceled, ref.String(), context.Cause(ctx), "stopped before starting")
	}
	repoDir := filepath.Join(c.cache, filepath.FromSlash(ref.Repo))
	if p, ok, err := c.lookup(ref, repoDir); err != nil {
		return "", err
	} else if ok {
		if c.o.Progress != nil {
			fmt.Fprintf(c.o.Progress, "hub: using cached %s\n", p)
		}
		return p, nil
	}
	if c.o.Offline {
		return "", errorf(CodeOffline, ref.String(), nil, "not in the cache %s", c.cache).
			withHint("start once without --offline to download it, or pass a local file with --model PATH")
	}
	// Fail before any request when the cache cannot be written.
	if err := os.MkdirAll(repoDir, 0o755); err != nil {
		return "", fsError(repoDir, err, "creating the cache folder")
	}
	files, err := c.list(ctx, ref.Repo)
	if err != nil {
		return "", err
	}
	parts, err := choose(files, ref)
	if err != nil {
		return "", err
	}
	if ref.File == "" && ref.Quant == "" && !matchQuant(parts[0].Path, DefaultQuant) && c.o.Progress != nil {
		fmt.Fprintf(c.o.Progress, "hub: %s has no %s file; using its only model, %s\n", ref.Repo, DefaultQuant, parts[0].Path)
	}
	for _, f := range parts {
		if err := c.ensure(ctx, ref.Repo, f, filepath.Join(repoDir, filepath.FromSlash(f.Path))); err != nil {
			return "", err
		}
	}
	first := parts[0].Path
	if ref.File == "" {
		// Best effort: without the index the next start lists the repository
		// again, which is slower but not wrong.
		_ = recordRef(repoDir, strings.ToUpper(ref.Quant), first)
	}
	return filepath.Join(repoDir, filepath.FromSlash(first)), nil
}

// ensure makes dst a verified copy of f, downloading it unless the cache
// already holds it, under the file's lock so that a concurrent process
// downloading the same file is waited for rather than raced.
func (c *client) ensure(ctx context.Context, repo string, f remoteFile, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fsError(filepath.Dir(dst), err, "creating the cache folder")
	}
	unlock, err := lockFile(ctx, dst+".lock", c.o.Progress)
	if err != nil {
		return err
	}
	defer unlock()
	sc, ok, err := cachedFile(dst, c.o.Verify)
	if err != nil {
		var he *Error
		if !errors.As(err, &he) || he.Code != CodeChecksum {
			return err
		}
		ok = false // a corrupt cached file was removed: download it again
	}
	if ok && sc.Size == f.Size && (f.SHA256 == "" || sc.SHA256 == f.SHA256) {
		return nil
	}
	return c.fetch(ctx, repo, f, dst)
}

// checkRef validates a Ref that may have been built by hand, not by ParseRef.
func checkRef(ref Ref) error {
	bad := func(msg string) error {
		return errorf(CodeBadRef, clip(ref.String()), nil, "%s", msg).
			withHint("write it as org/repo, org/repo:QUANT or org/repo/file.gguf")
	}
	org, name, ok := strings.Cut(ref.Repo, "/")
	if !ok {
		return bad("missing '/' between organisation and repository")
	}
	for _, n := range []string{org, name} {
		if msg := checkName(n); msg != "" {
			return bad(msg)
		}
	}
	if ref.File != "" {
		if msg := checkFilePath(ref.File); msg != "" {
			return bad(msg)
		}
		if ref.Quant != "" {
			return bad("give either a file or a quantization, not both")
		}
	}
	for i := 0; i < len(ref.Quant); i++ {
		if !isNameByte(ref.Quant[i]) {
			return bad("quantization " + quoteClip(ref.Quant) + " has a byte that is not allowed")
		}
	}
	return nil
}

// lookup finds ref in the cache: the file (all parts of a split model) must
// be complete by its sidecar. It makes no request.
func (c *client) lookup(ref Ref, repoDir string) (string, bool, error) {
	first := ref.File
	if first == "" {
		refs, _ := readRefs(repoDir)
		first = refs[strings.ToUpper(ref.Quant)]
		if first == "" || checkFilePath(first) != "" {
			return "", false, nil
		}
	}
	paths := []string{first}
	if _, of, prefix, ok := splitInfo(first); ok {
		paths = paths[:0]
		for i := 1; i <= of; i++ {
			paths = append(paths, splitPath(prefix, i, of))
		}
		first = paths[0]
	}
	for _, p := range paths {
		_, ok, err := cachedFile(filepath.Join(repoDir, filepath.FromSlash(p)), c.o.Verify)
		if err != nil {
			var he *Error
			if errors.As(err, &he) && he.Code == CodeChecksum && !c.o.Offline {
				return "", false, nil // removed; the caller downloads it again
			}
			return "", false, err
		}
		if !ok {
			return "", false, nil
		}
	}
	return filepath.Join(repoDir, filepath.FromSlash(first)), true, nil
}

// readRefs reads the repository's quantization index (empty when absent).
func readRefs(repoDir string) (map[string]string, error) {
	f, err := os.Open(filepath.Join(repoDir, refsFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	refs := map[string]string{}
	err = json.NewDecoder(io.LimitReader(f, maxSidecarBytes)).Decode(&refs)
	return refs, err
}

// recordRef adds quant → file to the repository's index.
func recordRef(repoDir, quant, file string) error {
	refs, err := readRefs(repoDir)
	if err != nil {
		refs = map[string]string{}
	}
	if refs[quant] == file {
		return nil
	}
	refs[quant] = file
	data, err := json.MarshalIndent(refs, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(repoDir, refsFile), append(data, '\n'))
}
