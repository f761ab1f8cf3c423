// llamaref measures llama.cpp's own CPU path on a GGUF model, built with
// llama.cpp's CMake from the same pinned sources Conform links through cgo,
// so that Conform's decode and prefill speed can be held to it (issue 17,
// item 2). It calls llama.h directly: no runner, no sampler, no Go.
//
//   make llamaref-bench ARGS="-t 2 -np 1,4 -n 32 -p 128 -json build/llamaref.json"
//
// For each parallel value in -np it creates a context the way
// internal/llama does (llama_context_default_params, then n_ctx = parallel
// x per-sequence context, n_batch = ubatch x parallel, n_ubatch = ubatch,
// n_seq_max = parallel, the same threads for decode and batch, flash
// attention and KV cache type as given) and measures, -r times after one
// warm-up round that is not counted:
//
//   pp  prompt processing: -p tokens (the -text prompt's tokens repeated)
//       decoded as one batch on sequence 0, logits for the last token only,
//       timed from llama_decode to the logits read; tokens/s. This is
//       bench/e2e's -prefill measurement.
//   tg  text generation: the -text prompt decoded once into each of the
//       parallel sequences (untimed), its first token the argmax of the
//       prompt's logits, then -n minus 1 steps, each one batch with one
//       token per sequence (its own position and seq id) and logits for
//       all, timed from llama_decode until every sequence's argmax is read.
//       A request of -n tokens thus makes -n minus 1 decode steps, as in
//       bench/e2e, whose per-request decode rate is the tokens after the
//       first over the time from the first to the last.
//
// Each reported number is the median over the rounds of that round's
// value: tokens/s of all sequences, tokens/s per sequence, the p50 step.
// Greedy argmax keeps every round's tokens the same.
#include "llama.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace {

// defaultText is bench/e2e's prompt (bench/e2e/run.go), so that both
// programs decode the same token ids.
const char *const defaultText = "Reply with one JSON value that matches the schema.\n";

struct options {
    std::string model;
    std::string json;
    std::string text = defaultText;
    std::string fa = "auto";
    std::string kv = "f16";
    int threads = 2;
    int ctxSeq = 0; // 0: max(256, n + 128), bench/e2e's per-sequence context
    int ubatch = 512;
    int prompt = 128;
    int gen = 32;
    int reps = 5;
    bool embeddings = false;
    bool unified = false;
    bool bos = true;
    bool verbose = false;
    std::vector<int> parallel = {1, 4};
};

// result is one measured test at one parallel value.
struct result {
    int parallel;
    std::string test;          // "pp" or "tg"
    int tokens;                // tokens per round (all sequences)
    std::vector<double> tokS;  // per round, all sequences
    std::vector<double> p50ms; // per round: pp, the batch; tg, the p50 step
};

void usage(FILE *f) {
    std::fprintf(f,
        "usage: llamaref -m MODEL.gguf [flags]\n"
        "  -t N        threads (decode and batch), default 2\n"
        "  -np LIST    parallel sequences, comma-separated, default 1,4\n"
        "  -p N        prompt-processing batch in tokens, default 128 (0: skip)\n"
        "  -n N        tokens generated per sequence (N-1 decode steps), default 32 (0 or 1: skip)\n"
        "  -c N        KV cells per sequence (n_ctx = N x parallel), default max(256, n+128) as bench/e2e\n"
        "  -b N        n_ubatch (n_batch = N x parallel), default 512 as internal/llama\n"
        "  -r N        measured rounds after one warm-up, default 5\n"
        "  -fa MODE    flash attention auto|on|off, default auto\n"
        "  -kv TYPE    KV cache type f16|q8_0|q4_0, default f16\n"
        "  -embd 0|1   extract embeddings with the logits (ollama's binding sets 1), default 0\n"
        "  -kvu 0|1    one KV buffer for all sequences (kv_unified; internal/llama's default at -np > 1), default 0\n"
        "  -bos 0|1    add the vocabulary's BOS when tokenizing -text, default 1\n"
        "  -text S     the prompt, default bench/e2e's\n"
        "  -json FILE  also write the results as JSON\n"
        "  -v          llama.cpp's log on stderr\n");
}

// parseInt reads a whole decimal integer in [lo, hi].
bool parseInt(const char *s, int lo, int hi, int *out) {
    if (s == nullptr || *s == '\0') {
        return false;
    }
    errno = 0;
    char *end = nullptr;
    long v = std::strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi) {
        return false;
    }
    *out = static_cast<int>(v);
    return true;
}

// parseList reads "1,4,8": each value in [1, 256] (LLAMA_MAX_SEQ).
bool parseList(const char *s, std::vector<int> *out) {
    out->clear();
    std::string str(s ? s : "");
    size_t start = 0;
    while (start <= str.size()) {
        size_t comma = str.find(',', start);
        if (comma == std::string::npos) {
            comma = str.size();
        }
        int v = 0;
        if (!parseInt(str.substr(start, comma - start).c_str(), 1, 256, &v)) {
            return false;
        }
        out->push_back(v);
        start = comma + 1;
    }
    return !out->empty();
}

// parseArgs fills o; it prints what is wrong and returns false on bad input.
bool parseArgs(int argc, char **argv, options *o) {
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "-h" || a == "-help" || a == "--help") {
            usage(stdout);
            std::exit(0);
        }
        if (a == "-v") {
            o->verbose = true;
            continue;
        }
        if (i + 1 >= argc) {
            std::fprintf(stderr, "llamaref: %s needs a value\n", a.c_str());
            return false;
        }
        const char *v = argv[++i];
        bool ok = true;
        int b = 0;
        if (a == "-m") {
            o->model = v;
        } else if (a == "-json") {
            o->json = v;
        } else if (a == "-text") {
            o->text = v;
        } else if (a == "-t") {
            ok = parseInt(v, 1, 1024, &o->threads);
        } else if (a == "-np") {
            ok = parseList(v, &o->parallel);
        } else if (a == "-p") {
            ok = parseInt(v, 0, 1 << 20, &o->prompt);
        } else if (a == "-n") {
            ok = parseInt(v, 0, 1 << 20, &o->gen);
        } else if (a == "-c") {
            ok = parseInt(v, 1, 1 << 24, &o->ctxSeq);
        } else if (a == "-b") {
            ok = parseInt(v, 1, 1 << 20, &o->ubatch);
        } else if (a == "-r") {
            ok = parseInt(v, 1, 10000, &o->reps);
        } else if (a == "-fa") {
            o->fa = v;
            ok = o->fa == "auto" || o->fa == "on" || o->fa == "off";
        } else if (a == "-kv") {
            o->kv = v;
            ok = o->kv == "f16" || o->kv == "q8_0" || o->kv == "q4_0";
        } else if (a == "-embd") {
            ok = parseInt(v, 0, 1, &b);
            o->embeddings = b == 1;
        } else if (a == "-kvu") {
            ok = parseInt(v, 0, 1, &b);
            o->unified = b == 1;
        } else if (a == "-bos") {
            ok = parseInt(v, 0, 1, &b);
            o->bos = b == 1;
        } else {
            std::fprintf(stderr, "llamaref: unknown flag %s\n", a.c_str());
            usage(stderr);
            return false;
        }
        if (!ok) {
            std::fprintf(stderr, "llamaref: bad value \"%s\" for %s\n", v, a.c_str());
            return false;
        }
    }
    if (o->model.empty()) {
        std::fprintf(stderr, "llamaref: -m MODEL is required\n");
        usage(stderr);
        return false;
    }
    if (o->kv != "f16" && o->fa == "off") {
        std::fprintf(stderr, "llamaref: a %s KV cache needs flash attention (-fa auto or on)\n", o->kv.c_str());
        return false;
    }
    return true;
}

bool verboseLog = false;

void logSink(ggml_log_level level, const char *text, void *) {
    if (verboseLog || level == GGML_LOG_LEVEL_ERROR) {
        std::fputs(text, stderr);
    }
}

double nowMs() {
    using namespace std::chrono;
    return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
    if (v.empty()) {
        return 0;
    }
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

ggml_type kvType(const std::string &s) {
    if (s == "q8_0") {
        return GGML_TYPE_Q8_0;
    }
    if (s == "q4_0") {
        return GGML_TYPE_Q4_0;
    }
    return GGML_TYPE_F16;
}

llama_flash_attn_type faType(const std::string &s) {
    if (s == "on") {
        return LLAMA_FLASH_ATTN_TYPE_ENABLED;
    }
    if (s == "off") {
        return LLAMA_FLASH_ATTN_TYPE_DISABLED;
    }
    return LLAMA_FLASH_ATTN_TYPE_AUTO;
}

// batchSet writes entry i of b.
void batchSet(llama_batch *b, int i, llama_token tok, llama_pos pos, llama_seq_id seq, bool logits) {
    b->token[i] = tok;
    b->pos[i] = pos;
    b->n_seq_id[i] = 1;
    b->seq_id[i][0] = seq;
    b->logits[i] = logits;
}

// argmax returns the token with the largest logit after batch entry i, or
// -1 when llama.cpp has no logits for it.
llama_token argmax(llama_context *ctx, int i, int nVocab) {
    const float *l = llama_get_logits_ith(ctx, i);
    if (l == nullptr) {
        return -1;
    }
    return static_cast<llama_token>(std::max_element(l, l + nVocab) - l);
}

// bench owns one context and its batch.
struct bench {
    llama_context *ctx = nullptr;
    llama_batch batch{};
    bool hasBatch = false;
    int nVocab = 0;

    ~bench() {
        if (hasBatch) {
            llama_batch_free(batch);
        }
        if (ctx) {
            llama_free(ctx);
        }
    }

    void clear() { llama_memory_clear(llama_get_memory(ctx), true); }

    // pp decodes n tokens of prompt (repeated) on sequence 0 and returns
    // the milliseconds to the last token's logits, or a negative value.
    double pp(const std::vector<llama_token> &prompt, int n) {
        clear();
        batch.n_tokens = n;
        for (int i = 0; i < n; i++) {
            batchSet(&batch, i, prompt[i % prompt.size()], i, 0, i == n - 1);
        }
        double t0 = nowMs();
        if (llama_decode(ctx, batch) != 0 || argmax(ctx, n - 1, nVocab) < 0) {
            return -1;
        }
        return nowMs() - t0;
    }

    // tg fills steps with the milliseconds of each of the gen-1 steps of
    // np sequences after the prompt; it returns false on a decode error.
    bool tg(const std::vector<llama_token> &prompt, int np, int gen, std::vector<double> *steps) {
        clear();
        steps->clear();
        const int lp = static_cast<int>(prompt.size());
        batch.n_tokens = lp * np;
        for (int s = 0; s < np; s++) {
            for (int i = 0; i < lp; i++) {
                batchSet(&batch, s * lp + i, prompt[i], i, s, i == lp - 1);
            }
        }
        if (llama_decode(ctx, batch) != 0) {
            return false;
        }
        std::vector<llama_token> next(np);
        for (int s = 0; s < np; s++) {
            if ((next[s] = argmax(ctx, s * lp + lp - 1, nVocab)) < 0) {
                return false;
            }
        }
        for (int step = 1; step < gen; step++) {
            batch.n_tokens = np;
            for (int s = 0; s < np; s++) {
                batchSet(&batch, s, next[s], lp + step - 1, s, true);
            }
            double t0 = nowMs();
            if (llama_decode(ctx, batch) != 0) {
                return false;
            }
            for (int s = 0; s < np; s++) {
                if ((next[s] = argmax(ctx, s, nVocab)) < 0) {
                    return false;
                }
            }
            steps->push_back(nowMs() - t0);
        }
        return true;
    }
};

std::string jsonString(const std::string &s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out + "\"";
}

std::string jsonNumbers(const std::vector<double> &v) {
    std::string out = "[";
    for (size_t i = 0; i < v.size(); i++) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%s%.3f", i ? ", " : "", v[i]);
        out += buf;
    }
    return out + "]";
}

std::string buildFlags() {
    std::string s;
    s += LLAMAREF_NATIVE ? "native" : "generic";
    s += LLAMAREF_OPENMP ? " openmp" : " no-openmp";
    s += LLAMAREF_REPACK ? " repack" : " no-repack";
    s += LLAMAREF_LLAMAFILE ? " llamafile" : " no-llamafile";
    return s;
}

bool writeJSON(const options &o, const std::string &desc, int promptTokens, const std::vector<result> &results) {
    FILE *f = std::fopen(o.json.c_str(), "w");
    if (f == nullptr) {
        std::fprintf(stderr, "llamaref: %s: %s\n", o.json.c_str(), std::strerror(errno));
        return false;
    }
    char date[32];
    std::time_t t = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    std::fprintf(f, "{\n  \"date\": %s,\n  \"model\": %s,\n  \"model_desc\": %s,\n  \"build\": %s,\n  \"system_info\": %s,\n",
                 jsonString(date).c_str(), jsonString(o.model).c_str(), jsonString(desc).c_str(),
                 jsonString(buildFlags()).c_str(), jsonString(llama_print_system_info()).c_str());
    std::fprintf(f, "  \"config\": {\"threads\": %d, \"ubatch\": %d, \"ctx_per_seq\": %d, \"prompt\": %d, \"gen\": %d, "
                    "\"reps\": %d, \"flash_attn\": %s, \"kv_type\": %s, \"embeddings\": %s, \"kv_unified\": %s, \"text_tokens\": %d},\n",
                 o.threads, o.ubatch, o.ctxSeq, o.prompt, o.gen, o.reps, jsonString(o.fa).c_str(),
                 jsonString(o.kv).c_str(), o.embeddings ? "true" : "false", o.unified ? "true" : "false", promptTokens);
    std::fprintf(f, "  \"results\": [\n");
    for (size_t i = 0; i < results.size(); i++) {
        const result &r = results[i];
        double tokS = median(r.tokS);
        double perSeq = r.test == "pp" ? tokS : tokS / r.parallel;
        std::fprintf(f, "    {\"parallel\": %d, \"test\": %s, \"tokens\": %d, \"tok_s\": %.3f, \"tok_s_per_seq\": %.3f, "
                        "\"p50_ms\": %.3f, \"tok_s_rounds\": %s, \"p50_ms_rounds\": %s}%s\n",
                     r.parallel, jsonString(r.test).c_str(), r.tokens, tokS, perSeq, median(r.p50ms),
                     jsonNumbers(r.tokS).c_str(), jsonNumbers(r.p50ms).c_str(), i + 1 < results.size() ? "," : "");
    }
    std::fprintf(f, "  ]\n}\n");
    if (std::fclose(f) != 0) {
        std::fprintf(stderr, "llamaref: %s: %s\n", o.json.c_str(), std::strerror(errno));
        return false;
    }
    return true;
}

// measure runs the rounds of both tests at np sequences into results.
bool measure(const options &o, llama_model *model, const std::vector<llama_token> &text, int np,
             std::vector<result> *results) {
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = static_cast<uint32_t>(o.ctxSeq) * np;
    cp.n_batch = static_cast<uint32_t>(o.ubatch) * np;
    cp.n_ubatch = o.ubatch;
    cp.n_seq_max = np;
    cp.n_threads = o.threads;
    cp.n_threads_batch = o.threads;
    cp.flash_attn_type = faType(o.fa);
    cp.type_k = kvType(o.kv);
    cp.type_v = kvType(o.kv);
    cp.embeddings = o.embeddings;
    cp.kv_unified = o.unified;

    bench b;
    b.ctx = llama_init_from_model(model, cp);
    if (b.ctx == nullptr) {
        std::fprintf(stderr, "llamaref: creating a context for %d sequences failed\n", np);
        return false;
    }
    const int seqCtx = static_cast<int>(llama_n_ctx_seq(b.ctx));
    const int lp = static_cast<int>(text.size());
    if (o.prompt > seqCtx || lp + o.gen > seqCtx) {
        std::fprintf(stderr, "llamaref: -p %d or the prompt (%d tokens) plus -n %d exceed the %d cells per sequence (-c)\n",
                     o.prompt, lp, o.gen, seqCtx);
        return false;
    }
    if (o.prompt > static_cast<int>(cp.n_batch) || lp * np > static_cast<int>(cp.n_batch)) {
        std::fprintf(stderr, "llamaref: -p %d or the prompt in %d sequences exceed the batch (%u tokens: -b x parallel)\n",
                     o.prompt, np, cp.n_batch);
        return false;
    }
    b.batch = llama_batch_init(std::max({o.prompt, lp * np, np}), 0, np);
    b.hasBatch = true;
    b.nVocab = llama_vocab_n_tokens(llama_model_get_vocab(model));

    if (o.prompt > 0) {
        result r{np, "pp", o.prompt, {}, {}};
        for (int round = 0; round <= o.reps; round++) {
            double ms = b.pp(text, o.prompt);
            if (ms < 0) {
                std::fprintf(stderr, "llamaref: prompt processing at parallel %d failed\n", np);
                return false;
            }
            if (round > 0) { // round 0 warms the caches and the thread pool
                r.tokS.push_back(o.prompt / (ms / 1000));
                r.p50ms.push_back(ms);
            }
        }
        results->push_back(r);
    }
    if (o.gen > 1) {
        result r{np, "tg", (o.gen - 1) * np, {}, {}};
        std::vector<double> steps;
        for (int round = 0; round <= o.reps; round++) {
            if (!b.tg(text, np, o.gen, &steps)) {
                std::fprintf(stderr, "llamaref: generation at parallel %d failed\n", np);
                return false;
            }
            if (round > 0) {
                double total = 0;
                for (double s : steps) {
                    total += s;
                }
                r.tokS.push_back(r.tokens / (total / 1000));
                r.p50ms.push_back(median(steps));
            }
        }
        results->push_back(r);
    }
    return true;
}

} // namespace

int main(int argc, char **argv) {
    options o;
    if (!parseArgs(argc, argv, &o)) {
        return 2;
    }
    if (o.ctxSeq == 0) {
        o.ctxSeq = std::max(256, o.gen + 128);
    }
    verboseLog = o.verbose;
    llama_log_set(logSink, nullptr);
    llama_backend_init();

    llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0; // CPU only
    mp.use_mmap = true;
    llama_model *model = llama_model_load_from_file(o.model.c_str(), mp);
    if (model == nullptr) {
        std::fprintf(stderr, "llamaref: cannot load %s\n", o.model.c_str());
        return 1;
    }
    const llama_vocab *vocab = llama_model_get_vocab(model);
    bool addBOS = o.bos && llama_vocab_get_add_bos(vocab);
    int n = -llama_tokenize(vocab, o.text.data(), static_cast<int32_t>(o.text.size()), nullptr, 0, addBOS, false);
    std::vector<llama_token> text(std::max(n, 0));
    if (n <= 0 || llama_tokenize(vocab, o.text.data(), static_cast<int32_t>(o.text.size()), text.data(), n, addBOS, false) != n) {
        std::fprintf(stderr, "llamaref: -text gives no tokens\n");
        llama_model_free(model);
        return 2;
    }
    char desc[256];
    llama_model_desc(model, desc, sizeof desc);

    std::printf("llamaref: %s (%s), build %s\n", o.model.c_str(), desc, buildFlags().c_str());
    std::printf("threads %d, ubatch %d, ctx/seq %d, flash attention %s, KV %s%s, embeddings %s, prompt %d tokens, %d rounds\n",
                o.threads, o.ubatch, o.ctxSeq, o.fa.c_str(), o.kv.c_str(), o.unified ? " unified" : "", o.embeddings ? "on" : "off", n, o.reps);
    std::printf("system: %s\n\n", llama_print_system_info());

    std::vector<result> results;
    for (int np : o.parallel) {
        if (!measure(o, model, text, np, &results)) {
            llama_model_free(model);
            return 1;
        }
    }
    llama_model_free(model);

    std::printf("| parallel | test | tokens/round | tok/s | tok/s per sequence | p50 ms (step, or batch) |\n");
    std::printf("|---|---|---|---|---|---|\n");
    for (const result &r : results) {
        double tokS = median(r.tokS);
        std::string name = r.test == "pp" ? "pp" + std::to_string(r.tokens) : "tg" + std::to_string(o.gen);
        // pp decodes one sequence whatever the parallel value.
        double perSeq = r.test == "pp" ? tokS : tokS / r.parallel;
        std::printf("| %d | %s | %d | %.2f | %.2f | %.2f |\n", r.parallel, name.c_str(), r.tokens, tokS, perSeq,
                    median(r.p50ms));
    }
    if (!o.json.empty() && !writeJSON(o, desc, n, results)) {
        return 1;
    }
    llama_backend_free();
    return 0;
}
