"""Slow reference implementations ("oracles") that the tests and the benchmarks check ppmlib against.

Each function is a literal, loop-by-loop transcription of a published algorithm, kept on purpose
in its naive form: the tests assert that ppmlib's vectorised code gives the same numbers, and the
benchmarks time the two against each other. They live here once, with the tests and outside the package
(the wheel does not carry them); the benchmarks put ``tests/`` on their path to import the same copy.
Never call them from a chapter.
"""
from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

__all__ = ["loo_record_bounds", "literal_lw_weights", "literal_attribute_risk", "literal_marginal_risks",
           "literal_pairwise_scores"]


def loo_record_bounds(log_lik, weights=None) -> np.ndarray:
    """By-record bounds by the authors' leave-one-out double loop, shape (n,).

    For every draw s and record i, abs(sum_j alpha_j f_s(x_j) - sum_{j != i} alpha_j f_s(x_j)),
    re-summing all n records each time: O(S n^2) (2020 paper, appendix R code, steps 1-2).
    The maximum over draws is the record's bound; :func:`ppmlib.record_bounds` computes the same
    number as max_s abs(alpha_i f_s(x_i)) in O(S n).

    Parameters
    ----------
    log_lik : ndarray, shape (S, n)
        Unweighted per-record log-likelihood of S draws.
    weights : ndarray, shape (n,), optional
        Record weights alpha (None: all ones).
    """
    log_lik = np.asarray(log_lik, dtype=float)
    S, n = log_lik.shape
    weighted = log_lik if weights is None else log_lik * np.asarray(weights, dtype=float)
    log_ratio = np.zeros((S, n))
    for s in range(S):
        total = weighted[s, :].sum()
        for i in range(n):
            others = np.ones(n, dtype=bool)
            others[i] = False
            log_ratio[s, i] = abs(total - weighted[s, others].sum())
    return log_ratio.max(axis=0)


def literal_lw_weights(log_lik, c: float = 1.0, g: float = 0.0) -> np.ndarray:
    """Lipschitz weights by the authors' R steps 1-4 (2020 paper, appendix; no truncation), shape (n,).

    f_i from :func:`loo_record_bounds` (the O(S n^2) double loop), r_i = (f_i - min f) / (max f - min f),
    alpha_i = clip(c (1 - r_i) + g, 0, 1). :func:`ppmlib.lw_weights` is the vectorised version.

    Parameters
    ----------
    log_lik : ndarray, shape (S, n)
        Per-record log-likelihood of S draws of the unweighted fit.
    c, g : float
        Scale and shift of the risk-to-weight map.
    """
    f = loo_record_bounds(log_lik)
    risks = (f - f.min()) / (f.max() - f.min())
    return np.clip(c * (1 - risks) + g, 0, 1)


def _normal_logpdf(x, mean, sd):
    return -0.5 * ((x - mean) / sd) ** 2 - np.log(sd) - 0.5 * np.log(2 * np.pi)


def literal_attribute_risk(y, z, mu, sigma, offsets) -> np.ndarray:
    """Guess probabilities by the course slides' per-record loop (m = 1), shape (n, G).

    For record i, guess y* = y_i + offset and draw h: w_h = N(y* | mu_hi, sigma_h) / N(y_i | mu_hi, sigma_h),
    q_h = w_h / sum w, p_h = prod_j N(z_j | mu_hj, sigma_h) (recomputed inside the loops, as on the
    slides), p(Z | y*) = sum_h p_h q_h; normalised over the G guesses. In logs throughout.
    :func:`ppmlib.attribute_risk` computes the same probabilities vectorised.

    Parameters
    ----------
    y : ndarray, shape (n,)
        Confidential values.
    z : ndarray, shape (n,)
        One synthetic dataset.
    mu : ndarray, shape (H, n)
        Regression means of the H draws for every record.
    sigma : ndarray, shape (H,)
        Residual standard deviation of each draw.
    offsets : ndarray, shape (G,)
        The intruder's guesses relative to the true value.
    """
    n, H = y.size, sigma.size
    probs = np.empty((n, offsets.size))
    for i in range(n):
        log_z = np.empty(offsets.size)
        for g, guess in enumerate(y[i] + offsets):
            w = np.exp(_normal_logpdf(guess, mu[:, i], sigma) - _normal_logpdf(y[i], mu[:, i], sigma))
            log_pq = np.empty(H)
            for h in range(H):
                log_p_h = _normal_logpdf(z, mu[h], sigma[h]).sum()   # recomputed every time, as in the slides
                log_pq[h] = log_p_h + np.log(w[h] / w.sum())
            log_z[g] = logsumexp(log_pq)
        probs[i] = np.exp(log_z - logsumexp(log_z))
    return probs


def _literal_balls(y, z, radius, keys, relative):
    y = np.asarray(y, float)
    z = y[None, :] if z is None else np.atleast_2d(np.asarray(z, float))
    keys = [0] * y.size if keys is None else [tuple(np.atleast_1d(k)) for k in np.asarray(keys, dtype=object)]
    return y, z, keys


def literal_marginal_risks(y, synthetic=None, radius=0.1, keys=None, relative=True) -> np.ndarray:
    """The authors' ``IdentificationRisk`` (risk-efficient paper's R code), loop by loop, with patterns: (n,).

    For record i and dataset l: the values of i's pattern in the closed ball y_i +- r_i, whether i's
    own value is one of them (T), and the risk mean_l (1 - c_il / M_i) T_il.
    """
    y, z, keys = _literal_balls(y, synthetic, radius, keys, relative)
    out = np.empty(y.size)
    for i in range(y.size):
        same = [k for k in range(y.size) if keys[k] == keys[i]]
        r = radius * abs(y[i]) if relative else radius
        per_set = []
        for l in range(z.shape[0]):
            match = [k for k in same if y[i] - r <= z[l, k] <= y[i] + r]
            per_set.append((1 - len(match) / len(same)) * (i in match))
        out[i] = np.mean(per_set)
    return out


def literal_pairwise_scores(y, synthetic=None, radius=0.1, keys=None, relative=True) -> np.ndarray:
    """The authors' ``IdentificationRisk_pw`` (risk-efficient paper's R code), loop by loop, with patterns: (n,).

    For records i != j of one pattern and dataset l: T = both own values in their balls, the number of
    the pattern's values in neither ball, IR_ij = T * that / M_i, and the score
    mean_l sum_j (1 - IR_ij) / (M_i - 1); 1 for a record alone in its pattern. O(n^3 m).
    """
    y, z, keys = _literal_balls(y, synthetic, radius, keys, relative)
    out = np.empty(y.size)
    for i in range(y.size):
        same = [k for k in range(y.size) if keys[k] == keys[i]]
        M = len(same)
        if M == 1:
            out[i] = 1.0
            continue
        per_set = []
        for l in range(z.shape[0]):
            def ball(a):
                r = radius * abs(y[a]) if relative else radius
                return [k for k in same if y[a] - r <= z[l, k] <= y[a] + r]
            total = 0.0
            for j in same:
                if j != i:
                    bi, bj = ball(i), ball(j)
                    both_found = (i in bi) and (j in bj)
                    neither = sum(1 for k in same if k not in bi and k not in bj)
                    total += 1 - neither / M * both_found
            per_set.append(total / (M - 1))
        out[i] = np.mean(per_set)
    return out
