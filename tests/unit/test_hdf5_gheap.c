/*
 * test_hdf5_gheap.c - variable-length sequence descriptors checked against
 * the global heap collection they name (formats/hdf5_gheap.c, issue 4).
 * Each test writes a small file by the rules of the HDF5 File Format
 * Specification ("Global Heap"): a user block of BASE bytes, then a
 * collection of three objects of 12, 0 and 40 bytes (object 2 empty) and
 * free space, and checks descriptors of 16 bytes (sizeof_addr 8) against
 * it: a good one of each kind, and one damage of each kind, with the
 * message asserted.
 */
#include <setjmp.h> /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>  /* snprintf */
#include <stdlib.h> /* mkstemp */
#include <string.h> /* memcpy */
#include <unistd.h> /* write, close, unlink */

#include "hdf5_gheap.h"

#define BASE 512u  /* user block: heap addresses count from here */
#define COL 4096u  /* the collection's relative address */
#define CSIZE 4096u

static void put(uint8_t *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* One object header (sizeof_length 8) and its data at b + at; returns
 * the offset after it (data padded to 8). */
static size_t object(uint8_t *b, size_t at, unsigned idx, uint64_t size)
{
    put(b + at, idx, 2);
    put(b + at + 2, 1, 2); /* reference count */
    put(b + at + 8, size, 8);
    return at + 16 + (size_t)((size + 7) & ~(uint64_t)7);
}

typedef struct fx {
    int fd;
    char path[64];
    uint8_t file[BASE + COL + CSIZE];
} fx_t;

/* The file: user block, nothing until COL, the collection. free_size
 * overrides the free-space object's size when not 0. */
static void make(fx_t *f, uint64_t csize, uint64_t free_size)
{
    memset(f->file, 0, sizeof f->file);
    uint8_t *c = f->file + BASE + COL;
    memcpy(c, "GCOL", 4);
    c[4] = 1;
    put(c + 8, csize, 8);
    size_t at = 16;
    at = object(c, at, 1, 12);
    at = object(c, at, 2, 0);
    at = object(c, at, 3, 40);
    put(c + at, 0, 2); /* free space: the rest, header included */
    put(c + at + 8, free_size ? free_size : CSIZE - at, 8);
    snprintf(f->path, sizeof f->path, "/tmp/test_gheap_XXXXXX");
    f->fd = mkstemp(f->path);
    assert_true(f->fd >= 0);
    assert_int_equal(write(f->fd, f->file, sizeof f->file), (ssize_t)sizeof f->file);
}

static void done(fx_t *f)
{
    close(f->fd);
    unlink(f->path);
}

/* A descriptor: length, collection address, object index. */
static void desc(uint8_t d[16], uint32_t len, uint64_t addr, uint32_t idx)
{
    put(d, len, 4);
    put(d + 4, addr, 8);
    put(d + 12, idx, 4);
}

static int check(fx_t *f, uint32_t fbase, uint32_t len, uint64_t addr, uint32_t idx,
                 char *msg, size_t cap)
{
    na_gheap_t *g = na_gheap_new(f->fd, BASE, sizeof f->file, 8, 8, fbase);
    assert_non_null(g);
    assert_int_equal(na_gheap_desc_size(g), 16);
    uint8_t d[16];
    desc(d, len, addr, idx);
    msg[0] = '\0';
    int r = na_gheap_check(g, d, 7, msg, cap);
    na_gheap_free(g);
    return r;
}

static void test_good(void **state)
{
    (void)state;
    fx_t f;
    make(&f, CSIZE, 0);
    char msg[400];
    assert_int_equal(check(&f, 4, 3, COL, 1, msg, sizeof msg), 0);  /* 3 x 4 = 12 */
    assert_int_equal(check(&f, 4, 0, COL, 2, msg, sizeof msg), 0);  /* empty object */
    assert_int_equal(check(&f, 8, 5, COL, 3, msg, sizeof msg), 0);  /* 5 x 8 = 40 */
    assert_int_equal(check(&f, 4, 0, 0, 0, msg, sizeof msg), 0);    /* null sequence */
    /* many descriptors of one collection: parsed once, answers stay right */
    na_gheap_t *g = na_gheap_new(f.fd, BASE, sizeof f.file, 8, 8, 4);
    uint8_t d[16];
    for (int i = 0; i < 1000; i++) {
        desc(d, i % 2 ? 3 : 10, COL, i % 2 ? 1 : 3);
        assert_int_equal(na_gheap_check(g, d, (uint64_t)i, msg, sizeof msg), 0);
    }
    na_gheap_free(g);
    done(&f);
}

static void test_damaged_descriptor(void **state)
{
    (void)state;
    fx_t f;
    make(&f, CSIZE, 0);
    char msg[400];
    assert_int_equal(check(&f, 4, 2, COL, 1, msg, sizeof msg), -1);
    assert_string_equal(msg, "sequence 7: 2 values of 4 bytes, but its heap object holds 12 "
                             "bytes (a damaged length)");
    assert_int_equal(check(&f, 4, 4, COL, 1, msg, sizeof msg), -1);
    assert_string_equal(msg, "sequence 7: 4 values of 4 bytes, but its heap object holds 12 "
                             "bytes (a damaged length)");
    assert_int_equal(check(&f, 4, 3, COL, 9, msg, sizeof msg), -1);
    assert_string_equal(msg, "sequence 7: its heap ID names object 9 of the global heap "
                             "collection at address 4096, which holds no such object (a "
                             "damaged heap ID)");
    assert_int_equal(check(&f, 4, 3, COL, 0, msg, sizeof msg), -1); /* free space */
    assert_string_equal(msg, "sequence 7: its heap ID names object 0 of the global heap "
                             "collection at address 4096, which holds no such object (a "
                             "damaged heap ID)");
    assert_int_equal(check(&f, 4, 3, COL, 70000, msg, sizeof msg), -1);
    assert_int_equal(check(&f, 4, 3, 0, 1, msg, sizeof msg), -1);
    assert_string_equal(msg, "sequence 7: 3 values but no heap object (a damaged descriptor)");
    assert_int_equal(check(&f, 4, 3, 8, 1, msg, sizeof msg), -1); /* zeros, no GCOL */
    assert_string_equal(msg, "sequence 7: bad global heap collection signature at address 8 "
                             "(a damaged heap ID or heap)");
    assert_int_equal(check(&f, 4, 3, COL + CSIZE - 8, 1, msg, sizeof msg), -1);
    assert_string_equal(msg, "sequence 7: its global heap collection at address 8184 lies "
                             "past the end of the file (a damaged heap ID)");
    assert_int_equal(check(&f, 4, 3, UINT64_MAX, 1, msg, sizeof msg), -1);
    done(&f);
}

static void test_damaged_heap(void **state)
{
    (void)state;
    fx_t f;
    char msg[400];
    make(&f, (uint64_t)1 << 40, 0);
    assert_int_equal(check(&f, 4, 3, COL, 1, msg, sizeof msg), -1);
    assert_string_equal(msg, "sequence 7: the global heap collection at address 4096 says it "
                             "holds 1099511627776 bytes, past the end of the file (a damaged "
                             "heap)");
    done(&f);
    make(&f, 8, 0);
    assert_int_equal(check(&f, 4, 3, COL, 1, msg, sizeof msg), -1);
    assert_string_equal(msg, "sequence 7: the global heap collection at address 4096 says it "
                             "holds 8 bytes, less than its header (a damaged heap)");
    done(&f);
    make(&f, CSIZE, 8); /* free space smaller than its header: libhdf5 1.10 loops */
    assert_int_equal(check(&f, 4, 3, COL, 1, msg, sizeof msg), -1);
    assert_string_equal(msg, "sequence 7: the free space of the global heap collection at "
                             "address 4096 says 8 bytes (a damaged heap)");
    done(&f);
    make(&f, CSIZE, 0);
    put(f.file + BASE + COL + 16 + 8, 5000, 8); /* object 1: 5000 bytes */
    assert_int_equal(pwrite(f.fd, f.file, sizeof f.file, 0), (ssize_t)sizeof f.file);
    assert_int_equal(check(&f, 4, 3, COL, 1, msg, sizeof msg), -1);
    assert_string_equal(msg, "sequence 7: object 1 of the global heap collection at address "
                             "4096 says 5000 bytes, more than the collection holds (a damaged "
                             "heap)");
    f.file[BASE + COL + 4] = 2; /* version */
    assert_int_equal(pwrite(f.fd, f.file, sizeof f.file, 0), (ssize_t)sizeof f.file);
    assert_int_equal(check(&f, 4, 3, COL, 1, msg, sizeof msg), -1);
    assert_string_equal(msg, "sequence 7: the global heap collection at address 4096 has "
                         "version 2, not 1");
    done(&f);
}

static void test_read_error(void **state)
{
    (void)state;
    fx_t f;
    make(&f, CSIZE, 0);
    char msg[400];
    /* the file is shorter than the size the checker was told */
    assert_int_equal(ftruncate(f.fd, BASE + COL + 8), 0);
    assert_int_equal(check(&f, 4, 3, COL, 1, msg, sizeof msg), -2);
    assert_string_equal(msg, "sequence 7: reading the global heap at byte 4608: the file ended "
                             "early");
    done(&f);
}

static void test_bad_parameters(void **state)
{
    (void)state;
    assert_null(na_gheap_new(0, 0, 100, 3, 8, 4));
    assert_null(na_gheap_new(0, 0, 100, 8, 16, 4));
    assert_null(na_gheap_new(0, 0, 100, 8, 8, 0));
    assert_null(na_gheap_new(-1, 0, 100, 8, 8, 4));
    na_gheap_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good),
        cmocka_unit_test(test_damaged_descriptor),
        cmocka_unit_test(test_damaged_heap),
        cmocka_unit_test(test_read_error),
        cmocka_unit_test(test_bad_parameters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
