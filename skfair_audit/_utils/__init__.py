"""Small shared helpers: result building blocks, the categorical encoder, seeds, validation.

Private: nothing here is public API (:class:`ConfidenceInterval`, returned by the results,
is documented as :class:`skfair_audit.results.ConfidenceInterval`). The helpers are imported
by the other subpackages by name: :func:`encode_categories` / :func:`level_codes`
(the one categorical encoder and its missing-value rule), :func:`seed_sequence` /
:func:`int_seed` (the one seed helper), :func:`take_rows` (row selection), the declarative
parameter validation (:func:`validate_params`, :func:`check_params` and the constraints),
and the HTML building blocks of the report and of the results' notebook display
(:mod:`._html`).
"""

from ._encoding import (
    CHUNK_ROWS,
    check_no_missing,
    compact_codes,
    encode_categories,
    level_codes,
    missing_mask,
    sorted_levels,
)
from ._html import (
    CARD_ROWS,
    FIGURE_NOT_DRAWN,
    REPORT_CSS,
    can_plot,
    card_figure,
    figure_to_png,
    html_card,
    html_figure,
    html_guarantee,
    html_key_figures,
    html_table,
    html_verdict,
    png_data_uri,
)
from ._indexing import take_rows
from ._optional import import_optional, user_stacklevel
from ._results import (
    ConfidenceInterval,
    check_confidence_level,
    data_frame,
)
from ._seeds import int_seed, seed_sequence
from ._text import format_value, json_safe
from ._validation import (
    ARRAY_LIKE,
    BOOLEAN,
    CALLABLE,
    COLUMN_LIST,
    N_JOBS,
    POSITIVE_INT,
    PROBABILITY,
    RANDOM_STATE,
    STRING,
    VERBOSE,
    InstanceOf,
    Interval,
    InvalidParameterError,
    Options,
    Predicate,
    check_params,
    column_list,
    column_positions,
    validate_params,
)

