# Conform — build, test and benchmark.
#
#   make test        everything (pure-Go packages, then the llama.cpp binding)
#   make test-short  pure-Go packages only, CGO_ENABLED=0, for a quick loop
#   make fuzz        a short run of each fuzz target
#   make bench       Go benchmarks beside the code
#   make maskbench   the MaskBench protocol over ../shared/maskbench/dev.jsonl
#   make golden      rewrite golden files (-update)
#   make lint        go vet, gofmt and the import-direction check

SHELL      := /bin/bash
GO         ?= go
export PATH := $(PATH):/usr/local/go/bin:$(HOME)/go/bin
SHARED     ?= $(abspath ../shared)
FUZZTIME   ?= 15s
PURE_PKGS   = $(shell CGO_ENABLED=0 $(GO) list ./... )

.PHONY: all build test test-short fuzz bench maskbench golden lint deps

all: build

build:
	$(GO) build ./...

test: lint test-short

test-short:
	CGO_ENABLED=0 $(GO) test -count=1 $(PURE_PKGS)

fuzz:
	@set -e; for pkg in $$(CGO_ENABLED=0 $(GO) list ./...); do \
	  for f in $$(CGO_ENABLED=0 $(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; CGO_ENABLED=0 $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; done

bench:
	CGO_ENABLED=0 $(GO) test -run '^$$' -bench . -benchmem $(PURE_PKGS)

maskbench:
	$(GO) run ./bench/maskbench -data $(SHARED)/maskbench/dev.jsonl -tokenizer $(SHARED)/vocab/llama3_1/tokenizer.json -json build/maskbench.json

golden:
	CGO_ENABLED=0 $(GO) test ./grammar/... ./templates/... -run Golden -update

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	CGO_ENABLED=0 $(GO) vet $(PURE_PKGS)
	CGO_ENABLED=0 $(GO) test -count=1 -run TestImportDirection ./internal/archtest
