/*
 * hdf5_gheap.c - variable-length sequence descriptors checked against the
 * global heap collections they name (format and reasons: hdf5_gheap.h).
 *
 * Collections are read through a 64 KiB window (pread), so the object
 * headers of a collection of many small sequences cost one read, and a
 * large object is stepped over, not read. What is kept of a collection
 * is the size of each object index it holds (8 bytes per index).
 */
#include "hdf5_gheap.h"

#include <errno.h>  /* errno, EINTR */
#include <stdio.h>  /* snprintf */
#include <stdlib.h> /* calloc, free, realloc */
#include <string.h> /* memcmp, memcpy, strerror */
#include <unistd.h> /* pread */

#define GH_SLOTS 256 /* a power of 2: the top 8 bits of a Fibonacci hash */
#define GH_WINDOW ((size_t)64 << 10)
#define GH_ABSENT UINT64_MAX

typedef struct gh_col {
    uint64_t addr;   /* relative address; 0: slot empty */
    uint64_t *size;  /* object index -> its size in bytes, GH_ABSENT if none */
    uint32_t n;      /* indices 0 .. n-1 in size[] */
} gh_col_t;

struct na_gheap {
    int fd;
    uint64_t base, eof;
    unsigned sa, sl;
    uint32_t fbase;
    gh_col_t col[GH_SLOTS];
    uint8_t *win; /* file bytes [wat, wat + wlen) */
    uint64_t wat;
    size_t wlen;
};

na_gheap_t *na_gheap_new(int fd, uint64_t base, uint64_t eof, unsigned sa, unsigned sl,
                         uint32_t fbase)
{
    int ok_size = (sa == 2 || sa == 4 || sa == 8) && (sl == 2 || sl == 4 || sl == 8);
    if (!ok_size || fbase == 0 || fd < 0)
        return NULL;
    na_gheap_t *g = calloc(1, sizeof *g);
    if (g == NULL)
        return NULL;
    g->win = malloc(GH_WINDOW);
    if (g->win == NULL) {
        free(g);
        return NULL;
    }
    g->fd = fd;
    g->base = base;
    g->eof = eof;
    g->sa = sa;
    g->sl = sl;
    g->fbase = fbase;
    return g;
}

void na_gheap_free(na_gheap_t *g)
{
    if (g == NULL)
        return;
    for (size_t i = 0; i < GH_SLOTS; i++)
        free(g->col[i].size);
    free(g->win);
    free(g);
}

size_t na_gheap_desc_size(const na_gheap_t *g) { return 4 + (size_t)g->sa + 4; }

static uint64_t le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = n; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

/* n (<= 16) file bytes at absolute offset `at` into out, through the
 * window. 0, or -1 with msg (a read error; the caller has checked that
 * they lie inside the file). */
static int rd(na_gheap_t *g, uint64_t at, size_t n, uint8_t *out, char *msg, size_t cap)
{
    if (!(at >= g->wat && at - g->wat <= g->wlen && g->wlen - (at - g->wat) >= n)) {
        uint64_t want = g->eof - at < GH_WINDOW ? g->eof - at : GH_WINDOW;
        ssize_t r;
        do
            r = pread(g->fd, g->win, (size_t)want, (off_t)at);
        while (r < 0 && errno == EINTR);
        if (r < (ssize_t)n) {
            snprintf(msg, cap, "reading the global heap at byte %llu: %s",
                     (unsigned long long)at, r < 0 ? strerror(errno) : "the file ended early");
            g->wlen = 0;
            return -1;
        }
        g->wat = at;
        g->wlen = (size_t)r;
    }
    memcpy(out, g->win + (at - g->wat), n);
    return 0;
}

/* Parse the collection at relative address a into slot s. 0, -1 damaged
 * (msg), -2 read error (msg), -3 out of memory (msg). */
static int parse(na_gheap_t *g, gh_col_t *s, uint64_t a, char *msg, size_t cap)
{
    free(s->size);
    s->size = NULL;
    s->n = 0;
    s->addr = 0;
    uint64_t hdr = 8 + g->sl, ohdr = 8 + g->sl;
    if (a > g->eof || g->base > g->eof - a || g->eof - a - g->base < hdr) {
        snprintf(msg, cap, "its global heap collection at address %llu lies past the end of "
                 "the file (a damaged heap ID)", (unsigned long long)a);
        return -1;
    }
    uint64_t at = g->base + a;
    uint8_t h[16];
    if (rd(g, at, (size_t)hdr, h, msg, cap) != 0)
        return -2;
    if (memcmp(h, "GCOL", 4) != 0) {
        snprintf(msg, cap, "bad global heap collection signature at address %llu (a damaged "
                 "heap ID or heap)", (unsigned long long)a);
        return -1;
    }
    if (h[4] != 1) {
        snprintf(msg, cap, "the global heap collection at address %llu has version %u, not 1",
                 (unsigned long long)a, h[4]);
        return -1;
    }
    uint64_t csize = le(h + 8, g->sl);
    if (csize < hdr || csize > g->eof - at) {
        snprintf(msg, cap, "the global heap collection at address %llu says it holds %llu "
                 "bytes, %s (a damaged heap)", (unsigned long long)a,
                 (unsigned long long)csize, csize < hdr ? "less than its header" :
                 "past the end of the file");
        return -1;
    }
    uint32_t n = 0, capn = 0;
    uint64_t *size = NULL;
    for (uint64_t p = hdr; p < csize && csize - p >= ohdr;) {
        uint8_t o[16];
        if (rd(g, at + p, (size_t)ohdr, o, msg, cap) != 0) {
            free(size);
            return -2;
        }
        uint32_t idx = (uint32_t)le(o, 2);
        uint64_t osz = le(o + 8, g->sl), need;
        if (idx == 0) {
            need = osz; /* free space: its size counts its header */
            if (need < ohdr || need > csize - p) {
                snprintf(msg, cap, "the free space of the global heap collection at address "
                         "%llu says %llu bytes (a damaged heap)", (unsigned long long)a,
                         (unsigned long long)osz);
                free(size);
                return -1;
            }
        } else {
            if (osz > csize - p - ohdr || ((osz + 7) & ~(uint64_t)7) > csize - p - ohdr) {
                snprintf(msg, cap, "object %u of the global heap collection at address %llu "
                         "says %llu bytes, more than the collection holds (a damaged heap)",
                         idx, (unsigned long long)a, (unsigned long long)osz);
                free(size);
                return -1;
            }
            need = ohdr + ((osz + 7) & ~(uint64_t)7);
            if (idx >= capn) {
                uint32_t nc = capn ? capn : 64;
                while (nc <= idx)
                    nc *= 2;
                uint64_t *ns = realloc(size, (size_t)nc * sizeof *ns);
                if (ns == NULL) {
                    free(size);
                    snprintf(msg, cap, "out of memory for the global heap collection at "
                             "address %llu", (unsigned long long)a);
                    return -3;
                }
                size = ns;
                capn = nc;
            }
            for (; n <= idx; n++)
                size[n] = GH_ABSENT;
            size[idx] = osz;
        }
        p += need;
    }
    s->size = size;
    s->n = n;
    s->addr = a;
    return 0;
}

uint32_t na_gheap_desc_len(const uint8_t *d) { return (uint32_t)le(d, 4); }

int na_gheap_check(na_gheap_t *g, const uint8_t *d, uint64_t seq, char *msg, size_t cap)
{
    uint64_t len = le(d, 4), a = le(d + 4, g->sa), idx = le(d + 4 + g->sa, 4);
    if (a == 0) { /* a null sequence (libhdf5's H5T__vlen_disk_isnull) */
        if (len == 0)
            return 0;
        snprintf(msg, cap, "sequence %llu: %llu values but no heap object (a damaged "
                 "descriptor)", (unsigned long long)seq, (unsigned long long)len);
        return -1;
    }
    gh_col_t *s = &g->col[(a * 0x9E3779B97F4A7C15u) >> 56]; /* GH_SLOTS 256 */
    if (s->addr != a) {
        char why[300];
        int r = parse(g, s, a, why, sizeof why);
        if (r != 0) {
            snprintf(msg, cap, "sequence %llu: %s", (unsigned long long)seq, why);
            return r;
        }
    }
    if (idx == 0 || idx >= s->n || s->size[idx] == GH_ABSENT) {
        snprintf(msg, cap, "sequence %llu: its heap ID names object %llu of the global heap "
                 "collection at address %llu, which holds no such object (a damaged heap ID)",
                 (unsigned long long)seq, (unsigned long long)idx, (unsigned long long)a);
        return -1;
    }
    if (s->size[idx] != len * g->fbase) {
        snprintf(msg, cap, "sequence %llu: %llu values of %u bytes, but its heap object holds "
                 "%llu bytes (a damaged length)", (unsigned long long)seq,
                 (unsigned long long)len, g->fbase, (unsigned long long)s->size[idx]);
        return -1;
    }
    return 0;
}
