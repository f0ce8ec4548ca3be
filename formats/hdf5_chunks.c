/*
 * hdf5_chunks.c - a chunked dataset's allocated chunks, read from its
 * object header's layout message and its version 1 B-tree (format and
 * reasons: hdf5_chunks.h).
 *
 * Every read is a pread of exactly the bytes parsed, checked against the
 * end of the file first; every count read from the file is bounded before
 * it sizes a buffer or a loop.
 */
#include "hdf5_chunks.h"

#include <errno.h>  /* errno, EINTR */
#include <stdio.h>  /* snprintf */
#include <stdlib.h> /* malloc, realloc, free */
#include <string.h> /* memcmp, strerror */
#include <unistd.h> /* pread */

#define CI_UNDEF(sa) ((sa) == 8 ? UINT64_MAX : (((uint64_t)1 << (8 * (sa))) - 1))
#define CI_HDR_MAX ((uint64_t)64 << 20) /* object header bytes read, in all */
#define CI_LEVELS 64
#define CI_RANK_MAX 32

typedef struct ci {
    int fd;
    uint64_t base, eof;
    unsigned sa, sl, rank;
    uint64_t max, n, cap, nodes, hdr_bytes;
    uint64_t *offs;
    na_h5ci_chunk_t *info;
    uint8_t *buf; /* one node or header chunk */
    size_t buf_cap;
    char *msg;
    size_t mcap;
} ci_t;

static uint64_t le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = n; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

/* n bytes at relative address a into c->buf. 0, -1 (msg: past the end,
 * a read error), -3 out of memory. what names the structure. */
static int rd(ci_t *c, uint64_t a, uint64_t n, const char *what)
{
    uint64_t at = c->base + a;
    if (a == CI_UNDEF(c->sa) || at < a || at > c->eof || n > c->eof - at) {
        snprintf(c->msg, c->mcap, "the %s at address %llu (%llu bytes) lies past the end of "
                 "the file", what, (unsigned long long)a, (unsigned long long)n);
        return -1;
    }
    if (n > c->buf_cap) {
        uint8_t *nb = realloc(c->buf, (size_t)n);
        if (nb == NULL) {
            snprintf(c->msg, c->mcap, "out of memory for %llu bytes of the %s",
                     (unsigned long long)n, what);
            return -3;
        }
        c->buf = nb;
        c->buf_cap = (size_t)n;
    }
    for (uint64_t got = 0; got < n;) {
        ssize_t r = pread(c->fd, c->buf + got, (size_t)(n - got), (off_t)(at + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            snprintf(c->msg, c->mcap, "reading the %s at address %llu: %s", what,
                     (unsigned long long)a, r < 0 ? strerror(errno) : "the file ended early");
            return -1;
        }
        got += (uint64_t)r;
    }
    return 0;
}

/* Append one chunk: its element offsets (rank of them; from a B-tree key
 * k when off is NULL: size, mask, offsets), stored size, mask, address. */
static int add(ci_t *c, const uint8_t *k, const uint64_t *off, uint64_t size, uint32_t mask,
               uint64_t addr)
{
    if (c->n == c->max) { /* libhdf5 disagrees: not a list to keep, nor a finding */
        snprintf(c->msg, c->mcap, "the index lists more than the %llu chunks libhdf5 counts",
                 (unsigned long long)c->max);
        return 1;
    }
    if (c->n == c->cap) {
        uint64_t nc = c->cap ? c->cap * 2 : 1024;
        if (nc > c->max)
            nc = c->max;
        uint64_t *no = realloc(c->offs, (size_t)(nc * c->rank * sizeof *no));
        if (no != NULL)
            c->offs = no;
        na_h5ci_chunk_t *ni = no == NULL ? NULL : realloc(c->info, (size_t)nc * sizeof *ni);
        if (ni == NULL) {
            snprintf(c->msg, c->mcap, "out of memory for a list of %llu chunks",
                     (unsigned long long)nc);
            return -3;
        }
        c->info = ni;
        c->cap = nc;
    }
    for (unsigned d = 0; d < c->rank; d++)
        c->offs[c->n * c->rank + d] = off != NULL ? off[d] : le(k + 8 + 8 * d, 8);
    c->info[c->n].size = off != NULL ? size : le(k, 4);
    c->info[c->n].mask = off != NULL ? mask : (uint32_t)le(k + 4, 4);
    c->info[c->n].addr = addr;
    c->n++;
    return 0;
}

/* The node at address a, of level `level` (-1: the root, any level). */
static int walk(ci_t *c, uint64_t a, int level)
{
    if (++c->nodes > 2 * c->max + 64) {
        snprintf(c->msg, c->mcap, "the B-tree has more nodes than %llu chunks need",
                 (unsigned long long)c->max);
        return -1;
    }
    unsigned sa = c->sa;
    uint64_t head = 8 + 2 * (uint64_t)sa, ksz = 8 + 8 * ((uint64_t)c->rank + 1);
    int r = rd(c, a, head, "chunk B-tree node");
    if (r != 0)
        return r;
    if (memcmp(c->buf, "TREE", 4) != 0 || c->buf[4] != 1) {
        snprintf(c->msg, c->mcap, "the chunk B-tree node at address %llu is not one "
                 "(signature or node type)", (unsigned long long)a);
        return -1;
    }
    int lv = c->buf[5];
    uint64_t used = le(c->buf + 6, 2);
    if (lv >= CI_LEVELS || (level >= 0 && lv != level)) {
        snprintf(c->msg, c->mcap, "the chunk B-tree node at address %llu has level %d%s",
                 (unsigned long long)a, lv, level >= 0 ? ", not its parent's less one" : "");
        return -1;
    }
    /* key 0, child 0, ..., key used-1, child used-1 (the last key unused) */
    uint64_t body = used * (ksz + sa);
    r = rd(c, a + head, body, "chunk B-tree node");
    if (r != 0)
        return r;
    /* children of an inner node are walked after this node's bytes are
     * copied: the walk reuses c->buf */
    uint64_t *kids = NULL;
    if (lv > 0) {
        kids = malloc((size_t)(used ? used : 1) * sizeof *kids);
        if (kids == NULL) {
            snprintf(c->msg, c->mcap, "out of memory for a chunk B-tree node");
            return -3;
        }
    }
    for (uint64_t i = 0; i < used && r == 0; i++) {
        const uint8_t *k = c->buf + i * (ksz + sa);
        uint64_t child = le(k + ksz, sa);
        if (lv == 0)
            r = add(c, k, NULL, 0, 0, child);
        else
            kids[i] = child;
    }
    for (uint64_t i = 0; lv > 0 && i < used && r == 0; i++)
        r = walk(c, kids[i], lv - 1);
    free(kids);
    return r;
}

/* Element i (esz bytes at p) of a fixed array: a chunk unless its
 * address is undefined. ck: the chunk's dims and element size (rank + 1),
 * down: chunks per dim over the maximum dims; client 1: filtered. */
static int fa_elem(ci_t *c, const uint8_t *p, unsigned esz, int client, uint64_t i,
                   const uint64_t *ck, const uint64_t *down, uint64_t cbytes)
{
    uint64_t addr = le(p, c->sa);
    if (addr == CI_UNDEF(c->sa))
        return 0;
    uint64_t off[CI_RANK_MAX];
    for (unsigned d = c->rank; d-- > 0;) {
        off[d] = (i % down[d]) * ck[d];
        i /= down[d];
    }
    uint64_t size = client ? le(p + c->sa, esz - c->sa - 4) : cbytes;
    uint32_t mask = client ? (uint32_t)le(p + esz - 4, 4) : 0;
    return add(c, NULL, off, size, mask, addr);
}

/* A fixed array index (HDF5 File Format Specification 3.0, "Fixed Array
 * Header" and "Fixed Array Data Block"; the chunk of slot i is the i-th
 * in row-major order over the maximum dims' grid, H5Dfarray.c): "FAHD",
 * version 0, client (0 chunks, 1 filtered chunks), element size, page
 * bits, element count (sizeof_length), data block address, checksum; the
 * data block "FADB", version, client, header address, then either the
 * elements and a checksum, or - more elements than 1 << page bits - a
 * bitmap of initialised pages (most significant bit first) and a
 * checksum, the pages following: elements and a checksum each. An
 * element is the chunk's address (undefined: not allocated), for
 * filtered chunks followed by its stored size (element size - sizeof_addr
 * - 4 bytes) and filter mask (4). */
static int farray(ci_t *c, uint64_t a, const uint64_t *ck, const uint64_t *maxdims)
{
    unsigned sa = c->sa, sl = c->sl, rank = c->rank;
    if (maxdims == NULL) {
        snprintf(c->msg, c->mcap, "a fixed array index without the maximum dims");
        return 1;
    }
    int r = rd(c, a, 8 + (uint64_t)sl + sa, "fixed array header");
    if (r != 0)
        return r;
    int client = c->buf[5];
    unsigned esz = c->buf[6], bits = c->buf[7];
    uint64_t nel = le(c->buf + 8, sl), db = le(c->buf + 8 + sl, sa);
    if (memcmp(c->buf, "FAHD", 4) != 0 || c->buf[4] != 0 || client > 1 || bits > 32 ||
        (client == 0 && esz != sa) || (client == 1 && (esz <= sa + 4 || esz > sa + 12))) {
        snprintf(c->msg, c->mcap, "the fixed array header at address %llu is not one",
                 (unsigned long long)a);
        return -1;
    }
    uint64_t down[CI_RANK_MAX], slots = 1, cbytes = ck[rank];
    for (unsigned d = 0; d < rank; d++) {
        down[d] = ck[d] == 0 ? 0 : (maxdims[d] + ck[d] - 1) / ck[d];
        slots = down[d] == 0 || slots <= UINT64_MAX / down[d] ? slots * down[d] : UINT64_MAX;
        cbytes = ck[d] == 0 || cbytes <= UINT64_MAX / ck[d] ? cbytes * ck[d] : UINT64_MAX;
    }
    if (nel != slots || slots == 0) {
        snprintf(c->msg, c->mcap, "a fixed array of %llu elements for %llu chunk slots",
                 (unsigned long long)nel, (unsigned long long)slots);
        return 1;
    }
    if (db == CI_UNDEF(sa))
        return 0;
    uint64_t pre = 6 + (uint64_t)sa, pn = (uint64_t)1 << bits;
    if (nel <= pn) {
        r = rd(c, db, pre + nel * esz, "fixed array data block");
        if (r == 0 && memcmp(c->buf, "FADB", 4) != 0) {
            snprintf(c->msg, c->mcap, "the fixed array data block at address %llu is not one",
                     (unsigned long long)db);
            r = -1;
        }
        /* add() does not touch c->buf */
        for (uint64_t i = 0; r == 0 && i < nel; i++)
            r = fa_elem(c, c->buf + pre + i * esz, esz, client, i, ck, down, cbytes);
        return r;
    }
    uint64_t np = (nel + pn - 1) / pn, bm = (np + 7) / 8;
    r = rd(c, db, pre + bm, "fixed array data block");
    if (r == 0 && memcmp(c->buf, "FADB", 4) != 0) {
        snprintf(c->msg, c->mcap, "the fixed array data block at address %llu is not one",
                 (unsigned long long)db);
        r = -1;
    }
    uint8_t *map = r == 0 ? malloc((size_t)bm) : NULL;
    if (r == 0 && map == NULL) {
        snprintf(c->msg, c->mcap, "out of memory for a fixed array's page bitmap");
        r = -3;
    }
    if (r == 0)
        memcpy(map, c->buf + pre, (size_t)bm);
    uint64_t page0 = db + pre + bm + 4, psize = pn * esz + 4;
    for (uint64_t pg = 0; r == 0 && pg < np; pg++) {
        if (!(map[pg / 8] & (0x80u >> (pg % 8))))
            continue; /* never written: every chunk of the page unallocated */
        uint64_t k = nel - pg * pn < pn ? nel - pg * pn : pn;
        r = rd(c, page0 + pg * psize, k * esz, "fixed array page");
        for (uint64_t i = 0; r == 0 && i < k; i++)
            r = fa_elem(c, c->buf + i * esz, esz, client, pg * pn + i, ck, down, cbytes);
    }
    free(map);
    return r;
}

/* Look through the messages of one header chunk (bytes [p, end) of
 * c->buf, version v) for the layout (*lay, copied: the buffer is reused)
 * and continuations (appended to cont[] / clen[], at most *nc of 64). */
static int messages(ci_t *c, int v, uint64_t p, uint64_t end, int oflags, uint8_t **lay,
                    uint64_t *laylen, uint64_t *cont, uint64_t *clen, int *nc)
{
    uint64_t mh = v == 1 ? 8 : 4 + ((oflags & 0x04) ? 2 : 0);
    while (p + mh <= end) {
        unsigned type = v == 1 ? (unsigned)le(c->buf + p, 2) : c->buf[p];
        uint64_t size = le(c->buf + p + (v == 1 ? 2 : 1), 2);
        if (size > end - p - mh) {
            snprintf(c->msg, c->mcap, "an object header message of %llu bytes runs past its "
                     "chunk", (unsigned long long)size);
            return -1;
        }
        const uint8_t *d = c->buf + p + mh;
        if (type == 0x0008 && *lay == NULL) {
            *lay = malloc(size ? size : 1);
            if (*lay == NULL) {
                snprintf(c->msg, c->mcap, "out of memory for the layout message");
                return -3;
            }
            memcpy(*lay, d, size);
            *laylen = size;
        } else if (type == 0x0010 && size >= (uint64_t)c->sa + c->sl) {
            if (*nc == 64) {
                snprintf(c->msg, c->mcap, "the object header has more than 64 chunks");
                return -1;
            }
            cont[*nc] = le(d, c->sa);
            clen[*nc] = le(d + c->sa, c->sl);
            (*nc)++;
        }
        p += mh + size;
    }
    return 0;
}

/* The layout message of the object header at a: 0 (*lay malloc'd), 1 none
 * found, <0 as rd. */
static int find_layout(ci_t *c, uint64_t a, uint8_t **lay, uint64_t *laylen)
{
    uint64_t cont[64], clen[64];
    int nc = 0, r = rd(c, a, 16, "object header");
    if (r != 0)
        return r;
    int v, oflags = 0;
    uint64_t start, len;
    if (memcmp(c->buf, "OHDR", 4) == 0) {
        v = 2;
        oflags = c->buf[5];
        if (c->buf[4] != 2) {
            snprintf(c->msg, c->mcap, "the object header at address %llu has version %u",
                     (unsigned long long)a, c->buf[4]);
            return -1;
        }
        start = 6 + ((oflags & 0x20) ? 16 : 0) + ((oflags & 0x10) ? 4 : 0);
        unsigned w = 1u << (oflags & 3);
        r = rd(c, a, start + w, "object header");
        if (r != 0)
            return r;
        len = le(c->buf + start, w);
        start += w;
    } else if (c->buf[0] == 1) {
        v = 1;
        start = 16;
        len = le(c->buf + 8, 4);
    } else {
        snprintf(c->msg, c->mcap, "the object header at address %llu is not one",
                 (unsigned long long)a);
        return -1;
    }
    for (int k = -1; k < nc && *lay == NULL; k++) {
        uint64_t at = k < 0 ? a : cont[k], n = k < 0 ? start + len : clen[k];
        uint64_t p = k < 0 ? start : v == 2 ? 4 : 0, end = v == 2 && k >= 0 ? n - 4 : n;
        if (n > CI_HDR_MAX - c->hdr_bytes || (v == 2 && k >= 0 && n < 8)) {
            snprintf(c->msg, c->mcap, "the object header at address %llu has a chunk of %llu "
                     "bytes", (unsigned long long)a, (unsigned long long)n);
            return -1;
        }
        c->hdr_bytes += n;
        r = rd(c, at, n, "object header");
        if (r == 0 && v == 2 && k >= 0 && memcmp(c->buf, "OCHK", 4) != 0) {
            snprintf(c->msg, c->mcap, "the object header's continuation at address %llu is "
                     "not one", (unsigned long long)at);
            r = -1;
        }
        if (r == 0)
            r = messages(c, v, p, end, oflags, lay, laylen, cont, clen, &nc);
        if (r != 0)
            return r;
    }
    return *lay != NULL ? 0 : 1;
}

static int span_cmp(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

uint64_t na_h5_spans_merge(uint64_t (*s)[2], uint64_t n)
{
    if (n > 1) /* qsort of NULL is undefined even for 0 elements */
        qsort(s, (size_t)n, sizeof *s, span_cmp);
    uint64_t m = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (m > 0 && s[i][0] <= s[m - 1][1] + 1) {
            if (s[i][1] > s[m - 1][1])
                s[m - 1][1] = s[i][1];
        } else {
            s[m][0] = s[i][0];
            s[m][1] = s[i][1];
            m++;
        }
    }
    return m;
}

uint64_t na_h5_span_find(const uint64_t (*s)[2], uint64_t n, uint64_t x)
{
    uint64_t a = 0, b = n;
    while (a < b) {
        uint64_t m = a + (b - a) / 2;
        if (s[m][1] < x)
            a = m + 1;
        else
            b = m;
    }
    return a;
}

int na_h5ci_list(int fd, uint64_t base, uint64_t eof, unsigned sa, unsigned sl, uint64_t ohdr,
                 unsigned rank, const uint64_t *maxdims, uint64_t max, uint64_t **offs,
                 na_h5ci_chunk_t **info, uint64_t *n, char *msg, size_t cap)
{
    *offs = NULL;
    *info = NULL;
    *n = 0;
    if (cap > 0)
        msg[0] = '\0';
    int sizes_ok = (sa == 2 || sa == 4 || sa == 8) && (sl == 2 || sl == 4 || sl == 8);
    if (!sizes_ok || rank == 0 || rank > CI_RANK_MAX || fd < 0) {
        snprintf(msg, cap, "sizes this walker does not read");
        return 1;
    }
    ci_t c = {.fd = fd, .base = base, .eof = eof, .sa = sa, .sl = sl, .rank = rank,
              .max = max, .msg = msg, .mcap = cap};
    uint8_t *lay = NULL;
    uint64_t ll = 0;
    int r = find_layout(&c, ohdr, &lay, &ll);
    if (r == 1)
        snprintf(msg, cap, "no layout message");
    else if (r == -1)
        r = 1; /* libhdf5 opened this header: a reading of ours it disagrees with */
    uint64_t tree = 0;
    int fa = 0;
    uint64_t ck[CI_RANK_MAX + 1];
    if (r == 0 && ll >= 5 && lay[0] == 4 && lay[1] == 2) {
        /* version 4: class, flags, dimensionality, the dims' byte width,
         * the dims (the last: the element size), the index type, its
         * parameters, its address */
        unsigned nd = lay[3], w = lay[4], at = 5 + nd * w;
        int ok = nd == rank + 1 && w >= 1 && w <= 8 && ll >= (uint64_t)at + 2 + sa;
        for (unsigned d = 0; ok && d < nd; d++)
            ck[d] = le(lay + 5 + d * w, w);
        if (!ok) {
            snprintf(msg, cap, "a version 4 chunked layout of %u dimensions for rank %u", nd,
                     rank);
            r = 1;
        } else if (lay[at] != 3) {
            snprintf(msg, cap, "a version 4 layout's index of type %u", lay[at]);
            r = 1;
        } else {
            fa = 1;
            tree = le(lay + at + 2, sa); /* after the page bits */
        }
    } else if (r == 0) {
        unsigned ver = ll > 0 ? lay[0] : 0, cls = 0, dims = 0;
        uint64_t at = 0;
        if ((ver == 1 || ver == 2) && ll >= 8) {
            dims = lay[1];
            cls = lay[2];
            at = 8;
        } else if (ver == 3 && ll >= 3) {
            cls = lay[1];
            dims = lay[2];
            at = 3;
        }
        if (ver < 1 || ver > 3) {
            snprintf(msg, cap, "a version %u layout message", ver);
            r = 1;
        } else if (cls != 2 || ll < at + sa) {
            snprintf(msg, cap, "a layout of class %u", cls);
            r = 1;
        } else if (dims != rank + 1) {
            snprintf(msg, cap, "a chunked layout of %u dimensions for rank %u", dims, rank);
            r = 1;
        } else {
            tree = le(lay + at, sa);
        }
    }
    free(lay);
    if (r == 0 && fa && tree != CI_UNDEF(sa))
        r = farray(&c, tree, ck, maxdims);
    else if (r == 0 && tree != CI_UNDEF(sa))
        r = walk(&c, tree, -1);
    free(c.buf);
    if (r != 0) {
        free(c.offs);
        free(c.info);
        return r;
    }
    *offs = c.offs;
    *info = c.info;
    *n = c.n;
    return 0;
}
