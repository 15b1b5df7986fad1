"""Numbers as the report prints them."""
import math

from .stats import mean_ci


def fmt_ns(ns):
    for unit, base in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= base:
            return "%.3g %s" % (ns / base, unit)
    return "%.0f ns" % ns


def fmt(x, digits=3):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if abs(x) >= 1000 or abs(x) >= 10 ** digits:
        return "%.0f" % x
    return "%.*g" % (digits, x)


def fmt_ci(lo, hi, digits=3):
    if lo is None:
        return "—"
    return "%s – %s" % (fmt(lo, digits), fmt(hi, digits))


def fmt_count(x):
    if x is None:
        return "—"
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return "%.3g%s" % (x / div, suffix)
    return "%.3g" % x


def fmt_share(xs):
    """Mean share in percent with its 95% interval."""
    xs = [x for x in xs if x is not None]
    if not xs:
        return "—"
    m, _, lo, hi = mean_ci(xs)
    if lo is None:
        return "%.2g%%" % (100 * m)
    return "%.2g%% [%.2g, %.2g]" % (100 * m, 100 * max(lo, 0.0), 100 * hi)
