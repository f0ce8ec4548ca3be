/*
 * test_hdf5_chunks.c - the chunk list read from a dataset's object header
 * and version 1 B-tree (formats/hdf5_chunks.c, issue 4). Each test writes
 * a small file by the rules of the HDF5 File Format Specification 3.0
 * (object headers versions 1 and 2 with a continuation, the data layout
 * message, a two-level chunk B-tree of three chunks of a rank-2 dataset)
 * and checks the list, or the refusal and its message for each kind of
 * damage: wrong levels (a cycle), a node past the end, a bad signature,
 * more chunks than libhdf5 counts, a continuation loop, layouts this
 * walker does not read (1: the header parts libhdf5 has opened, which
 * are not findings; -1: the index's own damage). The CLI test tests/cli/hdf5_sparse_many.sh runs
 * it on files h5py wrote.
 */
#include <setjmp.h> /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>  /* snprintf */
#include <stdlib.h> /* mkstemp, free */
#include <string.h> /* memcpy, memset, strstr */
#include <unistd.h> /* write, close, unlink */

#include "hdf5_chunks.h"

#define FSIZE 0x6000u
#define OH 0x100u   /* object header */
#define CB 0x300u   /* its continuation */
#define ROOT 0x400u /* B-tree root, level 1 */
#define L1 0x800u   /* leaves */
#define L2 0xA00u
#define KSZ 32u     /* key: size 4, mask 4, 3 offsets of 8 (rank 2 + 1) */
#define UNDEF UINT64_MAX

typedef struct fx {
    int fd;
    char path[64];
    uint8_t b[FSIZE];
} fx_t;

static void put(uint8_t *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* A key of a chunk: stored size, filter mask, offsets (r, c, 0). */
static void key(uint8_t *p, uint32_t size, uint32_t mask, uint64_t r, uint64_t c)
{
    put(p, size, 4);
    put(p + 4, mask, 4);
    put(p + 8, r, 8);
    put(p + 16, c, 8);
    put(p + 24, 0, 8);
}

/* A node header at b + at: level, entries; keys and children follow. */
static uint8_t *node(uint8_t *b, uint64_t at, int level, int used)
{
    uint8_t *p = b + at;
    memcpy(p, "TREE", 4);
    p[4] = 1;
    p[5] = (uint8_t)level;
    put(p + 6, (uint64_t)used, 2);
    put(p + 8, UNDEF, 8);
    put(p + 16, UNDEF, 8);
    return p + 24;
}

/* The layout message's data (version 3, chunked, chunk 4 x 5, 4-byte
 * elements) at p; its size (27). */
static size_t layout(uint8_t *p, unsigned ver, unsigned cls, unsigned dims, uint64_t tree)
{
    p[0] = (uint8_t)ver;
    p[1] = (uint8_t)cls;
    p[2] = (uint8_t)dims;
    put(p + 3, tree, 8);
    put(p + 11, 4, 4);
    put(p + 15, 5, 4);
    put(p + 19, 4, 4);
    put(p + 23, 4, 4);
    return 27;
}

/* The file: a version 1 header whose continuation holds the layout, and
 * the tree: root (level 1) -> L1 with chunks (0,0) and (0,5), L2 with
 * (4,0). */
static void make(fx_t *f, unsigned lver, unsigned cls, unsigned dims)
{
    memset(f->b, 0, sizeof f->b);
    uint8_t *h = f->b + OH;
    h[0] = 1;
    put(h + 2, 2, 2);  /* messages */
    put(h + 4, 1, 4);  /* reference count */
    put(h + 8, 48, 4); /* chunk 0: a NIL message of 16, a continuation of 16 */
    uint8_t *m = h + 16;
    put(m, 0, 2);
    put(m + 2, 16, 2);
    m += 24;
    put(m, 0x10, 2);
    put(m + 2, 16, 2);
    put(m + 8, CB, 8);
    put(m + 16, 40, 8);
    uint8_t *c = f->b + CB;
    put(c, 8, 2);
    put(c + 2, 32, 2);
    layout(c + 8, lver, cls, dims, ROOT);
    uint8_t *p = node(f->b, ROOT, 1, 2);
    key(p, 0, 0, 0, 0);
    put(p + KSZ, L1, 8);
    key(p + KSZ + 8, 0, 0, 4, 0);
    put(p + 2 * KSZ + 8, L2, 8);
    key(p + 2 * (KSZ + 8), 0, 0, 8, 0);
    p = node(f->b, L1, 0, 2);
    key(p, 100, 0, 0, 0);
    put(p + KSZ, 0x2000, 8);
    key(p + KSZ + 8, 90, 1, 0, 5);
    put(p + 2 * KSZ + 8, 0x3000, 8);
    key(p + 2 * (KSZ + 8), 0, 0, 4, 0);
    p = node(f->b, L2, 0, 1);
    key(p, 80, 0, 4, 0);
    put(p + KSZ, 0x4000, 8);
    key(p + KSZ + 8, 0, 0, 8, 0);
}

static void save(fx_t *f)
{
    snprintf(f->path, sizeof f->path, "/tmp/test_h5ci_XXXXXX");
    f->fd = mkstemp(f->path);
    assert_true(f->fd >= 0);
    assert_int_equal(write(f->fd, f->b, sizeof f->b), (ssize_t)sizeof f->b);
}

static void done(fx_t *f)
{
    close(f->fd);
    unlink(f->path);
}

static const uint64_t *g_maxdims; /* for a fixed array index */

static int list(fx_t *f, uint64_t base, uint64_t max, uint64_t **o, na_h5ci_chunk_t **in,
                uint64_t *n, char *msg, size_t cap)
{
    save(f);
    int r = na_h5ci_list(f->fd, base, sizeof f->b, 8, 8, OH - base, 2, g_maxdims, max, o, in, n,
                         msg, cap);
    done(f);
    return r;
}

static void expect_three(const uint64_t *o, const na_h5ci_chunk_t *in, uint64_t n)
{
    assert_int_equal(n, 3);
    const uint64_t off[6] = {0, 0, 0, 5, 4, 0};
    for (int i = 0; i < 6; i++)
        assert_int_equal(o[i], off[i]);
    assert_int_equal(in[0].size, 100);
    assert_int_equal(in[0].mask, 0);
    assert_int_equal(in[0].addr, 0x2000);
    assert_int_equal(in[1].size, 90);
    assert_int_equal(in[1].mask, 1);
    assert_int_equal(in[1].addr, 0x3000);
    assert_int_equal(in[2].size, 80);
    assert_int_equal(in[2].addr, 0x4000);
}

static void test_v1_header(void **state)
{
    (void)state;
    static fx_t f;
    make(&f, 3, 2, 3);
    uint64_t *o, n;
    na_h5ci_chunk_t *in;
    char msg[300];
    assert_int_equal(list(&f, 0, 3, &o, &in, &n, msg, sizeof msg), 0);
    expect_three(o, in, n);
    free(o);
    free(in);
    /* a layout of version 1 (dimensionality, class, 5 reserved, address) */
    make(&f, 1, 0, 0);
    uint8_t *l = f.b + CB + 8;
    l[1] = 3;
    l[2] = 2;
    put(l + 8, ROOT, 8);
    assert_int_equal(list(&f, 0, 3, &o, &in, &n, msg, sizeof msg), 0);
    expect_three(o, in, n);
    free(o);
    free(in);
}

/* The same tree under a version 2 header: "OHDR", flags 0x05 (chunk 0
 * size in 2 bytes, creation order in every message), a continuation
 * "OCHK" chunk that holds the layout. Addresses relative to a base of
 * 256 bytes (a user block). */
static void test_v2_header_and_base(void **state)
{
    (void)state;
    static fx_t f;
    make(&f, 3, 2, 3);
    uint8_t *h = f.b + OH;
    memset(h, 0, 0x200);
    memcpy(h, "OHDR", 4);
    h[4] = 2;
    h[5] = 0x05;
    put(h + 6, 6 + 16, 2); /* one continuation message */
    uint8_t *m = h + 8;
    m[0] = 0x10;
    put(m + 1, 16, 2);
    put(m + 6, CB, 8); /* relative: the base is 0 here */
    put(m + 14, 4 + 6 + 27 + 4, 8);
    uint8_t *c = f.b + CB;
    memset(c, 0, 64);
    memcpy(c, "OCHK", 4);
    c[4] = 8;
    put(c + 5, 27, 2);
    layout(c + 10, 3, 2, 3, ROOT);
    uint64_t *o, n;
    na_h5ci_chunk_t *in;
    char msg[300];
    assert_int_equal(list(&f, 0, 3, &o, &in, &n, msg, sizeof msg), 0);
    expect_three(o, in, n);
    free(o);
    free(in);
    /* with a base of 256 every address is 256 less */
    put(m + 6, CB - 256, 8);
    put(c + 10 + 3, ROOT - 256, 8);
    put(f.b + ROOT + 24 + KSZ, L1 - 256, 8);
    put(f.b + ROOT + 24 + 2 * KSZ + 8, L2 - 256, 8);
    assert_int_equal(list(&f, 256, 3, &o, &in, &n, msg, sizeof msg), 0);
    assert_int_equal(n, 3);
    free(o);
    free(in);
}

#define FAHD 0x1000u
#define FADB 0x1100u

/* A version 4 layout with a fixed array index (chunk 4 x 5 of 4-byte
 * elements, page bits `bits`, the header at FAHD) in place of the
 * version 3 one, and the array's header: `nel` elements, data block at
 * FADB. Returns the data block's bytes. */
static uint8_t *fixed_array(fx_t *f, unsigned type, unsigned bits, uint64_t nel)
{
    uint8_t *l = f->b + CB + 8;
    memset(l, 0, 32);
    l[0] = 4;
    l[1] = 2;
    l[3] = 3; /* dimensionality */
    l[4] = 4; /* bytes per dim */
    put(l + 5, 4, 4);
    put(l + 9, 5, 4);
    put(l + 13, 4, 4);
    l[17] = (uint8_t)type;
    l[18] = (uint8_t)bits;
    put(l + 19, FAHD, 8);
    uint8_t *h = f->b + FAHD;
    memcpy(h, "FAHD", 4);
    h[6] = 8; /* element: an address */
    h[7] = (uint8_t)bits;
    put(h + 8, nel, 8);
    put(h + 16, FADB, 8);
    uint8_t *d = f->b + FADB;
    memcpy(d, "FADB", 4);
    put(d + 6, FAHD, 8);
    return d;
}

/* Dataset [8, 10] in chunks of 4 x 5: 4 slots, (0,0) and (4,5) written,
 * in one data block and in pages of 2 (page 0 never written). */
static void test_fixed_array(void **state)
{
    (void)state;
    static fx_t f;
    uint64_t *o, n;
    na_h5ci_chunk_t *in;
    char msg[300];
    const uint64_t maxd[2] = {8, 10};
    g_maxdims = maxd;
    make(&f, 3, 2, 3);
    uint8_t *d = fixed_array(&f, 3, 10, 4);
    put(d + 14, 0x2000, 8);
    put(d + 22, UNDEF, 8);
    put(d + 30, UNDEF, 8);
    put(d + 38, 0x4000, 8);
    assert_int_equal(list(&f, 0, 4, &o, &in, &n, msg, sizeof msg), 0);
    assert_int_equal(n, 2);
    assert_int_equal(o[0], 0);
    assert_int_equal(o[1], 0);
    assert_int_equal(o[2], 4);
    assert_int_equal(o[3], 5);
    assert_int_equal(in[0].addr, 0x2000);
    assert_int_equal(in[0].size, 80); /* 4 x 5 x 4 bytes: not filtered */
    assert_int_equal(in[1].addr, 0x4000);
    free(o);
    free(in);
    /* paged: 2 elements a page, a bitmap of 1 byte, pages after the
     * block's checksum, each of 2 elements and a checksum */
    make(&f, 3, 2, 3);
    d = fixed_array(&f, 3, 1, 4);
    d[14] = 0x40; /* page 1 only (most significant bit first) */
    uint8_t *p1 = d + 14 + 1 + 4 + (2 * 8 + 4);
    put(p1, 0x5000, 8);
    put(p1 + 8, UNDEF, 8);
    put(d + 14 + 1 + 4, 0x6000, 8); /* page 0: not initialised, not read */
    assert_int_equal(list(&f, 0, 4, &o, &in, &n, msg, sizeof msg), 0);
    assert_int_equal(n, 1);
    assert_int_equal(o[0], 4); /* slot 2 */
    assert_int_equal(o[1], 0);
    assert_int_equal(in[0].addr, 0x5000);
    free(o);
    free(in);
    /* not read: an element count that is not the grid's, another index
     * type, no maximum dims; damaged: a bad signature */
    make(&f, 3, 2, 3);
    fixed_array(&f, 3, 10, 6);
    assert_int_equal(list(&f, 0, 4, &o, &in, &n, msg, sizeof msg), 1);
    assert_string_equal(msg, "a fixed array of 6 elements for 4 chunk slots");
    make(&f, 3, 2, 3);
    fixed_array(&f, 4, 10, 4);
    assert_int_equal(list(&f, 0, 4, &o, &in, &n, msg, sizeof msg), 1);
    assert_string_equal(msg, "a version 4 layout's index of type 4");
    make(&f, 3, 2, 3);
    fixed_array(&f, 3, 10, 4);
    f.b[FADB] = 'X';
    assert_int_equal(list(&f, 0, 4, &o, &in, &n, msg, sizeof msg), -1);
    assert_string_equal(msg, "the fixed array data block at address 4352 is not one");
    g_maxdims = NULL;
    make(&f, 3, 2, 3);
    fixed_array(&f, 3, 10, 4);
    assert_int_equal(list(&f, 0, 4, &o, &in, &n, msg, sizeof msg), 1);
    assert_string_equal(msg, "a fixed array index without the maximum dims");
}

static void test_not_read_here(void **state)
{
    (void)state;
    static fx_t f;
    uint64_t *o, n;
    na_h5ci_chunk_t *in;
    char msg[300];
    make(&f, 5, 2, 3);
    assert_int_equal(list(&f, 0, 3, &o, &in, &n, msg, sizeof msg), 1);
    assert_string_equal(msg, "a version 5 layout message");
    make(&f, 3, 1, 3);
    assert_int_equal(list(&f, 0, 3, &o, &in, &n, msg, sizeof msg), 1);
    assert_string_equal(msg, "a layout of class 1");
    make(&f, 3, 2, 4);
    assert_int_equal(list(&f, 0, 3, &o, &in, &n, msg, sizeof msg), 1);
    assert_string_equal(msg, "a chunked layout of 4 dimensions for rank 2");
    make(&f, 3, 2, 3);
    put(f.b + CB, 0, 2); /* the layout message made NIL: none left */
    assert_int_equal(list(&f, 0, 3, &o, &in, &n, msg, sizeof msg), 1);
    assert_string_equal(msg, "no layout message");
    assert_null(o);
    assert_int_equal(n, 0);
    /* no B-tree yet (address undefined): no chunk */
    make(&f, 3, 2, 3);
    put(f.b + CB + 8 + 3, UNDEF, 8);
    assert_int_equal(list(&f, 0, 3, &o, &in, &n, msg, sizeof msg), 0);
    assert_int_equal(n, 0);
    assert_null(o);
    assert_null(in);
}

static void test_damaged(void **state)
{
    (void)state;
    static fx_t f;
    uint64_t *o, n;
    na_h5ci_chunk_t *in;
    char msg[300];
    /* a cycle: the root's second child is the root itself */
    make(&f, 3, 2, 3);
    put(f.b + ROOT + 24 + 2 * KSZ + 8, ROOT, 8);
    assert_int_equal(list(&f, 0, 3, &o, &in, &n, msg, sizeof msg), -1);
    assert_string_equal(msg, "the chunk B-tree node at address 1024 has level 1, not its "
                             "parent's less one");
    assert_null(o);
    /* a child past the end of the file */
    make(&f, 3, 2, 3);
    put(f.b + ROOT + 24 + KSZ, FSIZE - 8, 8);
    assert_int_equal(list(&f, 0, 3, &o, &in, &n, msg, sizeof msg), -1);
    assert_string_equal(msg, "the chunk B-tree node at address 24568 (24 bytes) lies past the "
                         "end of the file");
    /* entries that run past the end */
    make(&f, 3, 2, 3);
    put(f.b + L2 + 6, 60000, 2);
    assert_int_equal(list(&f, 0, 3, &o, &in, &n, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "lies past the end of the file"));
    /* a bad signature */
    make(&f, 3, 2, 3);
    f.b[L1] = 'X';
    assert_int_equal(list(&f, 0, 3, &o, &in, &n, msg, sizeof msg), -1);
    assert_string_equal(msg, "the chunk B-tree node at address 2048 is not one (signature or "
                             "node type)");
    /* more chunks than libhdf5 counts */
    make(&f, 3, 2, 3);
    assert_int_equal(list(&f, 0, 2, &o, &in, &n, msg, sizeof msg), 1);
    assert_string_equal(msg, "the index lists more than the 2 chunks libhdf5 counts");
    assert_null(o);
    assert_null(in);
    /* a level of 200 */
    make(&f, 3, 2, 3);
    f.b[ROOT + 5] = 200;
    assert_int_equal(list(&f, 0, 3, &o, &in, &n, msg, sizeof msg), -1);
    assert_string_equal(msg, "the chunk B-tree node at address 1024 has level 200");
    /* a continuation that names its own chunk: stops after 64 chunks */
    make(&f, 3, 2, 3);
    uint8_t *c = f.b + CB;
    memset(c, 0, 40);
    put(c, 0x10, 2);
    put(c + 2, 16, 2);
    put(c + 8, CB, 8);
    put(c + 16, 40, 8);
    assert_int_equal(list(&f, 0, 3, &o, &in, &n, msg, sizeof msg), 1);
    assert_string_equal(msg, "the object header has more than 64 chunks");
    /* a message longer than its chunk */
    make(&f, 3, 2, 3);
    put(f.b + CB + 2, 400, 2);
    assert_int_equal(list(&f, 0, 3, &o, &in, &n, msg, sizeof msg), 1);
    assert_string_equal(msg, "an object header message of 400 bytes runs past its chunk");
    /* not an object header */
    make(&f, 3, 2, 3);
    f.b[OH] = 7;
    assert_int_equal(list(&f, 0, 3, &o, &in, &n, msg, sizeof msg), 1);
    assert_string_equal(msg, "the object header at address 256 is not one");
}

static void test_bad_parameters(void **state)
{
    (void)state;
    uint64_t *o, n;
    na_h5ci_chunk_t *in;
    char msg[100];
    assert_int_equal(na_h5ci_list(0, 0, 100, 3, 8, 0, 1, NULL, 10, &o, &in, &n, msg, sizeof msg),
                     1);
    assert_int_equal(na_h5ci_list(0, 0, 100, 8, 8, 0, 0, NULL, 10, &o, &in, &n, msg, sizeof msg),
                     1);
    assert_int_equal(na_h5ci_list(-1, 0, 100, 8, 8, 0, 1, NULL, 10, &o, &in, &n, msg, sizeof msg),
                     1);
    assert_string_equal(msg, "sizes this walker does not read");
}

/* Spans: sorted, merged where they overlap or touch; found by search. */
static void test_spans(void **state)
{
    (void)state;
    uint64_t s[6][2] = {{40, 49}, {0, 9}, {10, 12}, {30, 35}, {5, 7}, {33, 39}};
    assert_int_equal(na_h5_spans_merge(s, 6), 2);
    assert_int_equal(s[0][0], 0);
    assert_int_equal(s[0][1], 12);
    assert_int_equal(s[1][0], 30);
    assert_int_equal(s[1][1], 49);
    const uint64_t(*c)[2] = (const uint64_t(*)[2])s;
    assert_int_equal(na_h5_span_find(c, 2, 0), 0);
    assert_int_equal(na_h5_span_find(c, 2, 12), 0);
    assert_int_equal(na_h5_span_find(c, 2, 13), 1);
    assert_int_equal(na_h5_span_find(c, 2, 49), 1);
    assert_int_equal(na_h5_span_find(c, 2, 50), 2);
    assert_int_equal(na_h5_spans_merge(NULL, 0), 0);
    assert_int_equal(na_h5_span_find(NULL, 0, 7), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_v1_header),
        cmocka_unit_test(test_v2_header_and_base),
        cmocka_unit_test(test_not_read_here),
        cmocka_unit_test(test_fixed_array),
        cmocka_unit_test(test_damaged),
        cmocka_unit_test(test_bad_parameters),
        cmocka_unit_test(test_spans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
