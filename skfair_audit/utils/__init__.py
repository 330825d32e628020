"""Small shared helpers: optional imports and result building blocks."""

from ._optional import import_optional
from ._results import ConfidenceInterval, check_alpha, check_confidence_level, records_to_frame

__all__ = [
    "ConfidenceInterval",
    "check_alpha",
    "check_confidence_level",
    "import_optional",
    "records_to_frame",
]
