"""One lineup of synthesizers for every study.

A study names its synthesizers as a *lineup*: an ordered tuple of :class:`Member` descriptions.
Each member says which kind of step makes it (the ``kind`` of a synthesizer of
:data:`ppmlib.mechanism.schemes.REGISTRY`, or the re-weighting ``"final"``), which earlier member it is
built on (``base``: LW's risks come from the unweighted fit, LW_final re-weights LW), what it is
matched to (``match``: the name of an earlier member, for equal Delta; or ``epsilon``: a target
epsilon per dataset), its settings, and how tables show it (label, the paper's alias).
:func:`run` executes a lineup on one data set, passing fits, seeds and matched targets from step
to step, and returns one :class:`Results` (a dict name -> :class:`ppmlib.Synthesis`).

The book's synthesizers have one name each, registered once in
:data:`ppmlib.mechanism.schemes.REGISTRY` and offered as members by :data:`STANDARD`; a chapter asks for
them with :func:`member` (``member("LW", c=0.7)``) and, where it follows a paper's vocabulary,
shows the alias (``member("LW", alias="DPweighted")`` is labelled "LW (DPweighted)"). A new
synthesizer is one entry of the registry with the function that makes its weights, and every study
can then name it: :data:`KINDS` runs it through :func:`ppmlib.synthesizer` with its settings. Only a
synthesizer made in a new way (a calibration search, a re-weighting) has a step of its own here.

Seeds: ``run(..., seed=s)`` gives member j the j-th of ``ppmlib.seeds(s, len(lineup))``, so
members keep their seeds when others are appended; ``seed=[s0, s1, ...]`` sets them one by one.

A study whose synthesizers are not Stan fits (the privacy audit samples the conjugate pseudo
posterior exactly) describes them with the same members and runs them with :func:`execute` and
kinds of its own: a mapping name -> :class:`Kind` whose steps return what that study needs.
"""
from __future__ import annotations

__all__ = ["Member", "Results", "Context", "Kind", "KINDS", "STANDARD", "ALIASES", "member", "lineup", "run",
           "execute"]

import time
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Callable, Mapping, Sequence

from ppmlib import _checks
from ppmlib.mechanism import schemes as _schemes
from ppmlib.mechanism.schemes import aliases
from ppmlib.mechanism.synthesis import Synthesis, match_delta, match_sw, synthesizer
from ppmlib.inference.posterior import Sampler, _sampler
from ppmlib.progress import progress_bar
from ppmlib.seeding import seeds as _split_seed
from ppmlib.errors import BadArgument


@dataclass(frozen=True)
class Member:
    """One synthesizer of a study, described, not yet run.

    Attributes
    ----------
    name : str
        The book's name of the synthesizer and its key in the :class:`Results` ("LW", "LW_final").
    kind : str
        A key of :data:`KINDS`: the ``kind`` of a synthesizer of the registry ("unweighted", "lw",
        "cw", "sw", "custom", "cm", ...) or "final" (re-weighting).
    base : str, optional
        The earlier member it is built on: LW's risks come from ``base``'s fit (the unweighted
        synthesizer), SW's first guess from ``base``'s Delta, "final" re-weights ``base``.
    match : str, optional
        The name of an earlier member whose Delta this one is calibrated to (equal privacy).
    epsilon : float, optional
        A target epsilon per dataset this one is calibrated to (not with ``match``). Neither: the
        settings are used as given.
    settings : mapping
        The kind's settings (LW: c, g; CW: radius, relative, c, g; SW: a; final: tau, k0, max_iter;
        matching: rtol, tau, max_iter, c_range).
    alias : str, optional
        The paper's name, shown in the label ("LW (DPweighted)").
    """
    name: str
    kind: str
    base: str | None = None
    match: str | None = None
    settings: Mapping = field(default_factory=dict)
    alias: str | None = None
    epsilon: float | None = None

    def __post_init__(self):
        if self.match is not None and not isinstance(self.match, str):
            raise BadArgument(f"{self.name}: match names an earlier member; a target epsilon is epsilon={self.match!r}")
        if self.match is not None and self.epsilon is not None:
            raise BadArgument(f"{self.name}: give match= (an earlier member) or epsilon= (a target), not both")
        if self.epsilon is not None:
            object.__setattr__(self, "epsilon", _checks.real(self.epsilon, f"{self.name}: epsilon (a target)",
                                                             low=0, low_open=True))

    @property
    def matched(self) -> bool:
        """It is calibrated: to an earlier member (``match``) or to a target ``epsilon``."""
        return self.match is not None or self.epsilon is not None

    @property
    def label(self) -> str:
        """The name, with the paper's alias in brackets when there is one."""
        return f"{self.name} ({self.alias})" if self.alias else self.name

    def describe(self) -> str:
        """One line for a table: what the member is built on and matched to.

        Returns
        -------
        str
        """
        parts = [self.kind]
        if self.base:
            parts.append(f"on {self.base}")
        if self.match is not None:
            parts.append(f"Delta matched to {self.match}")
        elif self.epsilon is not None:
            parts.append(f"epsilon {self.epsilon:g}")
        shown = {k: v for k, v in self.settings.items() if not hasattr(v, "__len__") or isinstance(v, str)}
        if shown:
            parts.append(", ".join(f"{k}={v}" for k, v in shown.items()))
        return "; ".join(parts)


class Results(dict):
    """The synthesizers of a lineup after :func:`run`: name -> :class:`ppmlib.Synthesis`, in run order.

    ``.lineup`` keeps the members (their labels and descriptions) for tables and figures;
    ``.seconds`` the wall time of each member's step (its calibration included), filled by :func:`run`.

    Parameters
    ----------
    items : iterable of (str, Synthesis)
        The results, in run order.
    lineup : sequence of Member
        The members that made them.
    """

    def __init__(self, items=(), lineup: Sequence[Member] = ()):
        super().__init__(items)
        self.lineup = tuple(lineup)
        self.seconds = {}

    @property
    def members(self) -> dict:
        return {m.name: m for m in self.lineup}

    @property
    def labels(self) -> dict:
        return {m.name: m.label for m in self.lineup}

    def ordered(self, names: Sequence[str]) -> "Results":
        """The same results in another order (or a subset), e.g. for a table's rows.

        Parameters
        ----------
        names : sequence of str
            The names, in the wanted order.

        Returns
        -------
        Results
        """
        missing = [n for n in names if n not in self]
        if missing:
            raise KeyError(f"not in these results: {missing}; they hold {list(self)}")
        return Results({n: self[n] for n in names}, [self.members[n] for n in names])

    def summary(self):
        """:func:`ppmlib.summary_table` of the results, with a column saying how each was made.

        Returns
        -------
        pandas.DataFrame
        """
        from ppmlib.mechanism.synthesis import summary_table
        table = summary_table(self.values())
        table.insert(0, "made as", [self.members[n].describe() if n in self.members else "" for n in self])
        return table


# ---------------------------------------------------------------------------------------------
# the kinds of step
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Context:
    """What a step sees: the data, the settings every member shares, its own seed, the earlier members.

    Attributes
    ----------
    model : str
        The model family ("poisson", "negbin", ...).
    y : array, shape (n,)
        The confidential data.
    run : dict
        The keywords every member shares (for :func:`run`: X, prior, q, m and sampler).
    seed : int
        This member's seed.
    done : Results
        The members already run, by name.
    progress : bool
        Whether the step may show its own progress bars.
    """
    model: str
    y: object
    run: dict
    seed: int
    done: dict
    progress: bool


def _setting(member: Member, key: str, default):
    return member.settings.get(key, default)


def _target_delta(member: Member, ctx: Context) -> float:
    """The Delta a matched member must reach: an earlier member's, or the target epsilon's (epsilon = 2 Delta)."""
    if member.match is not None:
        return ctx.done[member.match].delta
    return member.epsilon / 2


def _target_epsilon(member: Member, ctx: Context) -> float:
    """The epsilon a matched member must reach: the target, or an earlier member's Delta's (epsilon = 2 Delta)."""
    if member.match is not None:
        return 2 * ctx.done[member.match].delta
    return member.epsilon


def _plain(member: Member, ctx: Context, scheme: str, **settings) -> Synthesis:
    return synthesizer(ctx.model, ctx.y, scheme, seed=ctx.seed, name=member.name, **ctx.run, **settings)


def _lw(member: Member, ctx: Context) -> Synthesis:
    base = ctx.done[member.base]
    if not member.matched:
        return _plain(member, ctx, "lw", base=base, c=_setting(member, "c", 1.0), g=_setting(member, "g", 0.0))
    run = {k: v for k, v in ctx.run.items() if k in ("X", "prior", "q", "m", "sampler")}
    shared = dict(tau=_setting(member, "tau", 0.05), g=_setting(member, "g", 0.0),
                  c_range=_setting(member, "c_range", (0.05, 5.0)), max_iter=_setting(member, "max_iter", 12),
                  seed=ctx.seed, progress=ctx.progress)
    if _predictable(member, base, run.get("q", 1.0)):
        from ppmlib.mechanism.calibration import calibrate_lw
        run.pop("q", None)
        found = calibrate_lw(ctx.model, ctx.y, base, _target_epsilon(member, ctx), **shared, **run)
    else:
        from ppmlib.mechanism.reweighting import epsilon_curve
        found = epsilon_curve(ctx.model, ctx.y, base, [_target_epsilon(member, ctx)], **shared, **run)[0]
    return replace(found, name=member.name)


def _predictable(member: Member, base: Synthesis, q: float) -> bool:
    """LW's c is predicted from draws (``calibration="predicted"``, the default) when the base is the
    untruncated unweighted fit and no truncation is asked for; otherwise every step is a refit
    (``calibration="search"``, the search of :func:`ppmlib.calibrate_lw_epsilon`)."""
    how = _setting(member, "calibration", "predicted")
    if how not in ("predicted", "search"):
        raise BadArgument(f"{member.name}: calibration must be 'predicted' or 'search', got {how!r}")
    return (how == "predicted" and q == 1.0 and base.fit.whole_chains
            and bool((base.weights == 1.0).all()))


def _cw(member: Member, ctx: Context) -> Synthesis:
    policy = dict(radius=_setting(member, "radius", None), relative=_setting(member, "relative", False),
                  c=_setting(member, "c", 1.0))
    if not member.matched:
        return _plain(member, ctx, "cw", g=_setting(member, "g", 0.0), **policy)
    # CW is calibrated through its shift g, over which Delta rises (the 2020 paper's matching)
    return match_delta(lambda g: _plain(member, ctx, "cw", g=g, **policy), _target_delta(member, ctx),
                       _setting(member, "g_start", 0.1), -1.0, 1.0, parameter="g",
                       rtol=_setting(member, "rtol", 0.03), max_iter=_setting(member, "max_iter", 12),
                       progress=ctx.progress)


def _sw(member: Member, ctx: Context) -> Synthesis:
    if not member.matched:
        return _plain(member, ctx, "sw", a=_setting(member, "a", None))
    return match_sw(ctx.model, ctx.y, _target_delta(member, ctx), ctx.done[member.base].delta, seed=ctx.seed,
                    rtol=_setting(member, "rtol", 0.03), max_iter=_setting(member, "max_iter", 12),
                    known=_setting(member, "known", ()), progress=ctx.progress, name=member.name, **ctx.run)


def _made(member: Member, ctx: Context) -> Synthesis:
    """The step of a synthesizer made by :func:`ppmlib.synthesizer` alone: its kind, with its settings."""
    return _plain(member, ctx, member.kind, **member.settings)


def _censoring_epsilon(member: Member, ctx: Context) -> float:
    """A censored member's per-draw epsilon: its ``epsilon`` setting, its target ``epsilon`` (the
    epsilon itself: censoring needs no calibration), or the epsilon of the member ``match`` names."""
    if member.match is not None:
        return ctx.done[member.match].epsilon
    if member.epsilon is not None:
        return member.epsilon
    return _setting(member, "epsilon", None)


def _censored(member: Member, ctx: Context, scheme: str, **extra) -> Synthesis:
    return _plain(member, ctx, scheme, epsilon=_censoring_epsilon(member, ctx),
                  centring=_setting(member, "centring", "best"),
                  reference_scale=_setting(member, "reference_scale", 1.0), start=_start(ctx),
                  pilot=_setting(member, "pilot", None), **extra)


def _start(ctx: Context):
    """The lineup's unweighted fit, where a censored fit's chains start (None before one is made)."""
    return next((done for done in ctx.done.values() if done.scheme == "unweighted"), None)


def _cm(member: Member, ctx: Context) -> Synthesis:
    return _censored(member, ctx, "cm")


def _wcm(member: Member, ctx: Context) -> Synthesis:
    return _censored(member, ctx, "wcm", base=ctx.done[member.base], c=_setting(member, "c", 1.0),
                     g=_setting(member, "g", 0.0))


def _strict_weighted(member: Member, ctx: Context) -> Synthesis:
    return _censored(member, ctx, "strict_weighted", box=_setting(member, "box", None), c=_setting(member, "c", None))


def _final(member: Member, ctx: Context) -> Synthesis:
    from ppmlib.mechanism.reweighting import reweight_to_tolerance
    run = {k: v for k, v in ctx.run.items() if k in ("X", "prior", "sampler")}
    return reweight_to_tolerance(ctx.model, ctx.y, ctx.done[member.base], tau=_setting(member, "tau", 0.05),
                                 k0=_setting(member, "k0", 0.95), max_iter=_setting(member, "max_iter", 12),
                                 m=ctx.run.get("m"), seed=ctx.seed, name=member.name, progress=ctx.progress, **run)


@dataclass(frozen=True)
class Kind:
    """How one kind of member is made: its step, whether it needs a base, and what it can be matched to.

    Attributes
    ----------
    step : callable
        (member, context) -> Synthesis: makes the member.
    needs_base : bool
        The member must name a ``base``.
    matchable : bool
        The member may be matched to a Delta or an epsilon.
    settings : tuple of str
        The settings it takes.
    """
    step: Callable[[Member, Context], Synthesis]
    needs_base: bool = False
    matchable: bool = False
    settings: tuple = ()


#: The steps of a new way of making a synthesizer: matched by a search, re-weighted, censored with a start.
_STEPS = {
    "lw": Kind(_lw, needs_base=True, matchable=True, settings=("c", "g", "tau", "c_range", "max_iter", "calibration")),
    "cw": Kind(_cw, matchable=True, settings=("radius", "relative", "c", "g", "g_start", "rtol", "max_iter")),
    "sw": Kind(_sw, needs_base=True, matchable=True, settings=("a", "rtol", "max_iter", "known")),
    "final": Kind(_final, needs_base=True, settings=("tau", "k0", "max_iter")),
    "cm": Kind(_cm, matchable=True, settings=("epsilon", "centring", "reference_scale", "pilot")),
    "wcm": Kind(_wcm, needs_base=True, matchable=True,
                settings=("epsilon", "centring", "reference_scale", "pilot", "c", "g")),
    "strict_weighted": Kind(_strict_weighted, matchable=True,
                            settings=("epsilon", "centring", "reference_scale", "box", "c")),
}


def _kinds() -> Mapping[str, Kind]:
    """Every kind of step: each synthesizer of the registry made by :func:`ppmlib.synthesizer` alone
    runs through :func:`_made` with its own settings; the others through their step of ``_STEPS``."""
    made = {s.kind: Kind(_made, settings=tuple(k for k in s.settings if k != "start"))
            for s in _schemes.REGISTRY.values() if s.make is not None and s.kind not in _STEPS}
    return MappingProxyType({**made, **_STEPS})


#: The kinds of step a member can be, by name (Stan fits through :func:`ppmlib.synthesizer`), read
#: from the registry: a synthesizer added there is a kind here.
KINDS = _kinds()

#: The book's synthesizers, one name each, as lineup members: built from the one registry,
#: :data:`ppmlib.mechanism.schemes.REGISTRY` (SW is matched to LW's Delta unless told otherwise).
def _standard() -> Mapping[str, Member]:
    """The registry's synthesizers as members, read from it now (a record added later is a member too)."""
    kinds = _kinds()
    return MappingProxyType({key: Member(key, s.kind, base=s.base, match=s.match)
                             for key, s in _schemes.REGISTRY.items() if s.shown and s.kind in kinds})


STANDARD = _standard()

#: The CE paper's names for the book's synthesizers (shown as aliases where a chapter follows it).
ALIASES = MappingProxyType(aliases())

_MEMBER_FIELDS = ("base", "match", "alias", "epsilon")


def member(name: str, **given) -> Member:
    """A standard synthesizer of :data:`STANDARD`, with settings and fields changed.

    Keywords ``base``, ``match``, ``epsilon`` and ``alias`` replace the member's fields; every other
    keyword is a setting of its kind (checked against the kind's settings).

    >>> member("LW", c=0.7).settings
    {'c': 0.7}
    >>> member("SW", epsilon=6.0).describe()
    'sw; on Unweighted; epsilon 6'
    >>> member("LW", alias="DPweighted").label
    'LW (DPweighted)'

    Parameters
    ----------
    name : str
        A name in :data:`STANDARD`.
    **given
        Field replacements and the kind's settings.

    Returns
    -------
    Member
    """
    standard = _standard()
    if name not in standard:
        raise BadArgument(f"unknown synthesizer {name!r}; the standard ones are {', '.join(standard)} "
                          "(build others with ppmlib.mechanism.lineup.Member)")
    fields = {k: given.pop(k) for k in _MEMBER_FIELDS if k in given}
    if "epsilon" in fields or "match" in fields:     # a target epsilon and a member to match replace each other
        fields = {"match": None, "epsilon": None, **fields}
    chosen = standard[name]
    return replace(chosen, settings={**chosen.settings, **given}, **fields)


def lineup(*members) -> tuple:
    """A lineup from standard names and :class:`Member` objects: ``lineup("Unweighted", member("LW", c=0.7))``.

    Parameters
    ----------
    *members : str or Member
        Standard names of :data:`STANDARD` or members.

    Returns
    -------
    tuple of Member
    """
    return tuple(member(m) if isinstance(m, str) else m for m in members)


def _check(members: tuple, kinds: Mapping, given: Mapping = MappingProxyType({})) -> None:
    seen = set(given)
    for m in members:
        if not isinstance(m, Member):
            raise TypeError(f"a lineup holds Member objects or standard names, got {type(m).__name__}")
        if m.name in given:
            raise BadArgument(f"{m.name!r} is one of the given (already run) members; a member cannot take its name")
        if m.name in seen:
            raise BadArgument(f"two members are called {m.name!r}; names must be unique")
        if m.kind not in kinds:
            raise BadArgument(f"{m.name}: unknown kind {m.kind!r}; choose one of {', '.join(kinds)}")
        kind = kinds[m.kind]
        unknown = sorted(set(m.settings) - set(kind.settings))
        if unknown:
            raise BadArgument(f"{m.name}: kind {m.kind!r} does not take {unknown}; it takes "
                             f"{', '.join(kind.settings) or 'no settings'}")
        if kind.needs_base and m.base is None:
            raise BadArgument(f"{m.name}: kind {m.kind!r} is built on an earlier member; give base=")
        if m.base is not None and m.base not in seen:
            raise BadArgument(f"{m.name} is built on {m.base!r}, which is not an earlier member of the lineup "
                             f"(before it: {sorted(seen) or 'none'})")
        if m.matched and not kind.matchable:
            raise BadArgument(f"{m.name}: kind {m.kind!r} cannot be matched (match={m.match!r}, epsilon={m.epsilon!r})")
        if m.match is not None and m.match not in seen:
            raise BadArgument(f"{m.name} is matched to {m.match!r}, which is not an earlier member of the lineup")
        seen.add(m.name)


def run(members, model: str, y, *, X=None, prior: dict | None = None, q: float = 1.0, m: int = 20,
        sampler: Sampler | None = None, seed=0, progress: bool = True, given: Mapping | None = None) -> Results:
    """Run a lineup on one data set: every member in order, each seeing the ones before it.

    Parameters
    ----------
    members : sequence of Member or str
        The lineup (standard names are looked up in :data:`STANDARD`).
    model, y, X, prior, q, m, sampler : as for :func:`ppmlib.synthesizer`, shared by every member.
    seed : int or sequence of int
        One integer (member j gets the j-th of ``ppmlib.seeds(seed, len(members))``), or one seed per member.
    progress : bool
        A progress bar over the members (and the calibration loops' own bars).
    given : mapping str -> Synthesis, optional
        Members already run elsewhere (on the same data and settings), by name: the lineup's members
        may be built on or matched to them as to earlier members (``given={"Unweighted": u}`` lets a
        lineup of refits share one unweighted fit). They are not run again and not in the Results.

    Returns
    -------
    Results
        name -> Synthesis, in lineup order, with ``.lineup`` for labels.

    Raises
    ------
    ValueError
        Before anything is fitted, for an unknown kind or setting, a base or match that is not an
        earlier member, or a member that cannot be matched.
    """
    shared = dict(X=X, prior=prior, q=q, m=m, sampler=_sampler(sampler))
    return execute(members, _kinds(), model, y, shared, seed=seed, progress=progress, given=given)


def execute(members, kinds: Mapping[str, Kind], model: str, y, shared: dict, *, seed=0,
            progress: bool = True, given: Mapping | None = None) -> Results:
    """Run a lineup with the given kinds of step: the runner behind :func:`run`, for any study.

    Parameters
    ----------
    members : sequence of Member or str
        The lineup (standard names are looked up in :data:`STANDARD`).
    kinds : mapping str -> Kind
        How each kind of member is made (:data:`KINDS` for Stan fits); every member's kind must be a key.
    model, y : the model family and the data, passed to every step in its :class:`Context`
    shared : dict
        Keywords every step sees as ``Context.run``.
    seed, progress, given : as for :func:`run`

    Returns
    -------
    Results
        name -> whatever each step returned, in lineup order, with ``.lineup``.

    Examples
    --------
    A lineup of two members whose steps only report their seeds:

    >>> echo = {"unweighted": Kind(lambda m, ctx: ctx.seed), "lw": Kind(lambda m, ctx: ctx.seed, needs_base=True)}
    >>> out = execute(["Unweighted", "LW"], echo, "poisson", [1, 2], {}, seed=[7, 8], progress=False)
    >>> dict(out), out.labels["LW"]
    ({'Unweighted': 7, 'LW': 8}, 'LW')
    """
    members = lineup(*members)
    given = dict(given or {})
    _check(members, kinds, given)
    if isinstance(seed, (list, tuple)):
        member_seeds = [_checks.seed(s) for s in seed]
        if len(member_seeds) != len(members):
            raise BadArgument(f"seed lists {len(member_seeds)} seeds for {len(members)} members")
    else:
        member_seeds = _split_seed(seed, len(members))
    done = Results(given, lineup=members)  # the given members are seen like earlier ones ...
    bar = progress_bar(total=len(members), desc="lineup", enabled=progress)
    try:
        for spec, member_seed in zip(members, member_seeds):
            bar.set_postfix_str(spec.name)
            ctx = Context(model, y, shared, member_seed, done, progress)
            start = time.perf_counter()
            done[spec.name] = kinds[spec.kind].step(spec, ctx)
            done.seconds[spec.name] = time.perf_counter() - start
            bar.update(1)
    finally:
        bar.close()
    for name in given:  # ... but were not run here
        del done[name]
    return done
