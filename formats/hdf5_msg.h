/*
 * hdf5_msg.h - libhdf5's error descriptions as one clean line
 * (hdf5_msg.c). Internal to formats/; no libhdf5 needed, so the unit
 * tests build it everywhere.
 */
#ifndef NA_HDF5_MSG_H
#define NA_HDF5_MSG_H

#include <stddef.h> /* size_t */

/* The bytes na_h5_clean_cause writes at most, NUL included: the cause is
 * one part of a "FILE: DATASET: what: cause" line. */
#define NA_H5_CAUSE_MAX 200

/* desc, a description from libhdf5's error stack, as one printable line
 * of at most cap - 1 bytes (cap <= NA_H5_CAUSE_MAX is the use) in out:
 *  - a file driver's failed system call, "HEAD: time = ..., errno = N,
 *    error message = 'TEXT', ..." (H5FDsec2.c and the other drivers,
 *    whose time comes from ctime() with its newline), becomes
 *    "HEAD: TEXT (errno N)", the part a user can act on;
 *  - otherwise control characters (newlines, tabs, NUL-free binary)
 *    become spaces, runs of spaces one;
 *  - a longer result is cut at a UTF-8 character boundary and ends in
 *    "...". Other bytes are left to the printer's escaping (cli/msg.c).
 * out is "" for cap 0..3 less what fits; never fails. */
void na_h5_clean_cause(const char *desc, char *out, size_t cap);

#endif /* NA_HDF5_MSG_H */
