"""The one registry of the book's synthesizers: every name the lineup, :func:`ppmlib.synthesizer`, the
command, the report, the plots and the glossary use comes from here.

A :class:`Scheme` is one synthesizer, described once: its key ("LW_final"), its family of schemes
(the pseudo posterior, re-weighting, censoring, ...), the guarantee its epsilon gives, whether and
under which guarantee the command releases it, one sentence on its weights, the paper's name for
it, what it is built on and matched to, and, for a synthesizer made by :func:`ppmlib.synthesizer`,
the settings it takes and the function that makes its record weights.

Adding a synthesizer: one :class:`Scheme` in :data:`REGISTRY` and the function that makes its
weights, ``(y, settings) -> alpha``. :func:`ppmlib.synthesizer` then takes its ``kind`` as a
scheme, a lineup takes its key as a member (:func:`ppmlib.mechanism.lineup.member`), the plots give
it a colour and the glossary an entry; ``released="local"`` (or "strict") offers it to the command.
Only a synthesizer made in a new way (matched by a search, re-weighted) also needs a step of its
own in :mod:`ppmlib.mechanism.lineup`.
"""
from __future__ import annotations

__all__ = ["REQUIRED", "FAMILIES", "Scheme", "REGISTRY", "scheme", "by_kind", "base_truncation", "list_schemes",
           "releasable", "released_under", "aliases"]

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable, Mapping

import numpy as np

from ppmlib import _checks
from ppmlib.errors import BadArgument
from ppmlib.inference.posterior import Fit
from ppmlib.mechanism.pairwise import marginal_ir_weights, pairwise_ir_weights
from ppmlib.mechanism.weights import cw_weights, lw_weights, scalar_weights

REQUIRED = object()  # marks a setting that has no default

#: The families of schemes: how a synthesizer's privacy is obtained.
FAMILIES = MappingProxyType({
    "none": "no privacy mechanism: the ordinary posterior",
    "pseudo posterior": "record weights in the likelihood; epsilon = 2 Delta from the draws",
    "re-weighting": "a pseudo posterior re-weighted at equal Delta",
    "censored": "every record's log-likelihood term censored into [-epsilon/2, epsilon/2]",
    "identification risk": "record weights from the identification risk (no epsilon of their own)",
    "noisy statistics": "a posterior fitted to noisy sufficient statistics (Gaussian mechanism, zCDP)",
})


@dataclass(frozen=True)
class Scheme:
    """One synthesizer of the book, described once.

    Attributes
    ----------
    key : str
        Its one name, in every table, figure, lineup and command ("LW", "LW_final"), and the
        default name of its :class:`ppmlib.Synthesis`.
    kind : str
        How it is made: the ``scheme`` argument of :func:`ppmlib.synthesizer` ("lw", "cm", ...)
        or a step of the lineup ("final": re-weighting; "nss": its own pipeline).
    family : str
        Its family of schemes, a key of :data:`FAMILIES`.
    guarantee : str
        What its epsilon covers: "none" (no differential privacy), "local" (this database against
        its removal neighbours, Delta estimated from the draws, the weights treated as fixed),
        "strict" (every database) or "strict, weights as given" (the same for the weights as
        computed from the data); the keys of :data:`ppmlib.mechanism.ledger.SCOPES`, and "none".
    summary : str
        One sentence: what its record weights are.
    released : str, optional
        The guarantee under which ``ppm-synthesize`` releases it ("local": a ``--weighting``;
        "strict": a strict scheme); None: the command does not release it.
    alias : str, optional
        The CE paper's name for it ("DPweighted"), shown beside the key where a chapter follows that paper.
    base : str, optional
        The key of the synthesizer it is built on (LW's risks come from the unweighted fit).
    match : str, optional
        The key of the synthesizer whose Delta it is matched to by default (SW to LW).
    matchable : bool
        Its Delta can be calibrated to another's or to a target epsilon.
    settings : mapping
        Setting -> default of :func:`ppmlib.synthesizer` (``REQUIRED``: the caller must give it),
        in the order a Synthesis records them.
    make : callable, optional
        ``(y, settings) -> alpha``, shape (n,): its record weights, where settings hold every
        setting, the truncation q and the checked ``model`` (Family) and ``X``. None: it is not
        made by :func:`ppmlib.synthesizer` alone.
    needs : str
        What the required settings are, for the error that says one is missing.
    shown : bool
        Listed in the glossary and given a colour (False for the caller's own weights, "custom").
    """
    key: str
    kind: str
    family: str
    guarantee: str
    summary: str
    released: str | None = None
    alias: str | None = None
    base: str | None = None
    match: str | None = None
    matchable: bool = False
    settings: Mapping = field(default_factory=dict)
    make: Callable[[np.ndarray, dict], np.ndarray] | None = None
    needs: str = ""
    shown: bool = True

    @property
    def label(self) -> str:
        """The key, with the paper's alias in brackets when there is one ("LW (DPweighted)")."""
        return f"{self.key} ({self.alias})" if self.alias else self.key

    @property
    def releasable(self) -> bool:
        """``ppm-synthesize`` releases it (under the guarantee :attr:`released`)."""
        return self.released is not None

    @property
    def censored(self) -> bool:
        """It censors every record's term (a strict pseudo posterior)."""
        return self.family == "censored"

    def resolve(self, given: dict) -> dict:
        """Its settings with the defaults filled in; a clear error for unknown or missing ones.

        Parameters
        ----------
        given : dict
            The settings the caller passed.

        Returns
        -------
        dict
            Every setting of the scheme.

        Raises
        ------
        ppmlib.errors.BadArgument
            A setting the scheme does not take, or a required one missing.
        """
        unknown = sorted(set(given) - set(self.settings))
        if unknown:
            takes = ", ".join(self.settings) or "no settings"
            raise BadArgument(f"scheme {self.kind!r} does not take {unknown}; it takes: {takes} "
                              "(besides X, q, m, sampler, seed, name and prior, which every scheme takes)")
        missing = [k for k, v in self.settings.items() if v is REQUIRED and given.get(k) is None]
        if missing:
            raise BadArgument(f"scheme {self.kind!r} needs {', '.join(k + '=' for k in missing)}: {self.needs}")
        return {**self.settings, **given}

    def recorded(self, settings: dict) -> dict:
        """The settings a :class:`ppmlib.Synthesis` records: the scalar ones (no base, weights, box, keys, start or pilot).

        Parameters
        ----------
        settings : dict
            As :meth:`resolve` returns them.

        Returns
        -------
        dict
        """
        return {k: settings[k] for k in self.settings if k not in ("base", "weights", "box", "keys", "start", "pilot")}


# ---------------------------------------------------------------------------------------------
# how each scheme makes its record weights
# ---------------------------------------------------------------------------------------------

def base_truncation(base, q) -> float:
    """The truncation still to apply to the base's draws when LW risks are computed from them.

    A Synthesis made with q < 1 holds only the draws its truncation kept; truncating those again
    at q would keep about q^2 of the draws. So such a base is used as it is (level 1), and a base
    truncated at a different level than the one asked for is an error, not a silent mix.

    Parameters
    ----------
    base : Fit or Synthesis
        The unweighted fit (a Synthesis records its q among its settings).
    q : float
        The truncation level asked for.

    Returns
    -------
    float
        The level to apply to the base's draws.
    """
    q = _checks.quantile_level(q)
    base_q = base.settings.get("q", 1.0) if hasattr(base, "settings") else 1.0
    if base_q == 1.0:
        return q
    if base_q != q:
        raise BadArgument(f"base was truncated with q = {base_q:g} but q = {q:g} was asked for; "
                          "make the base with the same q (or with q = 1) so the draws are truncated once")
    return 1.0


def _lw(y: np.ndarray, s: dict) -> np.ndarray:
    base = getattr(s["base"], "fit", s["base"])
    if not isinstance(base, Fit):
        raise TypeError(f"base must be the unweighted Fit or Synthesis, got {type(s['base']).__name__}")
    if base.y.shape != y.shape:
        raise BadArgument(f"base was fitted to {base.y.size} records but y has {y.size}")
    return lw_weights(base, c=s["c"], g=s["g"], q=base_truncation(s["base"], s["q"]))


def _box(y: np.ndarray, s: dict) -> np.ndarray:
    from ppmlib.mechanism.censoring import box_weights
    c = s["epsilon"] if s["c"] is None else s["c"]
    return box_weights(s["model"], y, s["X"], s["box"], c, reference_scale=s["reference_scale"])


def _ir(s: dict) -> dict:
    return {k: s[k] for k in ("radius", "relative", "keys", "c", "g")}


def _ones(y: np.ndarray, s: dict) -> np.ndarray:
    return np.ones(y.size)


#: Settings of every censored scheme: the per-draw epsilon, the centring, the normal families' public scale,
#: the fit (or Synthesis) whose posterior mean starts the chains (None: Stan's random start), and the
#: pilot (:class:`ppmlib.mechanism.pilot.Pilot`; given: the window is centred on its estimate, the chains start there).
_CENSORED = {"epsilon": REQUIRED, "centring": "best", "reference_scale": 1.0, "start": None, "pilot": None}
# the identification-risk schemes (risk-efficient paper): the intruder's radius on y's scale and known variables
_IR_SETTINGS = {"radius": REQUIRED, "relative": False, "keys": None, "c": 1.0, "g": 0.0}
_IR_NEEDS = ("radius is the intruder's matching radius on y's scale (relative=True: a share of abs(y_i)); "
             "keys, optional, the (n,) or (n, k) known variables that set each record's pattern")
_LW_NEEDS = "base is the unweighted Fit or Synthesis whose log-likelihood sets the LW risks"

#: The book's synthesizers by key. The order is the order of tables and legends.
REGISTRY = MappingProxyType({s.key: s for s in (
    Scheme("Unweighted", "unweighted", "none", "none",
           "every record at full weight: the ordinary posterior, no privacy guarantee", make=_ones),
    Scheme("LW", "lw", "pseudo posterior", "local", "Lipschitz weights: each record down-weighted by its largest "
           "absolute log-likelihood over the draws of the unweighted fit", released="local", alias="DPweighted",
           base="Unweighted", matchable=True, settings={"base": REQUIRED, "c": 1.0, "g": 0.0}, make=_lw,
           needs=_LW_NEEDS),
    Scheme("LW_final", "final", "re-weighting", "local",
           "LW re-weighted at equal Delta so that records below the bound regain weight", released="local", base="LW"),
    Scheme("CW", "cw", "pseudo posterior", "local", "count weights: each record down-weighted by how few records lie "
           "within a policy radius of its value", released="local", alias="Countweighted", matchable=True,
           settings={"c": 1.0, "g": 0.0, "radius": REQUIRED, "relative": False},
           make=lambda y, s: cw_weights(y, s["radius"], c=s["c"], g=s["g"], relative=s["relative"]),
           needs="radius is the CW policy radius, absolute or (relative=True) a fraction of abs(y_i)"),
    Scheme("CW_final", "final", "re-weighting", "local", "CW re-weighted at equal Delta", base="CW"),
    Scheme("SW", "sw", "pseudo posterior", "local", "one scalar weight for every record (the exponential "
           "mechanism's form), matched to LW's Delta", alias="EMweighted", base="Unweighted", match="LW",
           matchable=True, settings={"a": REQUIRED}, make=lambda y, s: scalar_weights(s["a"], y.size),
           needs="a is the scalar weight in [0, 1] given to every record"),
    # the censored mechanisms (book/strict_privacy.md): every record's term clipped into [-epsilon/2, epsilon/2];
    # their epsilon is a setting (or a target epsilon), not calibrated
    Scheme("CM", "cm", "censored", "strict", "every record at full weight, its log-likelihood term censored into "
           "[-epsilon/2, epsilon/2]", released="strict", matchable=True, settings=dict(_CENSORED), make=_ones,
           needs="epsilon is the per-draw epsilon of the censoring window [-epsilon/2, epsilon/2]"),
    Scheme("WCM", "wcm", "censored", "strict, weights as given", "LW's weights inside the censoring (strict for the "
           "weights as given: they come from the data)", base="Unweighted", matchable=True,
           settings={**_CENSORED, "base": REQUIRED, "c": 1.0, "g": 0.0}, make=_lw,
           needs="epsilon is the censoring's per-draw epsilon and base the unweighted Fit or Synthesis of LW's risks"),
    Scheme("Strict weighted", "strict_weighted", "censored", "strict", "weights from each record's own value and a "
           "public parameter box, inside the censoring", matchable=True,
           settings={**_CENSORED, "box": REQUIRED, "c": None}, make=_box,
           needs="epsilon is the censoring's per-draw epsilon and box the public parameter box of the weights "
                 "(the family's box_loss_bound; c defaults to epsilon)"),
    Scheme("IR_marginal", "ir", "identification risk", "local", "identification-risk weights: each record "
           "down-weighted by the share of its known-variable pattern outside a radius of its value (risk-efficient "
           "paper, marginal)", settings=_IR_SETTINGS, make=lambda y, s: marginal_ir_weights(y, **_ir(s)),
           needs=_IR_NEEDS),
    Scheme("IR_pairwise", "pairwise", "identification risk", "local", "pairwise identification-risk weights: each "
           "record weighted by the average, over the other records of its pattern, of one minus their joint risk "
           "(risk-efficient paper)", settings=_IR_SETTINGS, make=lambda y, s: pairwise_ir_weights(y, **_ir(s)),
           needs=_IR_NEEDS),
    # noisy sufficient statistics (ppmlib.mechanism.nss): zCDP for every database, its own pipeline
    Scheme("NSS", "nss", "noisy statistics", "strict", "no record weights: per public cell, noisy sufficient "
           "statistics of the outcome (the sums of the scaled outcome and of its square, or its counts over public "
           "bins) and a posterior fitted to them", released="strict"),
    Scheme("Custom", "custom", "pseudo posterior", "local", "the caller's own record weights",
           settings={"weights": REQUIRED}, make=lambda y, s: _checks.weights(s["weights"], y.size),
           needs="weights are the (n,) record weights alpha in [0, 1]", shown=False),
)})


def scheme(key: str) -> Scheme:
    """The registry's entry for ``key``.

    Parameters
    ----------
    key : str
        A key of :data:`REGISTRY`.

    Returns
    -------
    Scheme

    Raises
    ------
    ppmlib.errors.BadArgument
        An unknown key (the message lists the known ones).
    """
    if key not in REGISTRY:
        raise BadArgument(f"unknown synthesizer {key!r}; the registry has {', '.join(REGISTRY)}")
    return REGISTRY[key]


def list_schemes() -> list[str]:
    """Every key of the registry shown in the book (not "Custom"), in its order.

    Returns
    -------
    list of str
    """
    return [key for key, s in REGISTRY.items() if s.shown]


def by_kind(kind) -> Scheme:
    """The synthesizer :func:`ppmlib.synthesizer` makes as scheme ``kind`` ("lw", "cm", ...).

    Parameters
    ----------
    kind : str
        A ``kind`` of a registry entry that has weights of its own (``make``).

    Returns
    -------
    Scheme

    Raises
    ------
    ppmlib.errors.BadArgument
        An unknown scheme (the message lists the choices).
    """
    made = {s.kind: s for s in REGISTRY.values() if s.make is not None}
    if not isinstance(kind, str) or kind not in made:
        choices = ", ".join(f"{k!r} ({s.key})" for k, s in made.items())
        raise BadArgument(f"unknown scheme {kind!r}; choose one of {choices}")
    return made[kind]


def releasable() -> list[str]:
    """The keys ``ppm-synthesize`` may release, under either guarantee, in the registry's order.

    Returns
    -------
    list of str
    """
    return [key for key, s in REGISTRY.items() if s.releasable]


def released_under(guarantee: str) -> list[str]:
    """The keys ``ppm-synthesize`` releases under ``guarantee`` ("local" or "strict"), in the registry's order.

    Parameters
    ----------
    guarantee : str
        "local" (the ``--weighting`` choices) or "strict".

    Returns
    -------
    list of str
    """
    return [key for key, s in REGISTRY.items() if s.released == guarantee]


def aliases() -> dict[str, str]:
    """Key -> the paper's name, for the synthesizers that have one.

    Returns
    -------
    dict
    """
    return {key: s.alias for key, s in REGISTRY.items() if s.alias}
