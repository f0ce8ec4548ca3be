/*
 * mk_partial_nofilter.c - writes tests/data/hdf5/partial_nofilter_*.h5:
 * an F32 [1003, 37] dataset, shuffle + deflate, whose partial edge chunks
 * are stored unfiltered (H5Pset_chunk_opts with
 * H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS, HDF5 1.10; libver latest), values
 * (i % 1000) * 0.5 and one NaN at the last element. Chunks [100, 10]
 * (4000 bytes: libhdf5's H5Dread path) and [200, 10] (8000 bytes: the
 * parallel inflate path). h5py cannot set the option, hence C.
 *   cc -o mk tests/tools/mk_partial_nofilter.c -I/usr/include/hdf5/serial \
 *      -L/usr/lib/x86_64-linux-gnu/hdf5/serial -lhdf5 && ./mk DIR
 */
#include <hdf5.h>
#include <math.h>
#include <stdio.h>

static void mk(const char *dir, const char *name, hsize_t rows)
{
    char fn[4096];
    snprintf(fn, sizeof fn, "%s/%s", dir, name);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
    hid_t f = H5Fcreate(fn, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    hsize_t dims[2] = {1003, 37}, ch[2] = {rows, 10};
    hid_t sp = H5Screate_simple(2, dims, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, ch);
    H5Pset_chunk_opts(dcpl, H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS);
    H5Pset_shuffle(dcpl);
    H5Pset_deflate(dcpl, 4);
    hid_t d = H5Dcreate2(f, "d", H5T_NATIVE_FLOAT, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    static float buf[1003 * 37];
    for (int i = 0; i < 1003 * 37; i++)
        buf[i] = (float)(i % 1000) * 0.5f;
    buf[1003 * 37 - 1] = NAN;
    H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
    H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(sp);
    H5Fclose(f);
    H5Pclose(fapl);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    mk(dir, "partial_nofilter_small.h5", 100);
    mk(dir, "partial_nofilter_big.h5", 200);
    return 0;
}
