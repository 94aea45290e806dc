"""The synthesizers an agency would pick instead, behind one small interface.

Every peer takes the confidential data as a DataFrame, a :class:`Table` that says what it may know
before it sees the data (the public levels of the categorical keys, the synthesized column and
its bin edges, all fixed in advance), an epsilon where it has one, ``m`` and a ``seed``, and
returns m synthetic DataFrames. The releases are *partially synthetic*, like the pseudo posterior
mechanism's in this book: the keys are released as they are, row for row, and the one sensitive
column is drawn anew for every record from the peer's model given the record's keys. The privacy
statements below cover that column with the keys treated as public, for every synthesizer alike.

What each epsilon promises (n, the number of records, is treated as public by all of them):

* :func:`histogram` (the perturbed histogram): the joint table of keys x bins of the column gets
  Laplace(1/epsilon) noise in every cell; adding or removing one record moves one cell by 1, so the
  noisy table, and everything drawn from it, is **pure epsilon-DP for every database** under
  add/remove-one neighbours. m datasets drawn from one noisy table cost epsilon in total.
* :func:`aim` and :func:`mst` (OpenDP's ``opendp.extras.mbi``, McKenna et al. 2022 and 2021):
  **rho-zCDP for every database** under add/remove-one neighbours (OpenDP's
  ``unit_of(contributions=1)``), with rho the largest value that OpenDP's own zCDP -> (epsilon, delta)
  conversion turns into the requested epsilon at ``delta`` (default 1e-6, below 1/n for n = 994):
  (epsilon, delta)-DP, a weaker promise than pure epsilon-DP. m datasets drawn from one fitted
  model cost epsilon in total.
* :func:`cart` (a synthpop-style sequential CART synthesizer) and :func:`unweighted` (the
  posterior predictive of ``ppmlib``): **no formal privacy**; references for utility and risk.
* The pseudo posterior mechanism (``ppmlib.mechanism.lineup``) is not here: its epsilon = 2 Delta_x is per
  synthetic dataset (m datasets cost m epsilon), local to the database x against its removal
  neighbours, and treats its data-dependent weights as fixed.

OpenDP draws its noise from the operating system's secure generator and takes no seed, so AIM's
and MST's fitted models differ from run to run; every other step here (the histogram's noise, the
draws from each model, the trees) is seeded.
"""
from __future__ import annotations

__all__ = ["Table", "histogram", "aim", "mst", "cart", "unweighted", "zcdp_rho", "Peer", "PEERS", "frames_of", "run"]

import logging
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from ppmlib import _checks
from ppmlib.errors import BadArgument


@dataclass(frozen=True)
class Table:
    """What a peer knows before it sees the data; none of it may depend on the confidential values.

    Attributes
    ----------
    keys : dict
        Each categorical key column and its public levels (a survey's code list), in order.
    column : str
        The synthesized numeric column.
    edges : tuple of float
        Increasing, finite bin edges of ``column``; bin b is (edges[b], edges[b + 1]] (the first
        also holds edges[0]). Values outside [edges[0], edges[-1]] are counted in the end bins.
    integer : bool
        The column holds counts: a synthetic value is a uniform integer in its bin (give
        half-integer edges so that no integer lies on an edge); otherwise a uniform real.
    """
    keys: dict = field(default_factory=dict)
    column: str = "y"
    edges: tuple = ()
    integer: bool = False

    def __post_init__(self):
        edges = _checks.finite_array(self.edges, "edges", ndim=1)
        if edges.size < 3 or np.any(np.diff(edges) <= 0):
            raise BadArgument(f"edges must be at least 3 strictly increasing values, got {edges.tolist()}")
        for key, levels in self.keys.items():
            if len(levels) == 0 or len(set(map(str, levels))) != len(levels):
                raise BadArgument(f"key {key!r} must list distinct levels, got {list(levels)}")
        object.__setattr__(self, "edges", tuple(edges.tolist()))

    @property
    def shape(self) -> tuple:
        """The joint table's shape: one axis per key (its levels), then the bins."""
        return (*(len(v) for v in self.keys.values()), len(self.edges) - 1)

    def check(self, data: pd.DataFrame) -> None:
        """Refuse data without the table's columns, or with a key value outside its levels.

        Parameters
        ----------
        data : pandas.DataFrame
            The confidential records: every key of the table and its ``column`` (finite).

        Raises
        ------
        TypeError
            ``data`` is not a DataFrame.
        ValueError
            A column is missing, a key holds a value outside its levels (counted, never shown), or
            the column holds a missing or infinite value.
        """
        if not isinstance(data, pd.DataFrame):
            raise TypeError(f"data must be a DataFrame, got {type(data).__name__}")
        missing = [c for c in (*self.keys, self.column) if c not in data.columns]
        if missing:
            raise BadArgument(f"data lacks columns {missing}; it has {list(data.columns)}")
        for key, levels in self.keys.items():
            unknown = sorted(set(data[key].astype(str)) - set(map(str, levels)))
            if unknown:
                raise BadArgument(f"key {key!r} has {len(unknown)} value(s) outside its public levels")
        _checks.finite_array(data[self.column].to_numpy(float), self.column, ndim=1)

    def key_codes(self, data: pd.DataFrame) -> tuple:
        """For each key, every record's level index.

        Parameters
        ----------
        data : pandas.DataFrame
            Records with the keys (checked by :meth:`check`).

        Returns
        -------
        tuple of ndarray
            One (n,) integer array per key, in the order of ``keys``.
        """
        return tuple(pd.Categorical(data[k].astype(str), categories=list(map(str, levels))).codes.astype(int)
                     for k, levels in self.keys.items())

    def bins(self, values) -> np.ndarray:
        """The bin index of every value; outside values go to the end bins.

        Parameters
        ----------
        values : array_like, shape (n,)
            Values of the column.

        Returns
        -------
        ndarray, shape (n,)
            Integers from 0 to the number of bins - 1.
        """
        return np.searchsorted(np.asarray(self.edges[1:-1]), np.asarray(values, float), side="left")

    def counts(self, data: pd.DataFrame) -> np.ndarray:
        """The confidential joint table keys x bins (the histogram's true counts).

        Parameters
        ----------
        data : pandas.DataFrame
            The confidential records (checked by :meth:`check`).

        Returns
        -------
        ndarray
            Counts of :attr:`shape`, summing to n.
        """
        table = np.zeros(self.shape)
        np.add.at(table, (*self.key_codes(data), self.bins(data[self.column])), 1.0)
        return table

    def draw(self, data: pd.DataFrame, joint: np.ndarray, m: int, rng: np.random.Generator) -> list:
        """m releases: the keys as they are, the column drawn from joint's bins given each record's keys.

        A key combination ``joint`` gives no mass falls back to the bins' marginal.

        Parameters
        ----------
        data : pandas.DataFrame
            The records whose keys are released as they are.
        joint : array_like
            A non-negative table of :attr:`shape` with some mass (negative cells count as 0).
        m : int
            Releases.
        rng : numpy.random.Generator
            Draws the bins and the values within them.

        Returns
        -------
        list of pandas.DataFrame
            m releases, ``data`` with the column replaced (a uniform value in the drawn bin).
        """
        joint = np.clip(np.asarray(joint, float), 0, None)
        if joint.shape != self.shape or joint.sum() <= 0:
            raise BadArgument(f"joint must be a non-negative table of shape {self.shape} with some mass")
        marginal = joint.reshape(-1, joint.shape[-1]).sum(axis=0)
        codes = self.key_codes(data)
        rows = joint[codes] if codes else np.broadcast_to(joint, (len(data), joint.shape[-1]))   # (n, bins)
        totals = rows.sum(axis=1, keepdims=True)
        probs = np.where(totals > 0, rows / np.where(totals > 0, totals, 1.0), marginal / marginal.sum())
        cumulative = np.cumsum(probs, axis=1)
        edges = np.asarray(self.edges)
        releases = []
        for _ in range(m):
            b = np.minimum((cumulative < rng.uniform(size=(len(data), 1)) * cumulative[:, -1:]).sum(axis=1),
                           len(edges) - 2)
            lo, hi = edges[b], edges[b + 1]
            values = (rng.integers(np.ceil(lo).astype(int), np.floor(hi).astype(int) + 1) if self.integer
                      else rng.uniform(lo, hi))
            releases.append(data.assign(**{self.column: values}).reset_index(drop=True))
        return releases


def _release_args(data, table, epsilon, m, seed):
    table.check(data)
    epsilon = None if epsilon is None else _checks.real(epsilon, "epsilon", low=0, low_open=True)
    return epsilon, _checks.integer(m, "m", low=1), np.random.default_rng(_checks.seed(seed))


def histogram(data: pd.DataFrame, table: Table, epsilon: float, *, m: int = 20, seed=0) -> list:
    """The perturbed histogram: pure epsilon-DP for every database (add/remove-one neighbours).

    Laplace(1/epsilon) noise on every cell of the keys x bins table (one record moves one cell by
    1), negative cells set to 0, then m releases drawn from the noisy table (:meth:`Table.draw`).

    Parameters
    ----------
    data : pandas.DataFrame
        The confidential records (the keys and ``table.column``).
    table : Table
        Keys, column and bin edges, fixed before seeing the data.
    epsilon : float
        The privacy loss of the whole release of m datasets.
    m, seed : int
        Releases, and the seed of the noise and the draws.

    Returns
    -------
    list of pandas.DataFrame
        m partially synthetic releases.
    """
    epsilon, m, rng = _release_args(data, table, epsilon, m, seed)
    noisy = table.counts(data) + rng.laplace(0.0, 1.0 / epsilon, size=table.shape)
    if noisy.max() <= 0:     # all noise: nothing left to draw from but the bins, uniformly
        noisy = np.ones(table.shape)
    return table.draw(data, noisy, m, rng)


def zcdp_rho(epsilon: float, delta: float) -> float:
    """The largest rho whose rho-zCDP OpenDP converts to (epsilon, delta)-DP.

    OpenDP's conversion (``make_zCDP_to_approxDP`` with ``make_fix_delta``) is applied to a
    Gaussian mechanism whose scale is searched until it meets (epsilon, delta); rho is that
    mechanism's zCDP loss. It is at least the classical rho of epsilon = rho + 2 sqrt(rho log(1/delta)).

    Parameters
    ----------
    epsilon : float
        The target epsilon (positive).
    delta : float
        The target delta, in (0, 1).

    Returns
    -------
    float
        rho.

    Examples
    --------
    >>> round(zcdp_rho(1.0, 1e-6), 4)            # the classical conversion gives 0.0130
    0.0244
    """
    import opendp.prelude as dp
    epsilon = _checks.real(epsilon, "epsilon", low=0, low_open=True)
    delta = _checks.real(delta, "delta", low=0, high=1, low_open=True, high_open=True)
    dp.enable_features("contrib")   # OpenDP's switch for its community-vetted measurements
    space = dp.atom_domain(T=int), dp.absolute_distance(T=float)

    def approximate(scale):
        return dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(dp.m.make_gaussian(*space, scale)), delta=delta)

    scale = dp.binary_search_param(approximate, d_in=1.0, d_out=(epsilon, delta), T=float)
    return float(dp.m.make_gaussian(*space, scale).map(1.0))


def _mbi(data: pd.DataFrame, table: Table, epsilon: float, m: int, seed, delta: float, algorithm) -> list:
    """Fit an OpenDP mbi algorithm at rho = zcdp_rho(epsilon, delta) and draw m releases from it."""
    import opendp.prelude as dp
    import polars as pl
    epsilon, m, rng = _release_args(data, table, epsilon, m, seed)
    rho = zcdp_rho(epsilon, delta)
    edges = np.asarray(table.edges)
    frame = pl.DataFrame({**{k: data[k].astype(str).tolist() for k in table.keys},
                          table.column: np.clip(data[table.column].to_numpy(float), edges[0], edges[-1])})
    context = dp.Context.compositor(data=frame.lazy(), privacy_unit=dp.unit_of(contributions=1),
                                    privacy_loss=(dp.zero_concentrated_divergence(), rho))
    quiet = logging.getLogger("opendp")
    level = quiet.level
    quiet.setLevel(logging.ERROR)   # OpenDP logs "rho should be <= 0.5" for the large epsilons we compare at
    try:
        fitted = (context.query(rho=rho)
                  .contingency_table(keys={k: list(map(str, v)) for k, v in table.keys.items()},
                                     cuts={table.column: edges[1:-1].tolist()}, algorithm=algorithm)
                  .release())
    finally:
        quiet.setLevel(level)
    joint = np.asarray(fitted.project([*table.keys, table.column]), float)
    # OpenDP adds a null level at the end of every key; the records' keys are never null: drop it
    joint = joint[tuple(slice(0, n) for n in table.shape)]
    return table.draw(data, joint, m, rng)


def _estimator(iters: int) -> Callable:
    from mbi.estimation import mirror_descent

    def estimate(domain, loss_fn, *, potentials=None):
        return mirror_descent(domain, loss_fn, potentials=potentials, iters=iters)
    return estimate


def aim(data: pd.DataFrame, table: Table, epsilon: float, *, m: int = 20, seed=0, delta: float = 1e-6,
        rounds: int | None = None, iters: int = 250) -> list:
    """AIM (McKenna, Mullins, Sheldon and Miklau 2022) through ``opendp.extras.mbi.AIM``.

    rho-zCDP for every database under add/remove-one neighbours, with rho = :func:`zcdp_rho`
    (epsilon, delta): (epsilon, delta)-DP. AIM picks marginals of the keys-and-bins table
    adaptively, measures them with Gaussian noise and fits a graphical model (Private-PGM);
    the m releases are drawn from that one model (post-processing: epsilon in total). OpenDP's
    noise is not seeded (see the module's note).

    Parameters
    ----------
    data, table, epsilon, m, seed : as for :func:`histogram`.
    delta : float
        The delta of the (epsilon, delta) promise.
    rounds : int, optional
        AIM's maximum number of rounds (OpenDP's default: 16 per column).
    iters : int
        Mirror-descent iterations per model fit (Private-PGM's default 1000; fewer keep the
        book's chapter within its time, at some cost in fit).

    Returns
    -------
    list of pandas.DataFrame
        m partially synthetic releases.
    """
    import opendp.prelude as dp
    return _mbi(data, table, epsilon, m, seed, delta,
                dp.mbi.AIM(oneway="unkeyed", rounds=rounds, estimator=_estimator(iters)))


def mst(data: pd.DataFrame, table: Table, epsilon: float, *, m: int = 20, seed=0, delta: float = 1e-6,
        iters: int = 250) -> list:
    """MST (McKenna, Miklau and Sheldon 2021) through ``opendp.extras.mbi.MST``.

    The same promise as :func:`aim` (rho-zCDP, reported as (epsilon, delta)-DP at ``delta``). MST
    measures the one-way marginals, picks a maximum spanning tree of two-way marginals with the
    exponential mechanism, measures those, and fits a graphical model; releases as in :func:`aim`.

    Parameters
    ----------
    data, table, epsilon, m, seed, delta, iters
        As for :func:`aim`.

    Returns
    -------
    list of pandas.DataFrame
        m partially synthetic releases.
    """
    import opendp.prelude as dp
    return _mbi(data, table, epsilon, m, seed, delta, dp.mbi.MST(oneway="unkeyed", estimator=_estimator(iters)))


def cart(data: pd.DataFrame, table: Table, epsilon=None, *, m: int = 20, seed=0, min_leaf: int = 5) -> list:
    """A synthpop-style CART synthesizer (no formal privacy): a reference.

    The synthesized column is modelled by a regression tree on the keys (one-hot; leaves of at
    least ``min_leaf`` records, synthpop's minbucket); every record's new value is a confidential
    value drawn at random from the records in its leaf (synthpop's ``cart`` method). In synthpop's
    sequential synthesis each synthesized variable is modelled on the keys and the variables
    synthesized before it; with one synthesized variable that is this one step. ``epsilon`` is
    ignored (there is none). Every synthetic value is a confidential value moved to another record
    of the same leaf: a utility reference, not something to publish as it is.

    Parameters
    ----------
    data, table, m, seed
        As for :func:`histogram`.
    epsilon : None
        Ignored.
    min_leaf : int
        The smallest leaf of the tree.

    Returns
    -------
    list of pandas.DataFrame
        m releases, each value a confidential one of the same leaf.
    """
    from sklearn.tree import DecisionTreeRegressor
    _, m, rng = _release_args(data, table, None, m, seed)
    min_leaf = _checks.integer(min_leaf, "min_leaf", low=1)
    codes = table.key_codes(data)
    features = np.hstack([np.eye(len(levels))[c] for c, levels in zip(codes, table.keys.values())]) \
        if codes else np.zeros((len(data), 1))
    y = data[table.column].to_numpy(float)
    tree = DecisionTreeRegressor(min_samples_leaf=min_leaf, random_state=int(rng.integers(2**31))).fit(features, y)
    leaves = tree.apply(features)
    members = {leaf: np.flatnonzero(leaves == leaf) for leaf in np.unique(leaves)}   # each leaf's records, once
    releases = []
    for _ in range(m):
        values = np.empty_like(y)
        for rows in members.values():
            values[rows] = rng.choice(y[rows], size=rows.size)
        releases.append(data.assign(**{table.column: values}).reset_index(drop=True))
    return releases


def unweighted(data: pd.DataFrame, table: Table, epsilon=None, *, model: str = "normal", m: int = 20, seed=0,
               sampler=None) -> list:
    """The unweighted synthesizer (the posterior predictive; no formal privacy) as a peer: a reference.

    ``model`` "normal" regresses the column on the keys (:func:`ppmlib.design_matrix`); the count
    models ("poisson", "negbin") use no keys.

    Parameters
    ----------
    data, table, epsilon, m, seed
        As for :func:`cart`.
    model : str
        "normal", "poisson" or "negbin".
    sampler : ppmlib.Sampler, optional
        The NUTS settings of the fit.

    Returns
    -------
    list of pandas.DataFrame
        m releases drawn from the posterior predictive (:func:`frames_of`).
    """
    from ppmlib.datasets.design import design_matrix
    from ppmlib.mechanism.synthesis import synthesizer
    _, m, _ = _release_args(data, table, None, m, seed)
    X = design_matrix(data, list(table.keys), levels=table.keys).to_numpy() if model == "normal" else None
    result = synthesizer(model, data[table.column].to_numpy(float), "unweighted", X=X, m=m, seed=seed,
                         sampler=sampler, name="Unweighted")
    return frames_of(result.synthetic, data, table.column)


def frames_of(synthetic, data: pd.DataFrame, column: str, transform: Callable | None = None) -> list:
    """(m, n) synthetic values (a ``Synthesis.synthetic``) as m releases: ``data`` with ``column``
    replaced by each row (after ``transform``, e.g. ``np.exp``).

    Parameters
    ----------
    synthetic : array_like, shape (m, n)
        Synthetic values of ``column``, one row per dataset.
    data : pandas.DataFrame
        The n records whose other columns are released as they are.
    column : str
        The synthesized column (added when ``data`` lacks it).
    transform : callable, optional
        Applied to each row before it replaces the column.

    Returns
    -------
    list of pandas.DataFrame
        m frames with a fresh index 0..n-1.
    """
    synthetic = _checks.finite_array(synthetic, "synthetic", ndim=2)
    if synthetic.shape[1] != len(data):
        raise BadArgument(f"synthetic has {synthetic.shape[1]} values per dataset; data has {len(data)} rows")
    return [data.assign(**{column: transform(row) if transform else row}).reset_index(drop=True) for row in synthetic]


@dataclass(frozen=True)
class Peer:
    """One peer of the comparison.

    Attributes
    ----------
    make : callable
        ``(data, table, epsilon, *, m, seed, **settings)`` -> m synthetic DataFrames.
    takes_epsilon : bool
        It is run at each epsilon (False: once, without a privacy guarantee, as CART).
    needs_keys : bool
        It chooses among marginals of two or more columns: on a single column (no keys) it has
        nothing to choose and is not run (AIM, MST).
    """
    make: Callable
    takes_epsilon: bool = True
    needs_keys: bool = False


#: The peers by name.
PEERS = {"Histogram": Peer(histogram), "AIM": Peer(aim, needs_keys=True), "MST": Peer(mst, needs_keys=True),
         "CART": Peer(cart, takes_epsilon=False)}


def run(names, data: pd.DataFrame, table: Table, epsilons, *, m: int = 20, seed=0, settings: dict | None = None,
        progress: bool = False) -> dict:
    """Every named peer at every epsilon (once for those without one): {(name, epsilon): (releases, seconds)}.

    A peer that needs keys (AIM, MST) is skipped for a table without any. The peer at the j-th
    (name, epsilon) pair gets the j-th of ``ppmlib.seeds(seed, ...)``.

    Parameters
    ----------
    names : list of str
        Peers of ``PEERS``.
    data, table, m
        As for :func:`histogram`.
    epsilons : list of float
        The epsilon grid, for the peers that take one.
    seed : int
        The root of every peer's seed.
    settings : dict, optional
        A name -> keyword arguments of its function (``{"AIM": {"iters": 100}}``).
    progress : bool
        Show a progress bar.

    Returns
    -------
    dict
        (name, epsilon) -> (list of m releases, wall seconds); a peer without an epsilon is keyed
        by epsilon None.

    Raises
    ------
    ValueError
        An unknown name in ``names`` or ``settings``.
    """
    from ppmlib.progress import progress_bar
    from ppmlib.seeding import seeds
    settings = dict(settings or {})
    unknown = sorted(set(names) - set(PEERS)) + sorted(set(settings) - set(PEERS))
    if unknown:
        raise BadArgument(f"unknown peer(s) {unknown}; choose from {list(PEERS)}")
    epsilons = [_checks.real(e, "epsilons[...]", low=0, low_open=True) for e in epsilons]
    jobs = [(name, eps) for name in names if table.keys or not PEERS[name].needs_keys
            for eps in (epsilons if PEERS[name].takes_epsilon else [None])]
    out = {}
    for (name, eps), job_seed in zip(progress_bar(jobs, desc="peers", enabled=progress), seeds(seed, len(jobs))):
        start = time.perf_counter()
        releases = PEERS[name].make(data, table, eps, m=m, seed=job_seed, **settings.get(name, {}))
        out[(name, eps)] = (releases, time.perf_counter() - start)
    return out
