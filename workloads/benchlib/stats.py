"""Statistics of the bench report (and of switchback.py's separate runs).

Mean, sample standard deviation, 95% confidence interval of the mean from
Student's t; the ratio of two means with a 95% interval from Fieller's
theorem for independent samples with unequal variances and
Welch-Satterthwaite degrees of freedom, beside a percentile bootstrap
interval of the same ratio; the smallest detectable difference at 95%
confidence and, from the noncentral t, at 80% power; the verdict on a
claimed ratio.  The distributions come from scipy.stats (Debian's
python3-scipy).
"""
import math

import numpy
import scipy.optimize
import scipy.stats


def mean(xs):
    return sum(xs) / len(xs)


def sd(xs):
    if len(xs) < 2:
        return float("nan")
    m = mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def t_ppf(p, df):
    """Quantile of Student's t; df may be fractional or infinite."""
    if math.isinf(df):
        return float(scipy.stats.norm.ppf(p))
    return float(scipy.stats.t.ppf(p, df))


def mean_ci(xs, level=0.95):
    """(mean, sd, lo, hi) with a Student-t interval; lo/hi None if n < 2."""
    m = mean(xs)
    if len(xs) < 2:
        return m, float("nan"), None, None
    s = sd(xs)
    h = t_ppf(0.5 + level / 2.0, len(xs) - 1) * s / math.sqrt(len(xs))
    return m, s, m - h, m + h


def welch_df(va, na, vb, nb):
    den = 0.0
    if na > 1:
        den += va * va / (na - 1)
    if nb > 1:
        den += vb * vb / (nb - 1)
    return float("inf") if den == 0 else (va + vb) ** 2 / den


def ratio_ci(a, b, level=0.95):
    """Ratio mean(b)/mean(a) and its Fieller interval.

    Returns (ratio, lo, hi); lo/hi are None when either side has fewer than
    two values or the interval is unbounded (mean(a) not distinguishable
    from zero).  Throughputs are never negative, so when mean(b) is not
    distinguishable from zero (two noisy runs, 1 degree of freedom) the
    lower bound is clipped at 0 instead of reporting a negative ratio."""
    ma, mb = mean(a), mean(b)
    r = mb / ma if ma else float("nan")
    if len(a) < 2 or len(b) < 2 or not ma:
        return r, None, None
    va, vb = sd(a) ** 2 / len(a), sd(b) ** 2 / len(b)
    df = welch_df(r * r * va, len(a), vb, len(b))
    t = t_ppf(0.5 + level / 2.0, df)
    qa = ma * ma - t * t * va
    qb = ma * mb
    qc = mb * mb - t * t * vb
    if qa <= 0:
        return r, None, None
    disc = max(qb * qb - qa * qc, 0.0)
    return r, max((qb - math.sqrt(disc)) / qa, 0.0), (qb + math.sqrt(disc)) / qa


def welch_power(delta, se, df, level=0.95):
    """Power of the two-sided Welch t-test to see a true difference delta
    when the difference of means has standard error se (noncentral t)."""
    tc = t_ppf(0.5 + level / 2.0, df)
    nc = delta / se
    if math.isinf(df):
        norm = scipy.stats.norm
        return float(norm.sf(tc - nc) + norm.cdf(-tc - nc))
    nct = scipy.stats.nct
    # far from 0 scipy's noncentral t gives NaN for the tail that holds
    # nothing (with a warning): that tail counts as 0
    with numpy.errstate(invalid="ignore"):
        return float(numpy.nan_to_num(nct.sf(tc, df, nc)) + numpy.nan_to_num(nct.cdf(-tc, df, nc)))


def detectable(a, b, level=0.95, power=0.8):
    """Smallest relative difference (fraction of mean(a)) the two samples
    could detect: (95% CI half-width of the difference, the difference the
    Welch t-test would find with the given power).  None if either side has
    fewer than two values."""
    if len(a) < 2 or len(b) < 2 or not mean(a):
        return None, None
    va, vb = sd(a) ** 2 / len(a), sd(b) ** 2 / len(b)
    se = math.sqrt(va + vb) / abs(mean(a))
    if se == 0:
        return 0.0, 0.0
    df = welch_df(va, len(a), vb, len(b))
    return t_ppf(0.5 + level / 2.0, df) * se, detectable_change(se, df, level, power)


def detectable_change(se, df, level=0.95, power=0.8):
    """The difference a two-sided t-test at @level finds with @power when
    the estimate has standard error @se and @df degrees of freedom."""
    if se <= 0:
        return 0.0
    hi = se * (t_ppf(0.5 + level / 2.0, df) + 1)
    while welch_power(hi, se, df, level) < power:
        hi *= 1.5
    return float(scipy.optimize.brentq(lambda d: welch_power(d, se, df, level) - power,
                                       0.0, hi, xtol=1e-9))


def welch_p(a, b):
    """Two-sided p value of Welch's t-test (None with fewer than 2 each)."""
    if len(a) < 2 or len(b) < 2:
        return None
    if sd(a) == 0 and sd(b) == 0:
        return 0.0 if mean(a) != mean(b) else 1.0
    return float(scipy.stats.ttest_ind(a, b, equal_var=False).pvalue)


def bootstrap_ratio_ci(a, b, level=0.95, resamples=4999, seed=1):
    """Percentile bootstrap interval of mean(b)/mean(a), resampling each
    side independently; (lo, hi), or (None, None) with fewer than 3 runs a
    side, where resampling can only repeat the data."""
    if len(a) < 3 or len(b) < 3 or not mean(a):
        return None, None
    res = scipy.stats.bootstrap(
        (list(a), list(b)), lambda x, y, axis=-1: y.mean(axis=axis) / x.mean(axis=axis),
        vectorized=True, paired=False, confidence_level=level,
        n_resamples=resamples, method="percentile",
        random_state=numpy.random.default_rng(seed))
    lo, hi = res.confidence_interval
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return None, None
    return float(lo), float(hi)


def judge(r, lo, hi, claim):
    """Verdict word on a claimed speed-up range (lo_claim, hi_claim) from the
    ratio's interval [lo, hi]: it excludes the claim (lies below it, or below
    1) -> not reproduced, even when it also holds 1; it holds both 1 and the
    claim -> noise; it lies above 1 and overlaps the claim -> reproduced."""
    if lo is None:
        return "not distinguishable from noise"
    if hi < 1.0 or (claim and hi < claim[0]):
        return "not reproduced"
    if lo <= 1.0:
        return "not distinguishable from noise"
    if claim and lo <= claim[1]:
        return "reproduced"
    return "not reproduced"


def holm(pvalues, alpha=0.05):
    """Holm's step-down test of a family: for each p value (None: not
    tested, False) whether it is rejected at family-wise level @alpha."""
    order = sorted((p, i) for i, p in enumerate(pvalues) if p is not None)
    out = [False] * len(pvalues)
    m = len(order)
    for rank, (p, i) in enumerate(order):
        if p > alpha / (m - rank):
            break
        out[i] = True
    return out


def random_effects(y, se, level=0.95):
    """Random-effects combination of the estimates @y (one per boot) with
    standard errors @se: DerSimonian-Laird between-boot variance tau^2 and
    the Hartung-Knapp(-Sidik-Jonkman) interval, Student's t with k - 1
    degrees of freedom on the weighted residual variance, never below the
    boots' own variance (it keeps its coverage with a few boots where the
    normal DerSimonian-Laird interval does not).  Returns a dict: k, mu,
    se, df, lo, hi, p (of mu = 0), tau2, q (Cochran's Q), q_p (its
    chi-square p: boots that disagree), i2 (Higgins' I^2, 0..1).  With one estimate: that estimate, its se, and
    lo/hi None (the caller has the boot's own interval)."""
    y = numpy.asarray(y, dtype=float)
    v = numpy.asarray(se, dtype=float) ** 2
    k = len(y)
    out = {"k": k, "mu": None, "se": None, "df": None, "lo": None, "hi": None, "p": None,
           "tau2": None, "q": None, "q_p": None, "i2": None}
    if k == 0 or numpy.any(v <= 0):
        return out
    w = 1 / v
    mu_f = float((w * y).sum() / w.sum())
    if k == 1:
        out.update(mu=mu_f, se=float(math.sqrt(v[0])))
        return out
    q = float((w * (y - mu_f) ** 2).sum())
    c = float(w.sum() - (w * w).sum() / w.sum())
    tau2 = max(0.0, (q - (k - 1)) / c) if c > 0 else 0.0
    ws = 1 / (v + tau2)
    mu = float((ws * y).sum() / ws.sum())
    # the Hartung-Knapp variance factor, not allowed below 1: with a few
    # boots that happen to agree closely it would otherwise shrink the
    # interval below what the boots' own standard errors allow (Roever et
    # al. 2015; measured by the calibration tests)
    qs = max(1.0, float((ws * (y - mu) ** 2).sum()) / (k - 1))
    s = math.sqrt(qs / ws.sum())
    t = t_ppf(0.5 + level / 2.0, k - 1)
    out.update(mu=mu, se=s, df=k - 1, lo=mu - t * s, hi=mu + t * s, tau2=tau2, q=q,
               q_p=float(scipy.stats.chi2.sf(q, k - 1)),
               i2=max(0.0, (q - (k - 1)) / q) if q > 0 else 0.0,
               p=float(2 * scipy.stats.t.sf(abs(mu) / s, k - 1)) if s > 0 else
               (0.0 if mu else 1.0))
    return out
