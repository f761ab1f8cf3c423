//go:build cgo && unix

package llama

/*
#cgo LDFLAGS: -lpthread
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include "ollama/llama.h"

// conform_decoder is one thread that runs llama_decode for the Go side:
// submit hands it a context and a batch, the thread decodes and then
// writes one byte to fd, which Go reads through its poller. See
// decoder_unix.go's doc for why.
typedef struct {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct llama_context *ctx;
	struct llama_batch batch;
	int pending; // a submitted decode has not started
	int running; // a decode has started and not finished
	int quit;
	int rc;
	int fd;
} conform_decoder;

static void *conform_decoder_main(void *arg) {
	conform_decoder *d = arg;
	pthread_mutex_lock(&d->mu);
	for (;;) {
		while (!d->pending && !d->quit) {
			pthread_cond_wait(&d->cv, &d->mu);
		}
		if (d->quit) {
			break;
		}
		d->pending = 0;
		d->running = 1;
		struct llama_context *ctx = d->ctx;
		struct llama_batch batch = d->batch;
		pthread_mutex_unlock(&d->mu);
		int rc = llama_decode(ctx, batch);
		pthread_mutex_lock(&d->mu);
		d->rc = rc;
		d->running = 0;
		pthread_cond_broadcast(&d->cv);
		char b = 1;
		while (write(d->fd, &b, 1) < 0 && errno == EINTR) {
		}
	}
	pthread_mutex_unlock(&d->mu);
	return NULL;
}

// conform_decoder_new starts the thread (8 MiB of stack, llama.cpp's
// main-thread budget on Linux); NULL when it cannot.
static conform_decoder *conform_decoder_new(int fd) {
	conform_decoder *d = calloc(1, sizeof *d);
	if (d == NULL) {
		return NULL;
	}
	d->fd = fd;
	pthread_mutex_init(&d->mu, NULL);
	pthread_cond_init(&d->cv, NULL);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 8 << 20);
	int err = pthread_create(&d->thread, &attr, conform_decoder_main, d);
	pthread_attr_destroy(&attr);
	if (err != 0) {
		pthread_cond_destroy(&d->cv);
		pthread_mutex_destroy(&d->mu);
		free(d);
		return NULL;
	}
	return d;
}

static void conform_decoder_submit(conform_decoder *d, struct llama_context *ctx, struct llama_batch batch) {
	pthread_mutex_lock(&d->mu);
	d->ctx = ctx;
	d->batch = batch;
	d->pending = 1;
	pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->mu);
}

// conform_decoder_wait blocks until the submitted decode has finished and
// returns its result: after the byte was read it does not block.
static int conform_decoder_wait(conform_decoder *d) {
	pthread_mutex_lock(&d->mu);
	while (d->pending || d->running) {
		pthread_cond_wait(&d->cv, &d->mu);
	}
	int rc = d->rc;
	pthread_mutex_unlock(&d->mu);
	return rc;
}

static void conform_decoder_free(conform_decoder *d) {
	pthread_mutex_lock(&d->mu);
	d->quit = 1;
	pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->mu);
	pthread_join(d->thread, NULL);
	pthread_cond_destroy(&d->cv);
	pthread_mutex_destroy(&d->mu);
	free(d);
}
*/
import "C"

import (
	"io"
	"os"
)

// decoder runs llama_decode on a C thread of its own while the calling
// goroutine waits in Go's poller, instead of inside a cgo call.
//
// Why: a goroutine in a cgo call keeps its P "running", and while another
// P is idle the Go scheduler's monitor thread (sysmon) does not take that P
// back for 10 ms; until then it wakes every 20 µs, and only after 1 ms
// backs off, doubling (runtime.retake). A decode is 25–45 ms on the CPU,
// so each one costs some 45 wake-ups of a Go thread on cores where
// llama.cpp's threads are computing and meet at barriers: measured at
// parallel 1 (qwen2.5-0.5b synthetic, 2 threads, 2 cores), 45 voluntary and
// 16 involuntary context switches a step and a 4–6% slower step than with
// GOMAXPROCS=1 (which retakes the P at once and lets sysmon sleep). A
// goroutine parked on a pipe leaves every P idle, so sysmon sleeps through
// the decode, whatever GOMAXPROCS is, and the other goroutines (masks
// filled during the decode, HTTP) still run.
type decoder struct {
	c    *C.conform_decoder
	r, w *os.File // the pipe: the thread writes a byte per decode to w
	buf  [1]byte
}

// newDecoder starts the thread; nil when it cannot (the caller then
// decodes in a cgo call).
func newDecoder() *decoder {
	r, w, err := os.Pipe()
	if err != nil {
		return nil
	}
	// Fd puts w in blocking mode, which the C write wants; r stays in
	// the poller.
	c := C.conform_decoder_new(C.int(w.Fd()))
	if c == nil {
		r.Close()
		w.Close()
		return nil
	}
	return &decoder{c: c, r: r, w: w}
}

// decode runs llama_decode(ctx, batch) on the thread and returns its
// result. The batch's memory must stay untouched until it returns.
func (d *decoder) decode(ctx *C.struct_llama_context, batch C.struct_llama_batch) int {
	C.conform_decoder_submit(d.c, ctx, batch)
	// A failed read (the pipe cannot break while d lives, but if it did)
	// falls back to waiting in C: the decode must be over before the
	// batch or the logits are touched.
	_, _ = io.ReadFull(d.r, d.buf[:])
	return int(C.conform_decoder_wait(d.c))
}

// close stops the thread (after the decode in flight, if any).
func (d *decoder) close() {
	C.conform_decoder_free(d.c)
	d.r.Close()
	d.w.Close()
}
