"""The errors ppmlib raises, as classes a caller can catch.

Each subclasses the built-in exception that callers caught before these classes existed
(``ValueError`` or ``RuntimeError``), so ``except ValueError`` keeps working. Messages name the
Python argument and what is wrong with it, never a confidential value; the command
``ppm-synthesize`` maps them to its flags and to exit status 2.

- :class:`PPMError` (Exception): the common base; catch it to catch them all
- :class:`BadArgument` (ValueError): a parameter has a value the function cannot use
- :class:`DataRefused` (ValueError): the data cannot be synthesized as given
- :class:`BudgetExceeded` (ValueError): a release would spend more epsilon than allowed
- :class:`CalibrationFailed` (RuntimeError): a search for a weight or scale did not reach its target
- :class:`FitRejected` (RuntimeError): a fit failed the diagnostics gate and may not be released
- :class:`BackendUnavailable` (RuntimeError): no Stan backend can run here
"""
from __future__ import annotations

__all__ = ["PPMError", "BadArgument", "DataRefused", "BudgetExceeded", "CalibrationFailed", "FitRejected",
           "BackendUnavailable"]


class PPMError(Exception):
    """The base of every error ppmlib raises on purpose."""


class BadArgument(PPMError, ValueError):
    """A parameter has a value the function cannot use (the message names the parameter)."""


class DataRefused(PPMError, ValueError):
    """The data cannot be synthesized as given: wrong type, missing or non-finite values, too large.

    The message names the column or the record's position, never a value.
    """


class BudgetExceeded(PPMError, ValueError):
    """A release would spend more privacy budget (epsilon) than the caller allowed."""


class CalibrationFailed(PPMError, RuntimeError):
    """A search for a weight, scale or shift did not reach its target Delta or epsilon.

    ``history`` holds every (parameter value, Delta) pair the search tried, in order.

    Parameters
    ----------
    message : str
        What was not reached.
    history : sequence of (float, float)
        The (parameter value, Delta) pairs tried.
    """

    def __init__(self, message: str, history=()):
        super().__init__(message)
        self.history = list(history)


class FitRejected(PPMError, RuntimeError):
    """A fit failed the diagnostics gate (R-hat, ESS, divergences) and may not be released."""


class BackendUnavailable(PPMError, RuntimeError):
    """A backend cannot run or be reached: neither Stan backend runs here (no CmdStan installation,
    no PyStan), or no Dask scheduler answers at the address given."""
