/*
 * outlier_note.c - why an outlier test that ran can flag nothing (issue
 * 4): the statistic it scales by, or its centre, overflowed a double.
 *
 * A tensor spanning -1.7e308..1.7e308 has partial sums beyond DBL_MAX:
 * na_stats_std is NaN (lib/stats.c), as numpy's np.std is inf, and the
 * test |x - mean| > K*std is false for every x. Without a word the report
 * would read as "no outliers". clean refuses such a statistic instead
 * (exit 3, na_clean_fit), with the same phrase, NA_OVERFLOW_WHY.
 */
#include "nanaudit.h"

#include <math.h> /* isfinite */

#define NOT_APPLIED "outlier test not applied: the "

const char *na_outliers_note(const na_result_t *r)
{
    if (!r->outliers_checked || r->st.finite == 0)
        return NULL;
    if (r->method == NA_OUTLIER_MAD) {
        /* the median itself never overflows (lib/median.c's a/2 + b/2) */
        if (!isfinite(r->mad))
            return NOT_APPLIED "MAD (--mad) " NA_OVERFLOW_WHY;
        if (r->mad == 0 && !isfinite(r->meanad))
            return NOT_APPLIED "mean absolute deviation (--mad) " NA_OVERFLOW_WHY;
        return NULL;
    }
    if (!isfinite(r->st.mean))
        return NOT_APPLIED "mean (--zscore) " NA_OVERFLOW_WHY;
    if (!isfinite(r->std) && na_stats_std_underflow(&r->st))
        return NOT_APPLIED "standard deviation (--zscore) " NA_UNDERFLOW_WHY;
    if (!isfinite(r->std))
        return NOT_APPLIED "standard deviation (--zscore) " NA_OVERFLOW_WHY;
    return NULL;
}
