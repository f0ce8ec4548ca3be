/*
 * hdf5_types.c - HDF5 datatype -> audited element type, for the reader's
 * child process (hdf5_child.c). Rules (HDF5 User's Guide, "HDF5
 * Datatypes"; libhdf5 1.10.8 conversion, H5Tconvert):
 *  - an IEEE binary16/32/64 or bfloat16 layout keeps its file byte order
 *    (no conversion, exact subnormal counts in its own dtype); x87 80-bit
 *    extended (little-endian, padded to 10..16 bytes) is read as stored
 *    (F80);
 *  - another float layout is converted by libhdf5, to F32 when it has at
 *    most 4 bytes and every value is exactly a binary32 (nbit-packed
 *    floats, as h5py reads them), else to F64 when every value is exactly
 *    a double (exponent of at most 11 bits, bias at most 1023, mantissa
 *    of at most 52 bits); otherwise it is unsupported (fail closed), since
 *    rounding would change counts and extremes. Decided from the type
 *    description (H5Tget_fields, H5Tget_ebias, H5Tget_norm), not by trial;
 *  - integers of 1/2/4/8 bytes keep their byte order; packed bits or other
 *    sizes are converted to a native integer of the same signedness;
 *  - arrays of numbers are flattened into extra trailing dimensions;
 *  - h5py's bool (an enum of a 1-byte integer with exactly FALSE = 0 and
 *    TRUE = 1: h5py/_hl/base.py and h5t.pyx, "bool" as an HDF5 enum) is
 *    BOOL, as numpy's bool in an .npy; other enums are skipped;
 *  - variable-length sequences (H5T_VLEN, h5py's vlen_dtype) of a type
 *    these rules make a number are audited as the concatenation of the
 *    sequences (hdf5_child.c), the base type classified as above (byte
 *    order, F16, packed integers alike); sequences of arrays, compounds
 *    or sequences: error when they hold numbers (fail closed), else
 *    skipped, as are sequences of anything else that is not a number;
 *  - strings, references, opaque, bitfield, time, enum: skipped.
 */
#include "hdf5_types.h"

#include <stdio.h>  /* snprintf */
#include <string.h> /* memset, strcmp */

#if NA_HAVE_HDF5


static na_endian_t host_order(void)
{
    return H5Tget_order(H5T_NATIVE_INT) == H5T_ORDER_BE ? NA_BIG : NA_LITTLE;
}

/* A datatype message whose bit fields do not fit the element is damaged:
 * libhdf5 1.10 converts it anyway, and made-up values were audited (a
 * float's exponent moved from bit 23 to 32: its NaN gone, exit 0;
 * seventeenth fresh-user round; newer HDF5 refuses such types). The
 * rules are those of H5Tset_precision, H5Tset_offset and H5Tset_fields
 * (HDF5 Reference Manual): offset + precision within the element; sign,
 * exponent and mantissa within the precision's bits, not overlapping.
 * 1 and why in r when damaged. */
static int bad_fields(hid_t ft, c_type_t *r)
{
    size_t size = H5Tget_size(ft), prec = H5Tget_precision(ft);
    int off = H5Tget_offset(ft);
    const char *why = NULL;
    char buf[160];
    if (prec == 0 || off < 0 || size > SIZE_MAX / 8 || (size_t)off > 8 * size ||
        prec > 8 * size - (size_t)off) {
        snprintf(buf, sizeof buf, "bit offset %d and precision %zu outside its %zu bytes", off,
                 prec, size);
        why = buf;
    } else if (H5Tget_class(ft) == H5T_FLOAT) {
        /* positions count from bit 0 of the element, inside the precision
         * [off, off + prec): hdfgroup-be_data.h5's nbit float has offset 7,
         * precision 20, sign bit 26 */
        size_t sp = 0, ep = 0, es = 0, mp = 0, ms = 0, lo = (size_t)off, hi = lo + prec;
        if (H5Tget_fields(ft, &sp, &ep, &es, &mp, &ms) < 0)
            why = "its float fields cannot be read";
        else if (sp < lo || sp >= hi)
            snprintf(buf, sizeof buf, "sign bit %zu outside its precision, bits %zu..%zu", sp,
                     lo, hi), why = buf;
        else if (es == 0 || ep < lo || ep > hi || es > hi - ep)
            snprintf(buf, sizeof buf, "exponent bits %zu..%zu outside its precision, bits "
                     "%zu..%zu", ep, ep + es, lo, hi), why = buf;
        else if (ms == 0 || mp < lo || mp > hi || ms > hi - mp)
            snprintf(buf, sizeof buf, "mantissa bits %zu..%zu outside its precision, bits "
                     "%zu..%zu", mp, mp + ms, lo, hi), why = buf;
        else if ((sp >= ep && sp < ep + es) || (sp >= mp && sp < mp + ms) ||
                 (ep < mp + ms && mp < ep + es))
            why = "its sign, exponent and mantissa fields overlap";
    }
    H5Eclear2(H5E_DEFAULT);
    if (!why)
        return 0;
    r->kind = H5P_K_ERROR;
    snprintf(r->reason, sizeof r->reason, "damaged %s datatype: %s",
             H5Tget_class(ft) == H5T_FLOAT ? "float" : "integer", why);
    return 1;
}

static void int_type(hid_t ft, c_type_t *r)
{
    if (bad_fields(ft, r))
        return;
    size_t size = H5Tget_size(ft), prec = H5Tget_precision(ft);
    int off = H5Tget_offset(ft);
    int sgn = H5Tget_sign(ft) == H5T_SGN_2;
    H5T_order_t ord = H5Tget_order(ft);
    static const na_dtype_t s_dt[4] = {NA_DT_I8, NA_DT_I16, NA_DT_I32, NA_DT_I64};
    static const na_dtype_t u_dt[4] = {NA_DT_U8, NA_DT_U16, NA_DT_U32, NA_DT_U64};
    int lg = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : size == 8 ? 3 : -1;
    if (lg >= 0 && prec == 8 * size && off == 0 &&
        (ord == H5T_ORDER_LE || ord == H5T_ORDER_BE || size == 1)) {
        r->kind = H5P_K_TENSOR;
        r->dtype = sgn ? s_dt[lg] : u_dt[lg];
        r->order = ord == H5T_ORDER_BE ? NA_BIG : NA_LITTLE;
        r->memtype = H5Tcopy(ft);
        r->esize = (uint32_t)size;
        return;
    }
    if (prec > 64) {
        r->kind = H5P_K_ERROR;
        snprintf(r->reason, sizeof r->reason,
                 "unsupported integer type: %zu bits of precision (at most 64)", prec);
        return;
    }
    /* Packed bits (precision or offset not the whole element) or an odd
     * size: libhdf5 converts to a native integer of the same signedness,
     * of the element's own size when that is 1/2/4/8 bytes (the numpy
     * dtype h5py reads it as), else the smallest that holds `prec` bits. */
    if (lg < 0)
        lg = prec <= 8 ? 0 : prec <= 16 ? 1 : prec <= 32 ? 2 : 3;
    static const hid_t *s_nat[4] = {&H5T_NATIVE_INT8_g, &H5T_NATIVE_INT16_g,
                                    &H5T_NATIVE_INT32_g, &H5T_NATIVE_INT64_g};
    static const hid_t *u_nat[4] = {&H5T_NATIVE_UINT8_g, &H5T_NATIVE_UINT16_g,
                                    &H5T_NATIVE_UINT32_g, &H5T_NATIVE_UINT64_g};
    r->kind = H5P_K_TENSOR;
    r->dtype = sgn ? s_dt[lg] : u_dt[lg];
    r->order = host_order();
    r->memtype = H5Tcopy(sgn ? *s_nat[lg] : *u_nat[lg]);
    r->esize = 1u << lg;
}

/* IEEE-like layout test: sign at the top, exponent below it, mantissa
 * at bit 0, implied leading bit, IEEE bias. */
static int is_layout(hid_t ft, size_t size, size_t esz, size_t msz)
{
    size_t sp, ep, es, mp, ms;
    if (H5Tget_fields(ft, &sp, &ep, &es, &mp, &ms) < 0)
        return 0;
    return H5Tget_size(ft) == size && H5Tget_precision(ft) == 8 * size &&
           H5Tget_offset(ft) == 0 && sp == 8 * size - 1 && ep == msz && es == esz && mp == 0 &&
           ms == msz && H5Tget_ebias(ft) == (1u << (esz - 1)) - 1 &&
           H5Tget_norm(ft) == H5T_NORM_IMPLIED;
}

static void float_type(hid_t ft, c_type_t *r)
{
    if (bad_fields(ft, r))
        return;
    H5T_order_t ord = H5Tget_order(ft);
    int plain = ord == H5T_ORDER_LE || ord == H5T_ORDER_BE;
    static const struct { size_t size, esz, msz; na_dtype_t dt; } ieee[] = {
        {2, 5, 10, NA_DT_F16}, {2, 8, 7, NA_DT_BF16}, {4, 8, 23, NA_DT_F32}, {8, 11, 52, NA_DT_F64}};
    for (size_t i = 0; plain && i < sizeof ieee / sizeof ieee[0]; i++) {
        if (is_layout(ft, ieee[i].size, ieee[i].esz, ieee[i].msz)) {
            r->kind = H5P_K_TENSOR;
            r->dtype = ieee[i].dt;
            r->order = ord == H5T_ORDER_BE ? NA_BIG : NA_LITTLE;
            r->memtype = H5Tcopy(ft);
            r->esize = (uint32_t)ieee[i].size;
            return;
        }
    }
    size_t sp = 0, ep = 0, es = 0, mp = 0, ms = 0, size = H5Tget_size(ft);
    H5Tget_fields(ft, &sp, &ep, &es, &mp, &ms);
    size_t bias = H5Tget_ebias(ft);
    H5T_norm_t norm = H5Tget_norm(ft);
    /* x87 extended: 64-bit mantissa with an explicit integer bit, 15-bit
     * exponent, sign at bit 79, little-endian, padded to 10..16 bytes. */
    if (ord == H5T_ORDER_LE && H5Tget_precision(ft) == 80 && H5Tget_offset(ft) == 0 &&
        sp == 79 && ep == 64 && es == 15 && mp == 0 && ms == 64 && bias == 16383 &&
        norm == H5T_NORM_NONE && size >= 10 && size <= 16) {
        r->kind = H5P_K_TENSOR;
        r->dtype = NA_DT_F80;
        r->order = NA_LITTLE;
        r->memtype = H5Tcopy(ft);
        r->esize = (uint32_t)size;
        return;
    }
    /* Other layouts: exactly representable in double, or unsupported. */
    size_t mbits = ms + (norm == H5T_NORM_NONE ? 0 : 1);
    int exact = (norm == H5T_NORM_IMPLIED || norm == H5T_NORM_NONE) && es >= 2 && es <= 11 &&
                bias <= 1023 && ((1u << es) - 2 - bias) <= 1023 && mbits <= 53 && ms > 0;
    if (!exact) {
        r->kind = H5P_K_ERROR;
        snprintf(r->reason, sizeof r->reason,
                 "unsupported float type: %zu bytes, sign bit %zu, %zu exponent bits (bias %zu), "
                 "%zu mantissa bits: not exactly convertible to F64",
                 size, sp, es, bias, ms);
        return;
    }
    /* Into F32 when every value fits it exactly and the element is 4
     * bytes or less (an nbit-packed float, as h5py reads it), else F64. */
    int f32 = size <= 4 && es <= 8 && bias <= 127 && ((1u << es) - 2 - bias) <= 127 && mbits <= 24;
    r->kind = H5P_K_TENSOR;
    r->dtype = f32 ? NA_DT_F32 : NA_DT_F64;
    r->order = host_order();
    r->memtype = H5Tcopy(f32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE);
    r->esize = f32 ? 4 : 8;
}


/* An array of numbers: audited flattened, its dims appended to the
 * dataset's shape (h5py shows a field of shape (3,) the same way). */
static void array_type(hid_t ft, c_type_t *r)
{
    hsize_t dims[H5S_MAX_RANK];
    int nd = H5Tget_array_ndims(ft);
    hid_t base = H5Tget_super(ft);
    if (nd <= 0 || nd > H5S_MAX_RANK || base < 0 || H5Tget_array_dims2(ft, dims) < 0) {
        if (base >= 0)
            H5Tclose(base);
        r->kind = H5P_K_ERROR;
        snprintf(r->reason, sizeof r->reason, "array type cannot be read");
        return;
    }
    if (H5Tget_class(base) == H5T_COMPOUND) {
        H5Tclose(base);
        r->kind = H5P_K_ERROR;
        snprintf(r->reason, sizeof r->reason, "arrays of compound elements are not supported");
        return;
    }
    c_type_t b;
    na_h5t_classify(base, &b);
    H5Tclose(base);
    if (b.kind != H5P_K_TENSOR) {
        *r = b;
        return;
    }
    uint64_t per = b.per;
    for (int i = 0; i < nd; i++)
        per = dims[i] && per > UINT64_MAX / dims[i] ? UINT64_MAX : per * dims[i];
    if (per == 0 || per > (1u << 16) || nd + b.adims > 16) {
        H5Tclose(b.memtype);
        r->kind = H5P_K_ERROR;
        snprintf(r->reason, sizeof r->reason,
                 "array element type too large (%llu values per element, at most 65536)",
                 (unsigned long long)per);
        return;
    }
    *r = b;
    r->memtype = H5Tarray_create2(b.memtype, (unsigned)nd, dims);
    H5Tclose(b.memtype);
    r->per = per;
    r->adims = nd + b.adims;
    for (int i = 0; i < nd; i++)
        r->adim[i] = dims[i];
    for (int i = 0; i < b.adims; i++)
        r->adim[nd + i] = b.adim[i];
}

/* 1 when ft is the enum h5py writes for numpy's bool: a 1-byte integer
 * base and the members FALSE = 0 and TRUE = 1, nothing else. */
static int h5py_bool(hid_t ft)
{
    hid_t base = H5Tget_super(ft);
    int ok = base >= 0 && H5Tget_class(base) == H5T_INTEGER && H5Tget_size(base) == 1 &&
             H5Tget_nmembers(ft) == 2;
    for (unsigned i = 0; ok && i < 2; i++) {
        char *nm = H5Tget_member_name(ft, i);
        signed char v = -1;
        ok = nm && H5Tget_member_value(ft, i, &v) >= 0 &&
             ((!strcmp(nm, "FALSE") && v == 0) || (!strcmp(nm, "TRUE") && v == 1));
        if (nm)
            H5free_memory(nm);
    }
    if (base >= 0)
        H5Tclose(base);
    return ok;
}

/* Sequences of a variable length (H5T_VLEN; h5py.vlen_dtype(np.float32)):
 * of a number type, the base's classification with a memory type that
 * is the sequence of the base's (libhdf5 converts each sequence as it
 * would the base: HDF5 User's Guide, "Variable-length Datatypes"). The
 * reader audits the concatenation of the sequences (hdf5_child.c). Of
 * arrays, compounds or sequences: not supported, an error when any
 * number lies inside (H5Tdetect_class looks through members and bases),
 * else skipped. */
static void vlen_type(hid_t ft, c_type_t *r)
{
    hid_t base = H5Tget_super(ft);
    H5T_class_t bc = base >= 0 ? H5Tget_class(base) : H5T_NO_CLASS;
    if (bc == H5T_ARRAY || bc == H5T_COMPOUND || bc == H5T_VLEN || bc == H5T_NO_CLASS) {
        int num = bc == H5T_NO_CLASS || H5Tdetect_class(base, H5T_INTEGER) > 0 ||
                  H5Tdetect_class(base, H5T_FLOAT) > 0;
        r->kind = num ? H5P_K_ERROR : H5P_K_SKIP;
        snprintf(r->reason, sizeof r->reason, "%s",
                 !num ? "variable-length non-numeric data"
                 : bc == H5T_NO_CLASS ? "variable-length type cannot be read"
                 : bc == H5T_ARRAY ? "variable-length sequences of arrays are not supported"
                 : bc == H5T_COMPOUND
                     ? "variable-length sequences of compound elements are not supported"
                     : "variable-length sequences of variable-length sequences are not "
                       "supported");
    } else {
        c_type_t b;
        na_h5t_classify(base, &b);
        *r = b;
        if (b.kind == H5P_K_TENSOR) {
            r->memtype = H5Tvlen_create(b.memtype);
            H5Tclose(b.memtype);
            r->vlen = 1;
            if (r->memtype < 0) {
                r->kind = H5P_K_ERROR;
                snprintf(r->reason, sizeof r->reason,
                         "variable-length type: no memory type for its sequences");
            }
        } else if (b.kind == H5P_K_SKIP) {
            snprintf(r->reason, sizeof r->reason, "variable-length non-numeric data (%.200s)",
                     b.reason);
        }
    }
    if (base >= 0)
        H5Tclose(base);
    H5Eclear2(H5E_DEFAULT);
}

/* Classify a non-compound type. */
static void leaf_type0(hid_t ft, c_type_t *r)
{
    if (H5Tget_class(ft) == H5T_ENUM && h5py_bool(ft)) {
        r->kind = H5P_K_TENSOR;
        r->dtype = NA_DT_BOOL;
        r->order = NA_LITTLE; /* one byte */
        r->memtype = H5Tcopy(ft); /* read as stored: the bytes 0 and 1 */
        r->esize = 1;
        return;
    }
    switch (H5Tget_class(ft)) {
    case H5T_INTEGER: int_type(ft, r); return;
    case H5T_FLOAT: float_type(ft, r); return;
    case H5T_STRING: r->kind = H5P_K_SKIP; snprintf(r->reason, sizeof r->reason, "string data"); return;
    case H5T_REFERENCE:
        r->kind = H5P_K_SKIP;
        snprintf(r->reason, sizeof r->reason, "%s",
                 H5Tequal(ft, H5T_STD_REF_DSETREG) > 0 ? NA_HDF5_REASON_REGREFS
                                                       : NA_HDF5_REASON_REFS);
        return;
    case H5T_OPAQUE: r->kind = H5P_K_SKIP; snprintf(r->reason, sizeof r->reason, "opaque data"); return;
    case H5T_BITFIELD: r->kind = H5P_K_SKIP; snprintf(r->reason, sizeof r->reason, "bitfield data"); return;
    case H5T_TIME: r->kind = H5P_K_SKIP; snprintf(r->reason, sizeof r->reason, "time data"); return;
    case H5T_ENUM: r->kind = H5P_K_SKIP; snprintf(r->reason, sizeof r->reason, "enum data (named values)"); return;
    case H5T_VLEN: vlen_type(ft, r); return;
    case H5T_ARRAY: array_type(ft, r); return;
    default:
        r->kind = H5P_K_ERROR;
        snprintf(r->reason, sizeof r->reason, "unknown datatype class");
        return;
    }
}

static const char *const packing[] = NA_PACKING_ATTRS;

int na_h5_packing_attr(const char *name)
{
    for (size_t i = 0; i < sizeof packing / sizeof packing[0]; i++)
        if (!strcmp(name, packing[i]))
            return 1;
    return 0;
}

int na_h5_has_packing(hid_t obj)
{
    int has = 0;
    for (size_t i = 0; i < sizeof packing / sizeof packing[0]; i++)
        has |= (H5Aexists(obj, packing[i]) > 0) << i;
    H5Eclear2(H5E_DEFAULT);
    return has;
}

/* 1 with out (cap bytes, NUL-terminated, cut to fit) set to obj's
 * attribute name when it is one string, fixed-length or variable; else
 * (errors too) 0. */
static int str_attr_read(hid_t obj, const char *name, char *out, size_t cap)
{
    int is = 0;
    if (H5Aexists(obj, name) > 0) {
        hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
        hid_t ft = a >= 0 ? H5Aget_type(a) : -1;
        hid_t sp = a >= 0 ? H5Aget_space(a) : -1;
        if (ft >= 0 && sp >= 0 && H5Tget_class(ft) == H5T_STRING &&
            H5Sget_simple_extent_npoints(sp) == 1) {
            hid_t mt = H5Tcopy(H5T_C_S1);
            /* libhdf5 converts no string between ASCII and UTF-8: read in
             * the attribute's own character set (round 39a: netCDF's and
             * h5py's variable-length strings are UTF-8, and _Unsigned so
             * written was ignored) */
            if (mt >= 0)
                H5Tset_cset(mt, H5Tget_cset(ft));
            if (H5Tis_variable_str(ft) > 0) {
                char *v = NULL;
                if (mt >= 0 && H5Tset_size(mt, H5T_VARIABLE) >= 0 && H5Aread(a, mt, &v) >= 0) {
                    is = v != NULL;
                    if (is)
                        snprintf(out, cap, "%s", v);
                    H5free_memory(v);
                }
            } else if (H5Tget_size(ft) < 128) {
                char v[128] = {0};
                if (mt >= 0 && H5Tset_size(mt, sizeof v) >= 0 &&
                    H5Tset_strpad(mt, H5T_STR_NULLTERM) >= 0 && H5Aread(a, mt, v) >= 0) {
                    is = 1;
                    snprintf(out, cap, "%s", v);
                }
            }
            if (mt >= 0)
                H5Tclose(mt);
        }
        if (sp >= 0)
            H5Sclose(sp);
        if (ft >= 0)
            H5Tclose(ft);
        if (a >= 0)
            H5Aclose(a);
    }
    H5Eclear2(H5E_DEFAULT);
    return is;
}

/* 1 when obj's attribute name is one string equal to want or, when want2
 * is not NULL, to want2; errors read as 0. */
static int str_attr_is(hid_t obj, const char *name, const char *want, const char *want2)
{
    char v[128];
    return str_attr_read(obj, name, v, sizeof v) &&
           (!strcmp(v, want) || (want2 && !strcmp(v, want2)));
}

int na_h5_nc_dim_only(hid_t dset)
{
    /* netCDF-C's DIM_WITHOUT_VARIABLE (libhdf5/hdf5internal.h): the NAME
     * of the dimension scale it writes for a dimension that has no
     * coordinate variable, followed by the length */
    static const char want[] = "This is a netCDF dimension but not a netCDF variable.";
    char v[128];
    return str_attr_read(dset, "NAME", v, sizeof v) && !strncmp(v, want, sizeof want - 1);
}

const char *na_h5_matlab_skip(hid_t dset)
{
    /* MathWorks' MAT-file v7.3 layout: each variable carries MATLAB_class
     * ("double", "char", "logical", ...); a char array holds UTF-16 code
     * units, and an empty array is stored as its dimensions with
     * MATLAB_empty = 1 */
    if (str_attr_is(dset, "MATLAB_class", "char", NULL))
        return "a MATLAB char array (text)";
    int empty = 0;
    if (H5Aexists(dset, "MATLAB_empty") > 0) {
        hid_t a = H5Aopen(dset, "MATLAB_empty", H5P_DEFAULT);
        unsigned char v = 0;
        empty = a >= 0 && H5Aread(a, H5T_NATIVE_UCHAR, &v) >= 0 && v != 0;
        if (a >= 0)
            H5Aclose(a);
    }
    H5Eclear2(H5E_DEFAULT);
    return empty ? "a MATLAB empty array (its dimensions are stored, not data)" : NULL;
}

int na_h5_is_dim_scale(hid_t dset)
{
    /* HDF5 Dimension Scale Specification 1.0, section 4.2: a dimension
     * scale has attribute CLASS, a string "DIMENSION_SCALE" (H5DSset_scale
     * writes it fixed-length, null-terminated; netCDF-4 writes its
     * coordinate variables and dimensions this way). */
    return str_attr_is(dset, "CLASS", "DIMENSION_SCALE", NULL);
}

int na_h5_unsigned_view(hid_t dset)
{
    /* NetCDF User Guide, "Attribute Conventions": _Unsigned = "true" on a
     * signed integer variable says its values are unsigned; netCDF4-python
     * honours exactly "true" and "True" (its issue #1232). */
    hid_t ft = H5Dget_type(dset);
    /* whole-byte integers only: packed bits are read sign-extended */
    int sgn = ft >= 0 && H5Tget_class(ft) == H5T_INTEGER && H5Tget_sign(ft) == H5T_SGN_2 &&
              H5Tget_precision(ft) == 8 * H5Tget_size(ft) && H5Tget_offset(ft) == 0;
    if (ft >= 0)
        H5Tclose(ft);
    H5Eclear2(H5E_DEFAULT);
    return sgn && str_attr_is(dset, "_Unsigned", "true", "True");
}

void na_h5t_classify(hid_t ft, c_type_t *r)
{
    memset(r, 0, sizeof *r);
    r->memtype = -1;
    leaf_type0(ft, r);
    if (r->per == 0)
        r->per = 1;
}

#endif /* NA_HAVE_HDF5 */
