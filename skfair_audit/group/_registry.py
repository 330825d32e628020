"""The procedure registry: every group procedure and every tilt class, declared once.

A :class:`Procedure` declares a group procedure: its name (the ``procedure=`` of
:class:`~skfair_audit.group.GroupDisparityAuditor` and the ``--procedure`` of the command
line), its parameters (:class:`Parameter`: name, default, constraints, documentation), its
default alternative (the default of its ``alternative`` parameter), its result class and its
implementation — the math, a function of an :class:`~skfair_audit.group.AuditSummary`
(``compute``) or, for a procedure that combines several summaries, of the rows (``rows``).
From the declaration the registry builds

* the public function ``function_name(y, y_pred, groups, *, ...)`` with its signature, its
  parameter validation and a numpydoc docstring assembled from the declaration;
* the method ``AuditSummary.<function_name>(*, ...)`` (summary procedures);
* the partitioned function ``skfair_audit.scale.partitioned_<function_name>`` (summary
  procedures, see :func:`skfair_audit.scale.summarize_trail`);

and the estimator and the command line dispatch through it. A :class:`TiltClass` declares a
class of tilts of covariates (``groups=`` of the estimator, ``--tilts`` of the command line)
and the function that audits it.

:func:`register_procedure` adds a declaration (a new procedure is one declaration plus its
math), :func:`unregister_procedure` removes it, :func:`get_procedure` and
:func:`registered_procedures` look them up.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from .._resampling import DEFAULT_MEMORY_LIMIT
from .._utils import PROBABILITY, Options, check_params
from ._summary import (
    BOOTSTRAP_CONSTRAINTS,
    FINITE,
    SCALE_CONSTRAINTS,
    TARGET,
    AuditSummary,
)


class _Required:
    """The default of a required parameter (no default)."""

    def __repr__(self):
        return "REQUIRED"


#: The default of a required parameter.
REQUIRED = _Required()

#: Parameters that build the audit summary (the rest go to the implementation).
DATA_PARAMETERS = ("metric", "target", "pos_label")


@dataclass(frozen=True)
class Parameter:
    """One parameter of a procedure: name, default, admissible values and documentation.

    Parameters
    ----------
    name : str
    default : object, default=REQUIRED
        ``REQUIRED`` (``skfair_audit.group.REQUIRED``) for a required parameter.
    constraints : list or None
        Admissible values (:class:`~skfair_audit.group.Interval`,
        :class:`~skfair_audit.group.Options`, ``None``, ...), checked at every call; None:
        not checked here (e.g. ``metric``, resolved by :func:`get_metric`).
    type : str
        The numpydoc type (``"float"``, ``'{"lower", "upper"}'``); parameters with the same
        type and documentation that follow each other are documented together.
    doc : str
        Its description in the docstrings (reStructuredText, may span lines).
    fallback : object, optional
        The value the estimator and the command line use for a required parameter left
        unset (``None``), e.g. ``epsilon0=0.0``.
    supplied_by : str, optional
        The parameter of :class:`~skfair_audit.group.GroupDisparityAuditor` (and option of
        the command line) that supplies it, when it is not the one of the same name: e.g.
        the ratio threshold ``threshold`` of ``certify_ratio`` is the estimator's
        ``epsilon0`` (the threshold of the procedure), never its ``threshold`` (the score
        threshold that turns scores into labels).
    """

    name: str
    default: object = REQUIRED
    constraints: list | None = None
    type: str = ""
    doc: str = ""
    fallback: object = REQUIRED
    supplied_by: str | None = None

    @property
    def required(self) -> bool:
        """Whether the parameter has no default."""
        return self.default is REQUIRED

    @property
    def key(self) -> str:
        """The estimator's parameter (command-line option) that supplies it."""
        return self.supplied_by or self.name


def alternative_parameter(choices, default, doc="") -> Parameter:
    """The ``alternative`` parameter of a procedure: its choices and its default.

    Parameters
    ----------
    choices : tuple of str
    default : str
    doc : str

    Returns
    -------
    Parameter
    """
    return Parameter("alternative", default, [Options(tuple(choices))],
                     "{" + ", ".join(f'"{c}"' for c in choices) + "}", doc)


# -- the shared parameters -----------------------------------------------------------------
METRIC = Parameter("metric", REQUIRED, None, "str, Metric or callable",
                   "See :func:`~skfair_audit.group.get_metric`.")
TARGET_PARAMETER = Parameter(
    "target", "overall", TARGET, 'float, "overall", str or bool array',
    "Known constant, the overall metric, or a reference group (name or row mask).")
POS_LABEL = Parameter("pos_label", None, None, "optional",
                      "Positive label, when ``metric`` is a name.")
ALPHA = Parameter("alpha", 0.1, [PROBABILITY], "float", "Simultaneous error level in (0, 1).")
EPSILON0 = Parameter("epsilon0", 0.0, FINITE, "float", "Null threshold of the disparity.")
SCALING = (
    Parameter("scale", "rescaled", SCALE_CONSTRAINTS["scale"], '{"rescaled", "unscaled"}',
              "Scales :math:`s_G`: rescaled (CLT widths above ``p_star``) or 1."),
    Parameter("p_star", 0.01, SCALE_CONSTRAINTS["p_star"], "float",
              "Floor of :math:`P_n(G)` in the rescaling."),
    Parameter("w0", np.inf, SCALE_CONSTRAINTS["w0"], "float",
              "Variance shrinkage: ``inf`` (default, recommended by the paper) uses the "
              "global sd."),
)
_BOOTSTRAP_DOC = (
    "Bootstrap controls: replicates, replicates per batch (memory), seed (None, int,\n"
    "RandomState, Generator or SeedSequence), parallel workers and a progress bar\n"
    "(``verbose``: 0 silent, otherwise a bar advanced batch by batch); results depend on\n"
    "neither ``n_jobs`` nor ``verbose``.")
_MEMORY_DOC = (
    "Memory budget of the bootstrap (bytes, or a string such as ``\"500MB\"``), with the\n"
    "meaning and the default of :class:`~skfair_audit.faith.FaithAuditor`'s: replicates\n"
    "are evaluated in chunks that fit it, and the results do not depend on it; a budget\n"
    "smaller than one replicate raises ``MemoryLimitError`` before anything is drawn.")
BOOTSTRAP = tuple(
    Parameter(name, default, BOOTSTRAP_CONSTRAINTS[name],
              'int, float, str or None, default="2GiB"' if name == "memory_limit" else "",
              _MEMORY_DOC if name == "memory_limit" else _BOOTSTRAP_DOC)
    for name, default in (("n_resamples", 1000), ("batch_size", None),
                          ("memory_limit", DEFAULT_MEMORY_LIMIT), ("random_state", None),
                          ("n_jobs", None), ("verbose", 0))
)
#: The paper of the group procedures (References of their docstrings).
CHERIAN_CANDES = ("Cherian, J. J. and Candès, E. J. (2024). Statistical inference for fairness "
                  "auditing.\nJournal of Machine Learning Research 25(149), 1–49.")
#: The rows of an in-memory audit: the first arguments of every procedure's function.
ROWS = (
    Parameter("y", REQUIRED, None, "array-like of shape (n_rows,)",
              "Outcomes and model outputs of the audit trail (numpy or pandas; ``y_pred``\n"
              "may be 2-D for coverage)."),
    Parameter("y_pred", REQUIRED, None, "array-like of shape (n_rows,)",
              "Outcomes and model outputs of the audit trail (numpy or pandas; ``y_pred``\n"
              "may be 2-D for coverage)."),
    Parameter("groups", REQUIRED, None, "GroupCollection, DataFrame, mapping or 1-D array",
              "The collection, or the sensitive features whose intersections are the groups."),
)


_COMMON = {p.name: (p,) for p in (METRIC, TARGET_PARAMETER, POS_LABEL, ALPHA, EPSILON0,
                                   *SCALING, *BOOTSTRAP)}
_COMMON.update(scaling=SCALING, bootstrap=BOOTSTRAP)


def common_parameters(*names) -> tuple:
    """The shared parameter declarations, to build a new procedure's ``parameters``.

    ``"metric"``, ``"target"``, ``"pos_label"`` (the data parameters, which build the
    :class:`AuditSummary`), ``"alpha"``, ``"epsilon0"``, ``"scale"``, ``"p_star"``, ``"w0"``
    and ``"n_resamples"`` ... ``"verbose"`` one by one, or the groups ``"scaling"`` (scale,
    p_star, w0) and ``"bootstrap"`` (n_resamples, batch_size, memory_limit, random_state,
    n_jobs, verbose), with the constraints, defaults and documentation of the built-in procedures.

    Parameters
    ----------
    *names : str

    Returns
    -------
    tuple of Parameter

    Examples
    --------
    >>> [p.name for p in common_parameters("metric", "target", "alpha")]
    ['metric', 'target', 'alpha']
    >>> len(common_parameters("bootstrap"))
    6
    """
    unknown = [n for n in names if n not in _COMMON]
    if unknown:
        raise ValueError(f"no common parameter {unknown}; choose among {', '.join(_COMMON)}.")
    return tuple(p for n in names for p in _COMMON[n])


# -- generated functions ---------------------------------------------------------------------
def parameter_docs(parameters) -> list:
    """The numpydoc ``Parameters`` lines of ``parameters`` (neighbours with the same type and
    description are documented together).

    Parameters
    ----------
    parameters : iterable of Parameter

    Returns
    -------
    list of str
    """
    entries = []
    for p in parameters:
        if entries and entries[-1][1:] == (p.type, p.doc):
            entries[-1][0].append(p.name)
        else:
            entries.append(([p.name], p.type, p.doc))
    lines = []
    for names, type_, doc in entries:
        head = ", ".join(names)
        lines.append(f"{head} : {type_}" if type_ else head)
        lines += ["    " + line for line in inspect.cleandoc(doc).splitlines()]
    return lines


def docstring(summary, *, description="", parameters=(), returns=None, see_also=(),
              references="", examples="") -> str:
    """A numpydoc docstring assembled from its parts.

    Parameters
    ----------
    summary : str
        The one-line summary.
    description : str
        Extended description (math, guarantee).
    parameters : iterable of Parameter
    returns : (str, str), optional
        Type and description of the returned value.
    see_also : iterable of str
        Lines of the See Also section.
    references : str
        Text of the References section.
    examples : str
        Doctest lines of the Examples section.

    Returns
    -------
    str
    """
    lines = [inspect.cleandoc(summary), ""]
    if description:
        lines += [inspect.cleandoc(description), ""]
    lines += ["Parameters", "----------", *parameter_docs(parameters), ""]
    if returns is not None:
        lines += ["Returns", "-------", returns[0]]
        lines += ["    " + line for line in inspect.cleandoc(returns[1]).splitlines()]
        lines.append("")
    if see_also:
        lines += ["See Also", "--------", *see_also, ""]
    if references:
        lines += ["References", "----------", inspect.cleandoc(references), ""]
    if examples:
        lines += ["Examples", "--------", inspect.cleandoc(examples), ""]
    return "\n".join(lines)


def make_function(name, *, positional, parameters, body, doc, module, qualname=None,
                  returns=inspect.Signature.empty):
    """A function with a real signature that validates its arguments and calls ``body``.

    Parameters
    ----------
    name : str
    positional : iterable of str
        Positional-or-keyword parameters (``"self"`` for a method).
    parameters : iterable of Parameter
        Keyword-only parameters, in signature order; their ``constraints`` are checked at
        every call (the declared constraints).
    body : callable
        Called with every argument by name (defaults applied).
    doc : str
    module : str
        ``__module__`` of the function (where it is documented).
    qualname : str, optional
    returns : str, optional
        Return annotation.

    Returns
    -------
    callable
    """
    parameters = tuple(parameters)
    signature = inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in positional]
        + [inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY,
                             default=inspect.Parameter.empty if p.required else p.default)
           for p in parameters],
        return_annotation=returns)
    constraints = {p.name: p.constraints for p in parameters if p.constraints is not None}

    def function(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        check_params(bound.arguments, constraints)
        return body(**bound.arguments)

    function.__name__ = name
    function.__qualname__ = qualname or name
    function.__module__ = module
    function.__doc__ = doc
    function.__signature__ = signature
    return function


# -- declarations ------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Procedure:
    """The declaration of a group procedure, from which its whole API is built.

    Parameters
    ----------
    name : str
        ``procedure=`` of the estimator and ``--procedure`` of the command line.
    function_name : str
        Name of the public function and of the :class:`AuditSummary` method (the
        partitioned function is ``partitioned_<function_name>``).
    summary : str
        One-line summary of the function's docstring.
    result : type
        The result class.
    parameters : tuple of Parameter
        Keyword-only parameters of the function, in signature order: the data parameters
        (``metric``, ``target``, ``pos_label``) build the summary, the others go to the
        implementation. Declare an ``alternative`` parameter with
        :func:`alternative_parameter`: its choices and default are the procedure's.
    compute : callable, optional
        ``compute(summary, **options) -> result``: the procedure on an
        :class:`AuditSummary` (gives the method and the partitioned function too).
    rows : callable, optional
        ``rows(y, y_pred, groups, **options) -> result``, for a procedure that is not one
        summary's (e.g. equalized odds: two metrics). Exactly one of ``compute`` and
        ``rows``.
    description : str
        Extended description of the function (math, guarantee).
    returns : str
        Description of the result in the Returns sections.
    references : str
        References section of the function's docstring.
    examples : mapping
        Doctest text per API: ``"function"``, ``"partitioned"``.
    bootstrap : bool
        Whether the partitioned function draws bootstrap replicates (it then takes the
        partitioned bootstrap controls).
    partitioned_fixed : mapping
        Options fixed in the partitioned function (e.g. ``{"se": "delta"}``), left out of
        its signature.
    """

    name: str
    function_name: str
    summary: str
    result: type
    parameters: tuple
    compute: Callable | None = None
    rows: Callable | None = None
    description: str = ""
    returns: str = ""
    references: str = ""
    examples: Mapping = field(default_factory=dict)
    bootstrap: bool = True
    partitioned_fixed: Mapping = field(default_factory=dict)
    function: Callable = field(init=False, repr=False)
    method: Callable | None = field(init=False, repr=False)

    def __post_init__(self):
        if (self.compute is None) == (self.rows is None):
            raise ValueError(f"procedure {self.name!r}: declare exactly one of compute "
                             "(on an AuditSummary) and rows.")
        names = [p.name for p in self.parameters]
        if len(set(names)) != len(names):
            raise ValueError(f"procedure {self.name!r} declares a parameter twice.")
        object.__setattr__(self, "parameters", tuple(self.parameters))
        object.__setattr__(self, "examples", MappingProxyType(dict(self.examples)))
        object.__setattr__(self, "partitioned_fixed",
                           MappingProxyType(dict(self.partitioned_fixed)))
        object.__setattr__(self, "function", self._build_function())
        object.__setattr__(self, "method", self._build_method() if self.on_summary else None)

    @property
    def on_summary(self) -> bool:
        """Whether the procedure runs on one :class:`AuditSummary` (method, partitioned)."""
        return self.compute is not None

    @property
    def options(self) -> tuple:
        """The parameters of the implementation (every parameter but the data ones)."""
        return tuple(p for p in self.parameters if p.name not in DATA_PARAMETERS)

    def parameter(self, name) -> Parameter | None:
        """The declared parameter ``name`` (None when the procedure has none).

        Parameters
        ----------
        name : str

        Returns
        -------
        Parameter or None
        """
        return next((p for p in self.parameters if p.name == name), None)

    def supplied(self, key) -> Parameter | None:
        """The parameter that the estimator's parameter ``key`` supplies (None when none).

        Parameters
        ----------
        key : str
            E.g. ``"epsilon0"``: the ratio threshold of ``certify_ratio``, the null threshold
            of ``flag``.

        Returns
        -------
        Parameter or None
        """
        return next((p for p in self.parameters if p.key == key), None)

    @property
    def alternatives(self) -> tuple:
        """Choices of ``alternative`` (empty when the procedure has none)."""
        p = self.parameter("alternative")
        return tuple(p.constraints[0].values) if p is not None else ()

    @property
    def default_alternative(self) -> str | None:
        """Default of ``alternative`` (None when the procedure has none)."""
        p = self.parameter("alternative")
        return p.default if p is not None else None

    def _returns(self):
        return (self.result.__name__, self.returns or f"The result of {self.function_name}.")

    def _build_function(self):
        compute, rows = self.compute, self.rows

        def body(y, y_pred, groups, **options):
            if rows is not None:
                return rows(y, y_pred, groups, **options)
            data = {k: options.pop(k) for k in DATA_PARAMETERS if k in options}
            return compute(AuditSummary.from_rows(y, y_pred, groups, **data), **options)

        see_also = (f"AuditSummary.{self.function_name} : the same on a summary (e.g. of a "
                    "partitioned trail).",) if self.on_summary else ()
        return make_function(
            self.function_name, positional=[p.name for p in ROWS],
            parameters=self.parameters, body=body, module="skfair_audit.group._procedures",
            returns=self.result.__name__,
            doc=docstring(self.summary, description=self.description,
                          parameters=ROWS + self.parameters, returns=self._returns(),
                          see_also=see_also, references=self.references,
                          examples=self.examples.get("function", "")))

    def _build_method(self):
        compute = self.compute

        def body(self, **options):
            return compute(self, **options)

        return make_function(
            self.function_name, positional=["self"], parameters=self.options, body=body,
            module="skfair_audit.group._summary",
            qualname=f"AuditSummary.{self.function_name}",
            doc=docstring(self.summary,
                          description=f"See :func:`skfair_audit.group.{self.function_name}` "
                                      "for the method and the parameters (the summary holds "
                                      "the rows, the metric and the target).",
                          parameters=self.options, returns=self._returns()))

    def resolve(self, given) -> dict:
        """The options of a call from the estimator's or the command line's values.

        Every parameter of the procedure found in ``given`` (under its :attr:`Parameter.key`)
        is passed; ``None`` stands for the procedure's default (a required parameter's
        ``fallback``).

        Parameters
        ----------
        given : mapping
            Values by parameter name (the estimator's parameters, the command line's
            options).

        Returns
        -------
        dict
        """
        return resolve_options(self.name, self.parameters, given)


def resolve_options(name, parameters, given) -> dict:
    """The keyword arguments of ``parameters`` found in ``given``; None means the default.

    Parameters
    ----------
    name : str
        The procedure or tilt class (for the error message).
    parameters : iterable of Parameter
    given : mapping
        Values by :attr:`Parameter.key` (the name, or the estimator's parameter that
        supplies it).

    Returns
    -------
    dict
    """
    options = {}
    for p in parameters:
        if p.key not in given:
            continue
        value = given[p.key]
        if value is None:
            if p.required and p.fallback is REQUIRED:
                raise ValueError(f"{name!r} needs {p.name} (got None).")
            value = p.fallback if p.required else p.default
        options[p.name] = value
    return options


def signature_parameters(function) -> tuple:
    """The keyword parameters of a hand-written function as :class:`Parameter` objects.

    Parameters
    ----------
    function : callable

    Returns
    -------
    tuple of Parameter
    """
    return tuple(Parameter(p.name, REQUIRED if p.default is p.empty else p.default) for p in
                 inspect.signature(function).parameters.values()
                 if p.kind is inspect.Parameter.KEYWORD_ONLY)


@dataclass(frozen=True, eq=False)
class TiltClass:
    """The declaration of a class of tilts of covariates and of the function auditing it.

    Parameters
    ----------
    name : str
        ``groups=`` of the estimator, ``--tilts`` of the command line.
    function : callable
        ``function(y=y, y_pred=y_pred, **covariates, **options) -> result``.
    n_covariates : tuple of int
        How many covariates the class takes.
    covariates : callable
        ``covariates(names, columns) -> dict``: the keyword arguments giving the covariates
        (numeric 1-D arrays ``columns`` named ``names``) to ``function``.
    summary : str
        What the class is, in a few words (help texts).
    """

    name: str
    function: Callable
    n_covariates: tuple
    covariates: Callable
    summary: str

    @property
    def parameters(self) -> tuple:
        """The keyword parameters of :attr:`function`."""
        return signature_parameters(self.function)

    def check_covariates(self, n, what=None, noun="sensitive feature"):
        """Raise a ValueError unless the class takes ``n`` covariates.

        Parameters
        ----------
        n : int
        what : str, optional
            How the class is named in the message (default ``groups='<name>'``).
        noun : str
            How one covariate is named in the message.
        """
        if n not in self.n_covariates:
            words = {1: "one", 2: "two", 3: "three"}
            counts = [words.get(k, str(k)) for k in self.n_covariates]
            what = what or f"groups={self.name!r}"
            needs = (f"exactly {counts[0]} {noun}" if len(counts) == 1 else
                     f"{', '.join(counts[:-1])} or {counts[-1]} {noun}s")
            raise ValueError(f"{what} needs {needs}, got {n}.")

    def run(self, y, y_pred, names, columns, given):
        """Audit the tilts of ``columns`` with the options found in ``given``.

        Parameters
        ----------
        y, y_pred : array-like
            The audit trail.
        names : list of str
            Names of the covariates.
        columns : list of array-like
            The covariates.
        given : mapping
            Values by parameter name (None: the function's default).

        Returns
        -------
        result
        """
        self.check_covariates(len(columns))
        options = resolve_options(self.name, self.parameters, given)
        return self.function(y=y, y_pred=y_pred, **self.covariates(names, columns), **options)


# -- the registry ------------------------------------------------------------------------------
_PROCEDURES: dict = {}
_TILTS: dict = {}


def register_procedure(procedure):
    """Add a procedure (or a tilt class) to the registry; returns its public function.

    The procedure is then ``procedure=`` of :class:`GroupDisparityAuditor`, ``--procedure``
    of the command line, ``skfair_audit.group.<function_name>``, the method
    ``AuditSummary.<function_name>`` and ``skfair_audit.scale.partitioned_<function_name>``
    (summary procedures). A :class:`TiltClass` becomes ``groups=`` of the estimator and
    ``--tilts`` of the command line.

    Parameters
    ----------
    procedure : Procedure or TiltClass

    Returns
    -------
    callable
        The public function of the procedure.

    Examples
    --------
    >>> from skfair_audit.group import (AuditSummary, GroupBoundsResult, Parameter,
    ...                                 Procedure, register_procedure, unregister_procedure)
    >>> def lower_bounds(summary, *, alpha):  # the math: here, the built-in lower bounds
    ...     return summary.certify_bounds(alternative="lower", alpha=alpha,
    ...                                   n_resamples=100, random_state=0)
    >>> declaration = Procedure(
    ...     "lower", "lower_bounds", "Lower bounds on every group's disparity.",
    ...     GroupBoundsResult,
    ...     (*common_parameters("metric", "target"),
    ...      Parameter("alpha", 0.1, None, "float", "Error level."),
    ...      *common_parameters("pos_label")),
    ...     compute=lower_bounds)
    >>> lower_bounds_function = register_procedure(declaration)
    >>> "lower" in registered_procedures(), hasattr(AuditSummary, "lower_bounds")
    (True, True)
    >>> unregister_procedure("lower")
    >>> hasattr(AuditSummary, "lower_bounds")
    False
    """
    if isinstance(procedure, TiltClass):
        if procedure.name in _TILTS:
            raise ValueError(f"a tilt class named {procedure.name!r} is registered already.")
        _TILTS[procedure.name] = procedure
        return procedure.function
    if not isinstance(procedure, Procedure):
        raise TypeError(f"expected a Procedure or a TiltClass, got {type(procedure).__name__}.")
    if procedure.name in _PROCEDURES or procedure.name in _TILTS:
        raise ValueError(f"a procedure named {procedure.name!r} is registered already.")
    taken = {p.function_name for p in _PROCEDURES.values()}
    package = sys.modules.get(__package__)  # partly initialised while it registers its own
    if package is not None:
        taken.update(vars(package))
    if procedure.function_name in taken or (
            procedure.on_summary and hasattr(AuditSummary, procedure.function_name)):
        raise ValueError(f"the name {procedure.function_name!r} is taken.")
    _PROCEDURES[procedure.name] = procedure
    if procedure.on_summary:
        setattr(AuditSummary, procedure.function_name, procedure.method)
    return procedure.function


def unregister_procedure(name) -> None:
    """Remove a procedure or a tilt class from the registry (the inverse of
    :func:`register_procedure`).

    Parameters
    ----------
    name : str
        The ``name`` of its declaration.
    """
    if name in _TILTS:
        del _TILTS[name]
        return
    procedure = get_procedure(name)
    del _PROCEDURES[name]
    if procedure.on_summary:
        delattr(AuditSummary, procedure.function_name)


def get_procedure(name):
    """The declaration of a registered procedure or tilt class.

    Parameters
    ----------
    name : str

    Returns
    -------
    Procedure or TiltClass
    """
    if name in _PROCEDURES:
        return _PROCEDURES[name]
    if name in _TILTS:
        return _TILTS[name]
    raise ValueError(f"unknown procedure {name!r}; registered: "
                     f"{', '.join([*_PROCEDURES, *_TILTS])}.")


def registered_procedures(kind="procedures") -> tuple:
    """Names of the registered procedures (``kind="procedures"``), of the summary
    procedures (``"summary"``: those with a method and a partitioned function) or of the tilt
    classes (``"tilts"``), in registration order.

    Parameters
    ----------
    kind : {"procedures", "summary", "tilts"}

    Returns
    -------
    tuple of str
    """
    if kind == "tilts":
        return tuple(_TILTS)
    if kind == "summary":
        return tuple(n for n, p in _PROCEDURES.items() if p.on_summary)
    if kind == "procedures":
        return tuple(_PROCEDURES)
    raise ValueError(f"kind must be 'procedures', 'summary' or 'tilts', got {kind!r}.")


def procedure_of_function(function_name):
    """The registered procedure whose public function is ``function_name`` (or None).

    Parameters
    ----------
    function_name : str

    Returns
    -------
    Procedure or None
    """
    return next((p for p in _PROCEDURES.values() if p.function_name == function_name), None)


class Registered(Options):
    """Constraint: the name of a registered procedure (``kind`` as in
    :func:`registered_procedures`), read at every check."""

    def __init__(self, kind):
        object.__setattr__(self, "kind", kind)

    @property
    def values(self):
        return registered_procedures(self.kind)

    def __hash__(self):
        return hash(("Registered", self.kind))


class RegisteredAlternative(Options):
    """Constraint: an ``alternative`` of some registered procedure."""

    def __init__(self):
        pass

    @property
    def values(self):
        return tuple(dict.fromkeys(a for name in registered_procedures()
                                   for a in get_procedure(name).alternatives))

    def __hash__(self):
        return hash("RegisteredAlternative")
