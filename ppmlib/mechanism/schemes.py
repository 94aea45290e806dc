"""The one registry of the book's synthesizers: every name the lineup, the command, the report and
the plots use comes from here.

A :class:`Scheme` is a synthesizer as a reader meets it: its key ("LW_final"), the label tables
show, the paper's name for it ("DPweighted"), how it is made (the lineup's kind of step, from
:data:`ppmlib.mechanism.lineup.KINDS`), what it is built on and matched to, whether its Delta can be
matched to a target, whether the command may release it, and which guarantee its epsilon states.
:func:`ppmlib.mechanism.lineup.member` builds a study's members from these entries, the command's
``--weighting`` choices are the releasable keys, and ``ppmlib.plots`` gives each key its colour.

Adding a synthesizer: one :class:`Scheme` in :data:`REGISTRY` (and, if it is made in a new way, one
kind of step in :data:`ppmlib.mechanism.lineup.KINDS`).
"""
from __future__ import annotations

__all__ = ["Scheme", "REGISTRY", "scheme", "list_schemes", "releasable", "aliases"]

from dataclasses import dataclass
from types import MappingProxyType

from ppmlib.errors import BadArgument


@dataclass(frozen=True)
class Scheme:
    """One synthesizer of the book, described once.

    Attributes
    ----------
    key : str
        Its one name, in every table, figure, lineup and command ("LW", "LW_final").
    kind : str
        How it is made: a kind of step of :data:`ppmlib.mechanism.lineup.KINDS` ("lw", "final", ...).
    summary : str
        One sentence: what its record weights are.
    alias : str, optional
        The CE paper's name for it ("DPweighted"), shown beside the key where a chapter follows that paper.
    base : str, optional
        The key of the synthesizer it is built on (LW's risks come from the unweighted fit).
    match : str, optional
        The key of the synthesizer whose Delta it is matched to by default (SW to LW).
    matchable : bool
        Its Delta can be calibrated to another's or to a target epsilon.
    releasable : bool
        ``ppm-synthesize`` may release it (``--weighting`` takes its key, in any case).
    guarantee : str
        What its epsilon covers: "none" (no differential privacy), "local" (this database against
        its removal neighbours, Delta estimated from the draws, the weights treated as fixed).
    """
    key: str
    kind: str
    summary: str
    alias: str | None = None
    base: str | None = None
    match: str | None = None
    matchable: bool = False
    releasable: bool = False
    guarantee: str = "local"

    @property
    def label(self) -> str:
        """The key, with the paper's alias in brackets when there is one ("LW (DPweighted)")."""
        return f"{self.key} ({self.alias})" if self.alias else self.key


#: The book's synthesizers by key. The order is the order of tables and legends.
REGISTRY = MappingProxyType({s.key: s for s in (
    Scheme("Unweighted", "unweighted", "every record at full weight: the ordinary posterior, no privacy guarantee",
           guarantee="none"),
    Scheme("LW", "lw", "Lipschitz weights: each record down-weighted by its largest absolute log-likelihood over the "
           "draws of the unweighted fit", alias="DPweighted", base="Unweighted", matchable=True, releasable=True),
    Scheme("LW_final", "final", "LW re-weighted at equal Delta so that records below the bound regain weight",
           base="LW", releasable=True),
    Scheme("CW", "cw", "count weights: each record down-weighted by how few records lie within a policy radius "
           "of its value", alias="Countweighted", matchable=True, releasable=True),
    Scheme("CW_final", "final", "CW re-weighted at equal Delta", base="CW"),
    Scheme("SW", "sw", "one scalar weight for every record (the exponential mechanism's form), matched to LW's "
           "Delta", alias="EMweighted", base="Unweighted", match="LW", matchable=True),
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
    """Every key of the registry, in its order.

    Returns
    -------
    list of str
    """
    return list(REGISTRY)


def releasable() -> list[str]:
    """The keys ``ppm-synthesize`` may release, in the registry's order.

    Returns
    -------
    list of str
    """
    return [key for key, s in REGISTRY.items() if s.releasable]


def aliases() -> dict[str, str]:
    """Key -> the paper's name, for the synthesizers that have one.

    Returns
    -------
    dict
    """
    return {key: s.alias for key, s in REGISTRY.items() if s.alias}
