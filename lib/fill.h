/*
 * fill.h - walking a source's fill runs (na_fill_fn, nanaudit.h: an HDF5
 * dataset's unwritten chunks, which read as its fill value) over a
 * window of a tensor, in blocks. Shared by the scan (scan_fill.c) and
 * clean's width-1 passes (clean.c), which both skip the blocks that lie
 * wholly in runs; implemented in scan_fill.c. Not public.
 */
#ifndef NA_FILL_H
#define NA_FILL_H

#include "nanaudit.h"

/* Called with each run's element (t->elem_stride bytes, valid during the
 * call) before its blocks are flagged: NA_OK with *take = 1 flags them;
 * NA_OK with *take = 0 ends the walk with no block flagged (the caller
 * reads the window as if there were no runs); an error ends the walk
 * with it (err set). */
typedef na_status_t (*na_fill_use_fn)(void *ud, const uint8_t *elem, int *take, na_err_t *err);

/* flag[j] = 1 for the blocks j of B elements of window [e0, e0+n) of t's
 * data stream (the last one may be shorter) that lie wholly in fill runs
 * of t->src.fill, 0 for the others; *nflag = their number. No fill
 * callback: nothing flagged. Errors: the source's, use's, NA_E_INTERNAL
 * for a run that breaks na_fill_fn's rules (outside the range, not whole
 * elements). */
na_status_t na_fill_flags(const na_tensor_t *t, uint64_t e0, uint64_t n, uint64_t B,
                          uint8_t *flag, uint64_t *nflag, na_fill_use_fn use, void *ud,
                          na_err_t *err);

/* B copies of the stride-byte element elem, malloc'd (the block a run's
 * blocks are decoded from); NULL without memory. */
uint8_t *na_fill_repeat(const uint8_t *elem, size_t stride, size_t B);

#endif /* NA_FILL_H */
