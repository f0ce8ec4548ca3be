/*
 * test_scan_portable.c - test_scan.c's cases again, on the portable
 * kernels: scan.c built without target_clones and without the F16C path
 * (NA_NO_CLONES), as on a CPU without AVX2/F16C. A machine with AVX2 would
 * otherwise only ever run the cloned kernels. The engine sources are
 * compiled into this test directly, so the library's copies are not linked.
 */
#define NA_NO_CLONES 1
#include "../../lib/scan.c"
#include "../../lib/scan_layout.c"
#include "../../lib/scan_pass.c"
#include "test_scan.c"
