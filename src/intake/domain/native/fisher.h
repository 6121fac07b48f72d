/* Fisher's combining of a message's clues, as domain/spam/classifier.py computes it (its
 * fisher_evidence and helpers, and the sums of logarithms its sum() adds): the same
 * operations in the same order, with the C library functions the math module calls. */

#ifndef INTAKE_FISHER_H
#define INTAKE_FISHER_H

#include <Python.h>
#include <math.h>

#define TINY 1e-300

static double
log_normal_tail(double z)
{
    if (z < 6.0) {
        double tail = 0.5 * erfc(z / sqrt(2.0));
        return log(tail >= TINY ? tail : TINY);
    }
    return -0.5 * z * z - log(z * sqrt(2.0 * M_PI));
}

static void
log_chi2_tails(double x2, long freedom, double *upper, double *lower)
{
    if (x2 <= 0.0) {
        *upper = 0.0;
        *lower = log(TINY);
        return;
    }
    double spread = 2.0 / (9.0 * (double)freedom);
    double z = (cbrt(x2 / (double)freedom) - (1.0 - spread)) / sqrt(spread);
    *upper = log_normal_tail(z);
    *lower = log_normal_tail(-z);
}

static double
log_sum(double a, double b)
{
    double high = a >= b ? a : b, low = a >= b ? b : a;
    double x = exp(low - high);
    return high + (x == 0.0 ? x : log1p(x)); /* math.log1p returns a zero as it is */
}

static double
evidence_of(double ln_f, double ln_not_f, long clues)
{
    double upper_h, lower_h, upper_s, lower_s;
    log_chi2_tails(-2.0 * ln_f, 2 * clues, &upper_h, &lower_h);
    log_chi2_tails(-2.0 * ln_not_f, 2 * clues, &upper_s, &lower_s);
    return log_sum(upper_h, lower_s) - log_sum(lower_h, upper_s);
}

/* sum() of floats as this interpreter's builtin adds them: left to right, plainly before
 * Python 3.12, with Neumaier's compensation since. */
typedef struct {
    double total, compensation;
} running_sum;

static void
add(running_sum *sum, double x)
{
#if PY_VERSION_HEX >= 0x030C0000
    double t = sum->total + x;
    if (fabs(sum->total) >= fabs(x)) {
        sum->compensation += (sum->total - t) + x;
    }
    else {
        sum->compensation += (x - t) + sum->total;
    }
    sum->total = t;
#else
    sum->total += x;
#endif
}

static double
total(const running_sum *sum)
{
#if PY_VERSION_HEX >= 0x030C0000
    if (sum->compensation && isfinite(sum->compensation)) {
        return sum->total + sum->compensation;
    }
#endif
    return sum->total;
}

#endif
