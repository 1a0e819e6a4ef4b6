// End-to-end check of the kernels on real GGUF weights, run by bench/kernels/arm.sh under qemu: a whole transformer
// forward (llama and qwen3 architectures: RMSNorm, Q/K/V products, QK-norm, RoPE, attention over an F16 cache,
// SwiGLU, residuals, output matrix) written in C over the public CKernels API, for each shared test model
// (RUNANYWHERE_TESTDATA/models and its references/). Each model runs twice, on the scalar path (feature mask 0) and on
// the best path of this CPU: the prompt as one batch (the multi-row kernels), then 8 greedy tokens one at a time
// (the row·vector kernels). Fails when the last prompt position's logits differ by more than 1e-3 of max|logit|,
// when the greedy tokens differ, or when the last prompt position's argmax differs from llama.cpp's in the shared
// reference (the forward's own fidelity; this is not the engine, whose Swift reference tests run on x86 only).
#include "ckernels.h"
#include "ra_ops.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { const char *name; size_t name_len; int type; int64_t ne[4]; const uint8_t *data; } tensor;
typedef struct { uint8_t *buf; size_t size; tensor *t; uint64_t nt; char arch[32]; int64_t n_embd, n_layer, n_head, n_head_kv, head_dim, n_ff;
                 float eps, rope_base; } model;

static const uint8_t *g_p, *g_end;
static int rd(void *dst, size_t n) { if ((size_t)(g_end - g_p) < n) return 0; memcpy(dst, g_p, n); g_p += n; return 1; }
static uint64_t rd_u64(void) { uint64_t v = 0; rd(&v, 8); return v; }
static uint32_t rd_u32(void) { uint32_t v = 0; rd(&v, 4); return v; }

// Skips one metadata value of type vt; returns its numeric value (0 for strings and arrays).
static double skip_value(uint32_t vt, const char **str, uint64_t *slen) {
    static const int sizes[13] = { 1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8 };
    if (vt == 8) { const uint64_t n = rd_u64(); if (str) { *str = (const char *)g_p; *slen = n; } g_p += n; return 0; }
    if (vt == 9) { const uint32_t et = rd_u32(); const uint64_t n = rd_u64(); for (uint64_t i = 0; i < n && g_p < g_end; i++) skip_value(et, NULL, NULL); return 0; }
    if (vt > 12) { g_p = g_end; return 0; }
    uint8_t b[8] = {0};
    rd(b, (size_t)sizes[vt]);
    switch (vt) {
    case 0: return b[0]; case 1: return (int8_t)b[0]; case 7: return b[0];
    case 2: { uint16_t v; memcpy(&v, b, 2); return v; } case 3: { int16_t v; memcpy(&v, b, 2); return v; }
    case 4: { uint32_t v; memcpy(&v, b, 4); return v; } case 5: { int32_t v; memcpy(&v, b, 4); return v; }
    case 6: { float v; memcpy(&v, b, 4); return v; } case 10: { uint64_t v; memcpy(&v, b, 8); return (double)v; }
    case 11: { int64_t v; memcpy(&v, b, 8); return (double)v; } default: { double v; memcpy(&v, b, 8); return v; }
    }
}

static int load(const char *path, model *m) {
    memset(m, 0, sizeof *m);
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    fseek(f, 0, SEEK_END);
    m->size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    m->buf = malloc(m->size);
    if (!m->buf || fread(m->buf, 1, m->size, f) != m->size) { fclose(f); return 0; }
    fclose(f);
    g_p = m->buf; g_end = m->buf + m->size;
    if (rd_u32() != 0x46554747u || rd_u32() < 2) return 0;
    m->nt = rd_u64();
    const uint64_t nkv = rd_u64();
    uint64_t align = 32;
    m->eps = 1e-5f; m->rope_base = 10000.0f;
    for (uint64_t i = 0; i < nkv && g_p < g_end; i++) {
        const uint64_t kl = rd_u64();
        char key[128] = {0};
        memcpy(key, g_p, kl < 127 ? kl : 127);
        g_p += kl;
        const uint32_t vt = rd_u32();
        const char *s = NULL; uint64_t sl = 0;
        const double v = skip_value(vt, &s, &sl);
        const char *dot = strchr(key, '.');
        const char *k = dot ? dot + 1 : key;
        if (!strcmp(key, "general.architecture") && s) snprintf(m->arch, sizeof m->arch, "%.*s", (int)sl, s);
        else if (!strcmp(key, "general.alignment")) align = (uint64_t)v;
        else if (!strcmp(k, "embedding_length")) m->n_embd = (int64_t)v;
        else if (!strcmp(k, "block_count")) m->n_layer = (int64_t)v;
        else if (!strcmp(k, "feed_forward_length")) m->n_ff = (int64_t)v;
        else if (!strcmp(k, "attention.head_count")) m->n_head = (int64_t)v;
        else if (!strcmp(k, "attention.head_count_kv")) m->n_head_kv = (int64_t)v;
        else if (!strcmp(k, "attention.key_length")) m->head_dim = (int64_t)v;
        else if (!strcmp(k, "attention.layer_norm_rms_epsilon")) m->eps = (float)v;
        else if (!strcmp(k, "rope.freq_base")) m->rope_base = (float)v;
    }
    m->t = calloc(m->nt, sizeof(tensor));
    uint64_t *off = calloc(m->nt, 8);
    for (uint64_t i = 0; i < m->nt && g_p < g_end; i++) {
        m->t[i].name_len = rd_u64();
        m->t[i].name = (const char *)g_p;
        g_p += m->t[i].name_len;
        const uint32_t nd = rd_u32();
        for (int d = 0; d < 4; d++) m->t[i].ne[d] = 1;
        for (uint32_t d = 0; d < nd && d < 4; d++) m->t[i].ne[d] = (int64_t)rd_u64();
        m->t[i].type = (int)rd_u32();
        off[i] = rd_u64();
    }
    const uint64_t base = ((uint64_t)(g_p - m->buf) + align - 1) / align * align;
    for (uint64_t i = 0; i < m->nt; i++) m->t[i].data = m->buf + base + off[i];
    free(off);
    if (!m->n_head_kv) m->n_head_kv = m->n_head;
    if (!m->head_dim && m->n_head) m->head_dim = m->n_embd / m->n_head;
    return g_p < g_end && m->n_embd > 0 && m->n_layer > 0 && m->n_head > 0;
}

static const tensor *find(const model *m, const char *name) {
    for (uint64_t i = 0; i < m->nt; i++)
        if (m->t[i].name_len == strlen(name) && !memcmp(m->t[i].name, name, m->t[i].name_len)) return &m->t[i];
    return NULL;
}

static const tensor *layer_t(const model *m, int64_t l, const char *what) {
    char name[96];
    snprintf(name, sizeof name, "blk.%lld.%s", (long long)l, what);
    return find(m, name);
}

// out[b * rows + r] = W · x[b] for nb float rows x (quantized here to the weight's activation format).
static void matmul(const tensor *w, const float *x, int64_t nb, float *out) {
    const int64_t n = w->ne[0], rows = w->ne[1];
    const int xt = ra_vec_dot_type(w->type);
    const int64_t xr = ra_row_bytes(xt, n);
    uint8_t *q = malloc((size_t)(xr * nb));
    for (int64_t b = 0; b < nb; b++) ra_quantize_row(xt, x + b * n, q + b * xr, n);
    ra_matmul_rows(w->type, w->data, n, q, nb, out, rows, 0, rows);
    free(q);
}

typedef struct { uint16_t *k, *v; int64_t n_ctx; } kv_cache;

// Runs tokens [pos0, pos0 + nt) and writes the logits of the last one (n_vocab floats). Returns 0 on a missing tensor.
static int forward(const model *m, kv_cache *c, const int32_t *tok, int64_t nt, int64_t pos0, float *logits) {
    const int64_t E = m->n_embd, H = m->n_head, HK = m->n_head_kv, D = m->head_dim, QD = H * D, KD = HK * D;
    const int qwen = !strcmp(m->arch, "qwen3");
    const tensor *emb = find(m, "token_embd.weight"), *outw = find(m, "output.weight"), *onorm = find(m, "output_norm.weight");
    if (!emb || !onorm) return 0;
    if (!outw) outw = emb;
    const int64_t F = layer_t(m, 0, "ffn_gate.weight") ? layer_t(m, 0, "ffn_gate.weight")->ne[1] : 0;
    float *x = malloc((size_t)(nt * E) * 4), *h = malloc((size_t)(nt * E) * 4), *q = malloc((size_t)(nt * QD) * 4);
    float *k = malloc((size_t)(nt * KD) * 4), *v = malloc((size_t)(nt * KD) * 4), *att = malloc((size_t)(nt * QD) * 4);
    float *g = malloc((size_t)(nt * F) * 4), *u = malloc((size_t)(nt * F) * 4), *o = malloc((size_t)(nt * E) * 4);
    float *scratch = malloc((size_t)ra_attention_scratch_floats(1, c->n_ctx, D, H) * 4);
    int32_t *pos = malloc((size_t)nt * 4);
    const int64_t erow = ra_row_bytes(emb->type, E);
    for (int64_t t = 0; t < nt; t++) { ra_dequantize_row(emb->type, emb->data + tok[t] * erow, x + t * E, E); pos[t] = (int32_t)(pos0 + t); }
    int ok = 1;
    for (int64_t l = 0; l < m->n_layer && ok; l++) {
        const tensor *an = layer_t(m, l, "attn_norm.weight"), *wq = layer_t(m, l, "attn_q.weight"), *wk = layer_t(m, l, "attn_k.weight");
        const tensor *wv = layer_t(m, l, "attn_v.weight"), *wo = layer_t(m, l, "attn_output.weight"), *fn = layer_t(m, l, "ffn_norm.weight");
        const tensor *wg = layer_t(m, l, "ffn_gate.weight"), *wu = layer_t(m, l, "ffn_up.weight"), *wd = layer_t(m, l, "ffn_down.weight");
        if (!an || !wq || !wk || !wv || !wo || !fn || !wg || !wu || !wd) { ok = 0; break; }
        ra_rms_norm(NULL, x, (const float *)(const void *)an->data, h, E, nt, m->eps);
        matmul(wq, h, nt, q); matmul(wk, h, nt, k); matmul(wv, h, nt, v);
        if (qwen) {
            const tensor *qn = layer_t(m, l, "attn_q_norm.weight"), *kn = layer_t(m, l, "attn_k_norm.weight");
            if (!qn || !kn) { ok = 0; break; }
            ra_rms_norm_heads(NULL, q, (const float *)(const void *)qn->data, nt, QD, H, D, m->eps);
            ra_rms_norm_heads(NULL, k, (const float *)(const void *)kn->data, nt, KD, HK, D, m->eps);
        }
        ra_rope(NULL, q, nt, QD, H, D, pos, (int)D, m->rope_base, 1.0f, NULL, qwen);
        ra_rope(NULL, k, nt, KD, HK, D, pos, (int)D, m->rope_base, 1.0f, NULL, qwen);
        uint16_t *kc = c->k + l * c->n_ctx * KD, *vc = c->v + l * c->n_ctx * KD;
        ra_store_f16_rows(k, KD, kc + pos0 * KD, KD, KD, nt);
        ra_store_f16_rows(v, KD, vc + pos0 * KD, KD, KD, nt);
        ra_attention_params p = { q, QD, kc, vc, KD, att, QD, nt, pos0, 0, H, HK, D, 1.0f / sqrtf((float)D), scratch };
        ra_attention(NULL, &p);
        matmul(wo, att, nt, o);
        ra_add(NULL, x, o, nt * E);
        ra_rms_norm(NULL, x, (const float *)(const void *)fn->data, h, E, nt, m->eps);
        matmul(wg, h, nt, g); matmul(wu, h, nt, u);
        ra_silu_mul(NULL, g, u, nt * F);
        matmul(wd, g, nt, o);
        ra_add(NULL, x, o, nt * E);
    }
    if (ok) {
        ra_rms_norm(NULL, x + (nt - 1) * E, (const float *)(const void *)onorm->data, h, E, 1, m->eps);
        matmul(outw, h, 1, logits);
    }
    free(x); free(h); free(q); free(k); free(v); free(att); free(g); free(u); free(o); free(scratch); free(pos);
    return ok;
}

// Parses the first prompt's ids and prompt_argmax's last value out of a reference JSON (no JSON library).
static int reference(const char *path, int32_t *ids, int *nids, int32_t *last_argmax) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    static char buf[1 << 16];
    const size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strstr(buf, "\"prompt_ids\"");
    char *a = strstr(buf, "\"prompt_argmax\"");
    if (!p || !a) return 0;
    p = strchr(p, '[');
    *nids = 0;
    while (p && *p != ']' && *nids < 64) {
        ids[(*nids)++] = (int32_t)strtol(p + 1, &p, 10);
        while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') p++;
    }
    a = strchr(a, ']');
    while (a > buf && a[-1] != ',' && a[-1] != '[') a--;
    *last_argmax = (int32_t)strtol(a, NULL, 10);
    return *nids > 0;
}

static int64_t argmax(const float *x, int64_t n) { int64_t b = 0; for (int64_t i = 1; i < n; i++) if (x[i] > x[b]) b = i; return b; }

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : getenv("RUNANYWHERE_TESTDATA");
    static const char *models[] = { "stories260K", "tiny-qwen3-f16", "tiny-qwen3-q8_0", "tiny-llama-spm-q4_0",
                                    "tiny-llama-spm-q4_k_m", "tiny-llama-spm-q5_k_m", "tiny-llama-spm-q6_k" };
    enum { GEN = 8 };
    if (!dir) { printf("forward: no test data directory (argument or RUNANYWHERE_TESTDATA)\n"); return 2; }
    int failed = 0, ran = 0;
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        char path[1024], ref[1024];
        snprintf(path, sizeof path, "%s/models/%s.gguf", dir, models[i]);
        snprintf(ref, sizeof ref, "%s/references/%s.json", dir, models[i]);
        model m;
        int32_t ids[64 + GEN], want = -1;
        int nids = 0;
        if (!load(path, &m) || !reference(ref, ids, &nids, &want)) { printf("%-24s skipped: cannot read %s or its reference\n", models[i], path); continue; }
        const tensor *outw = find(&m, "output.weight") ? find(&m, "output.weight") : find(&m, "token_embd.weight");
        const int64_t nv = outw ? outw->ne[1] : 0, n_ctx = nids + GEN, KD = m.n_head_kv * m.head_dim;
        float *logits[2] = { malloc((size_t)nv * 4), malloc((size_t)nv * 4) };
        int32_t gen[2][GEN];
        int ok = nv > 0;
        for (int p = 0; p < 2 && ok; p++) {
            ra_set_cpu_features_mask(p == 0 ? 0 : -1);
            kv_cache c = { calloc((size_t)(m.n_layer * n_ctx * KD), 2), calloc((size_t)(m.n_layer * n_ctx * KD), 2), n_ctx };
            ok = forward(&m, &c, ids, nids, 0, logits[p]);
            float *l = malloc((size_t)nv * 4);
            memcpy(l, logits[p], (size_t)nv * 4);
            for (int t = 0; t < GEN && ok; t++) {
                gen[p][t] = (int32_t)argmax(l, nv);
                ok = forward(&m, &c, &gen[p][t], 1, nids + t, l);
            }
            free(l); free(c.k); free(c.v);
        }
        ra_set_cpu_features_mask(-1);
        if (!ok) { printf("%-24s FAIL: a tensor the forward needs is missing\n", models[i]); failed = 1; goto next; }
        double scale = 0, worst = 0;
        for (int64_t j = 0; j < nv; j++) scale = fmax(scale, fabs(logits[0][j]));
        for (int64_t j = 0; j < nv; j++) {
            const double r = fabs((double)logits[1][j] - logits[0][j]) / (scale + 1e-30);
            if (!(r <= worst)) worst = r == r ? r : INFINITY;
        }
        const int same = !memcmp(gen[0], gen[1], sizeof gen[0]);
        const int fail = !(worst <= 1e-3) || !same || argmax(logits[0], nv) != want || argmax(logits[1], nv) != want;
        printf("%-24s %-13s logits max diff %.2g of max|logit| %.3g, %d greedy tokens %s; last prompt argmax %d, llama.cpp %d%s  %s\n",
               models[i], ra_kernel_path_name(ra_kernel_path()), worst, scale, GEN, same ? "equal" : "DIFFER",
               (int)argmax(logits[0], nv), (int)want, argmax(logits[0], nv) == want ? "" : " (differs)", fail ? "FAIL" : "ok");
        failed |= fail;
        ran++;
    next:
        free(logits[0]); free(logits[1]); free(m.buf); free(m.t);
    }
    printf("forward: %s (%d models)\n", failed ? "FAIL" : ran ? "NEON and scalar agree" : "nothing ran", ran);
    return failed ? 1 : ran ? 0 : 2;
}
