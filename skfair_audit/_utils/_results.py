"""Building blocks of the result objects (frozen dataclasses, like ``scipy.stats`` results)."""

from __future__ import annotations

from dataclasses import dataclass

from ._optional import import_optional


@dataclass(frozen=True, slots=True)
class ConfidenceInterval:
    """A confidence interval ``[low, high]``; one-sided bounds use ``±inf`` on the open side.

    Unpacks like a tuple: ``low, high = ci``.

    Attributes
    ----------
    low, high : float
    """

    low: float
    high: float

    def __iter__(self):
        return iter((self.low, self.high))

    def __repr__(self):
        return f"ConfidenceInterval(low={self.low!r}, high={self.high!r})"


def check_confidence_level(confidence_level) -> float:
    """Validate a confidence level in (0, 1)."""
    try:
        level = float(confidence_level)
    except (TypeError, ValueError):
        raise ValueError(
            f"confidence_level must be a number in (0, 1), got {confidence_level!r}."
        ) from None
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence_level must be in (0, 1), got {confidence_level!r}.")
    return level


def data_frame(data, index=None):
    """A :class:`pandas.DataFrame` from a dict of columns or a list of records (dicts), with
    ``index`` (a column or a list of columns) as its index; pandas is imported only here."""
    pd = import_optional("pandas", "build a DataFrame from a result")
    frame = pd.DataFrame(data)
    if index is not None:
        frame = frame.set_index(index)
    return frame
