"""Verdict rules (issue 50): how the status of a claim follows from the committed evidence.

Pure functions over small records of results; the docs page ``docs/verdicts.md`` ("How a verdict is decided")
states the same rules in words.  A paper's ``claims.py`` declares what the paper printed (value, tolerance) and, for a
claim measured by training, a :class:`TrainedRule` (the printed privacy level and the paper's accounting, the
positive control's pipeline, a stand-in-data caveat); its notebook turns the committed result files into
:class:`Run` records and :func:`decide` computes the status.  No value of ours lives in source.

The rules, for a trained claim with printed value ``p`` and tolerance ``tol``:

1. *One verdict per claim.*  Full-scale runs, where there are any, are the evidence; reduced runs decide only a
   claim that holds at any scale (``scale="any"``) and no full-scale run exists; a full-scale claim with reduced
   runs only is *not run* (reduced at this profile), its reduced values in the note.
2. *Privacy level.*  A run counts when its ε under the paper's own accounting (named in the rule) is at or below the
   printed level (relative slack :data:`EPS_RTOL`); runs at another level are reported beside the verdict and never
   decide it.  No run at the printed level: *not run*.
3. *reproduced*: some run of the algorithm as printed (``Run.printed``) at the printed level matches ``p`` within
   ``tol``; where the paper leaves a setting open, any value of it counts and the verdict names the run that matched.
4. *closest reading*: among every reading at the printed level, the run nearest ``p`` (for an accuracy that misses
   from below: the maximum over the committed runs); its seeds are the runs of the same reading and setting.
5. *not reproduced* needs all of: the closest misses ``p`` by more than ``tol``; by more than
   :data:`SPREAD_FACTOR` times the seed spread (sample standard deviation) of the closest reading; with at least
   :data:`MIN_SEEDS` seeds where the gap is under ``few_seeds_gap`` (3 percentage points by default); and the
   pipeline's positive control holds (a reference row reproducing a published private result with the same data and
   model family).  Otherwise *inconclusive*, naming each condition that failed.
6. Stand-in data (a data set the paper does not name, a re-encoded mirror) is part of the verdict line.

Audit rows (our checks of the authors' code) have statuses of their own (:data:`AUDIT_STATUSES`), never
``reproduced``; a finding that says an implementation exceeds its claimed ε changes a conclusion only with a lower
bound valid at a stated confidence (:func:`clopper_pearson_epsilon`); otherwise it is an estimate
(:func:`audit_changes_conclusion`).  :func:`changes_conclusion` is the rule for an erratum's weight, and
:func:`count_by_status` the one count every summary uses.

>>> rule = TrainedRule(epsilon=35.0, accounting="A_1 (Def. 5.2)", pipeline="mnist-lenet")
>>> runs = [Run("a/seed0", "as printed", 0.90, 35.0, True, "C = 1", 0), Run("a/seed1", "as printed", 0.91, 35.0,
...         True, "C = 1", 1), Run("a/seed2", "as printed", 0.905, 35.0, True, "C = 1", 2)]
>>> decide(0.98, runs, rule, atol=0.005, control=Control("ref.x", True, "ref.x reproduced")).status
'not-reproduced'
>>> decide(0.98, runs, rule, atol=0.005).status  # no positive control
'inconclusive'
>>> decide(0.905, runs, rule, atol=0.005).status
'reproduced'
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

__all__ = [
    "ALL_STATUSES",
    "AUDIT_STATUSES",
    "AUDIT_WORDS",
    "CLAIM_STATUSES",
    "EPS_RTOL",
    "FEW_SEEDS_GAP",
    "MIN_SEEDS",
    "SPREAD_FACTOR",
    "STATUS_WORDS",
    "Control",
    "Run",
    "TrainedRule",
    "Verdict",
    "Weight",
    "audit_changes_conclusion",
    "audit_status",
    "changes_conclusion",
    "clopper_pearson",
    "clopper_pearson_epsilon",
    "control_from_records",
    "count_by_status",
    "count_phrase",
    "decide",
    "merge_profiles",
    "scope_phrase",
]

#: the statuses of a claim of a paper (the guide's vocabulary; ``differs``: not yet investigated, fails the build)
CLAIM_STATUSES = ("reproduced", "erratum", "not-reproduced", "inconclusive", "differs", "not-run")
#: the statuses of an audit row (``source = audit``: our check of the authors' code), in their own words
AUDIT_STATUSES = ("fails-audit", "passes-audit", "authors-code")
ALL_STATUSES = CLAIM_STATUSES + AUDIT_STATUSES
AUDIT_WORDS: dict[str, str] = {
    "fails-audit": "claim fails the audit",
    "passes-audit": "claim passes the audit",
    "authors-code": "reached only under the authors' code",
}
#: every status in the words a table, figure or page shows
STATUS_WORDS: dict[str, str] = {
    "reproduced": "reproduced", "erratum": "erratum", "not-reproduced": "not reproduced",
    "inconclusive": "inconclusive", "differs": "differs", "not-run": "not run", **AUDIT_WORDS,
}  # fmt: skip
#: a run is at the printed privacy level when its ε <= printed ε · (1 + EPS_RTOL)
EPS_RTOL = 1e-3
#: the gap must exceed this many seed spreads (sample standard deviations) of the closest reading
SPREAD_FACTOR = 2.0
#: seeds of the closest reading needed where the gap is under :data:`FEW_SEEDS_GAP`
MIN_SEEDS = 3
#: the gap (in the claim's unit; percentage points for Table-style accuracies) under which seeds are required
FEW_SEEDS_GAP = 3.0
#: a positive control holds when our mean is within max(2 published spreads, 2 of our seed spreads, this) points of
#: the published value, at or below the published ε (:func:`control_from_records`)
CONTROL_ATOL = 1.0
#: relative change of a number that, by default, changes a conclusion (:func:`changes_conclusion`)
CONCLUSION_REL = 0.1
SCALES = ("full", "reduced")


@dataclass(frozen=True)
class Run:
    """One committed run read as evidence for a trained claim.

    ``reading``: which reading of the paper it is (e.g. "Algorithm 1 as printed", "authors' code 93f6075");
    ``value``: the claim's quantity (same unit as the printed value; a bool for a direction claim, then ``margin``
    is its distance from the decision boundary in the claim's unit); ``epsilon``: ε of the noise that ran under the
    paper's accounting (``inf`` for a non-private run); ``printed``: the algorithm as printed (not an ablation or a
    mode of the authors' code); ``setting``: what distinguishes runs of one reading besides the seed ("|S_b| = 512,
    C = 20"); ``scale``: ``full`` or ``reduced``; ``source``: the result file.  A run whose ``value`` (or ``margin``)
    is a mean over ``trials`` independent trials (paper 001's figures: means over trials) carries its standard error
    ``se`` (paired where the claim compares two curves of the same trials): alone in its group it stands for
    ``trials`` seeds with that spread (rule 5 with the standard error in place of the seeds' standard deviation).
    ``epsilon_printed``: where the paper prints a noise level rather than an ε, the ε of the printed noise level at
    this run's setting (same accounting), which is then the printed level for this run (NaN: the rule's ``epsilon``).
    """

    name: str
    reading: str
    value: float | bool
    epsilon: float
    printed: bool
    setting: str = ""
    seed: int = 0
    scale: str = "full"
    source: str = ""
    margin: float = math.nan
    se: float = math.nan
    trials: int = 1
    epsilon_printed: float = math.nan

    def __post_init__(self) -> None:
        if not isinstance(self.trials, int) or self.trials < 1:
            raise ValueError(f"trials must be an int >= 1, got {self.trials!r} ({self.name})")
        if not isinstance(self.se, int | float) or self.se < 0:
            raise ValueError(f"se must be a number >= 0 (NaN: none), got {self.se!r} ({self.name})")
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        if not isinstance(self.reading, str) or not self.reading:
            raise ValueError(f"reading must be a non-empty string, got {self.reading!r}")
        if not isinstance(self.value, bool) and not (isinstance(self.value, int | float) and math.isfinite(self.value)):
            raise ValueError(f"value must be a finite number or a bool, got {self.value!r} ({self.name})")
        if not isinstance(self.epsilon, int | float) or math.isnan(self.epsilon) or self.epsilon < 0:
            raise ValueError(f"epsilon must be a number in [0, inf], got {self.epsilon!r} ({self.name})")
        if self.scale not in SCALES:
            raise ValueError(f"scale must be one of {SCALES}, got {self.scale!r}")
        if not isinstance(self.printed, bool):
            raise ValueError(f"printed must be a bool, got {self.printed!r}")

    @property
    def group(self) -> tuple[str, str, str]:
        """The runs of one reading and setting at one scale: seeds of each other."""
        return (self.reading, self.setting, self.scale)


@dataclass(frozen=True)
class Control:
    """The positive control of a pipeline: ``key`` of the reference row, whether it ``holds`` (it reproduces a
    published private result with the same data and model family), and ``what`` it shows in one line."""

    key: str
    holds: bool
    what: str = ""


@dataclass(frozen=True)
class TrainedRule:
    """How a trained claim is decided (declared in the paper's ``claims.py``): ``epsilon`` the printed privacy level
    under ``accounting`` (the paper's own, named; ``inf`` for a non-private claim; NaN where the paper prints a noise
    level and each run carries the ε of that level at its setting, ``Run.epsilon_printed``); ``pipeline`` the tag of the
    positive control that must hold; ``stand_in`` a stand-in-data caveat ("" when the paper's data set is used);
    ``few_seeds_gap`` / ``min_seeds`` / ``spread_factor`` the seed requirements (:data:`FEW_SEEDS_GAP`, ...);
    ``open_settings`` what the paper leaves open (any value counts), for the note."""

    epsilon: float
    accounting: str
    pipeline: str = ""
    stand_in: str = ""
    few_seeds_gap: float = FEW_SEEDS_GAP
    min_seeds: int = MIN_SEEDS
    spread_factor: float = SPREAD_FACTOR
    open_settings: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.epsilon, int | float) or self.epsilon <= 0:  # NaN: per run (Run.epsilon_printed)
            raise ValueError(f"epsilon must be a number in (0, inf] or NaN (per run), got {self.epsilon!r}")
        if not isinstance(self.accounting, str) or not self.accounting.strip():
            raise ValueError(f"accounting must name the paper's accounting, got {self.accounting!r}")
        if not isinstance(self.min_seeds, int) or self.min_seeds < 1:
            raise ValueError(f"min_seeds must be an int >= 1, got {self.min_seeds!r}")
        for name in ("few_seeds_gap", "spread_factor"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")

    def at_level(self, run: Run) -> bool:
        """Whether ``run`` is at or below the printed privacy level (rule 2): the run's ``epsilon_printed`` where
        finite, else the rule's ``epsilon`` (NaN there and on the run: not at the level)."""
        level = run.epsilon_printed if math.isfinite(run.epsilon_printed) else self.epsilon
        if math.isnan(level):
            return False
        if math.isinf(level):
            return True
        return run.epsilon <= level * (1 + EPS_RTOL)


@dataclass(frozen=True)
class Verdict:
    """The decided status, our value (the matching run's, else the closest run's), the closest run, the conditions
    that failed (for an inconclusive), and the note that names the runs, the closest reading, the control."""

    status: str
    value: float | bool | None
    note: str
    closest: Run | None = None
    failed: tuple[str, ...] = field(default_factory=tuple)


def _finite(value: object) -> float:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan
    return number


def control_from_records(records: Iterable[Mapping], pipeline: str) -> Control | None:
    """The positive control of ``pipeline`` from the rows of ``dpcore.papers.reference.controls.control_frame``
    (issue 51; e.g. ``frame.to_dict("records")``): the rows whose ``pipelines`` text contains ``pipeline`` and that
    ran (``seeds_done`` >= 1, not ``reduced``).  A row holds when our ε (``epsilon_training``) is at or below the
    published one (``their_epsilon``, relative :data:`EPS_RTOL`) and our mean final accuracy is within
    max(2 × published spread, 2 × our seed spread, :data:`CONTROL_ATOL`) points of the published value; the control
    holds when some private row holds (a non-private row alone vouches for no private result).  None when no such
    row ran (the verdict then says no control is committed)."""
    if not isinstance(pipeline, str) or not pipeline:
        raise ValueError(f"pipeline must be a non-empty string, got {pipeline!r}")
    ran = []
    for rec in records:
        if pipeline not in str(rec.get("pipelines", "")) or bool(rec.get("reduced", False)):
            continue
        if not _finite(rec.get("seeds_done")) >= 1:
            continue
        ran.append(rec)
    if not ran:
        return None
    said, held = [], []
    for rec in ran:
        theirs, ours = _finite(rec.get("their_epsilon")), _finite(rec.get("epsilon_training"))
        published, mean = _finite(rec.get("published_pct")), _finite(rec.get("mean_final_pct"))
        spread = [2 * x for x in (_finite(rec.get("published_spread_pct")), _finite(rec.get("std_final_pct")))
                  if math.isfinite(x)]  # fmt: skip
        tol = max([CONTROL_ATOL, *spread])
        private = math.isfinite(theirs)
        ok = private and ours <= theirs * (1 + EPS_RTOL) and abs(mean - published) <= tol
        held.append(ok)
        verdict = "" if ok else (" -- non-private: vouches for no private result" if not private
                                 else " -- does not hold")  # fmt: skip
        said.append(f"{rec.get('key')}: {mean:.2f} vs published {published:.2f} ± {tol:.2g} at ε {_eps(ours)} "
                    f"(theirs {_eps(theirs)}){verdict}")  # fmt: skip
    keys = ", ".join(str(r.get("claim_key") or r.get("key")) for r in ran)
    return Control(keys, any(held), "; ".join(said))


def _fmt(value: float | bool) -> str:
    return str(value) if isinstance(value, bool) else f"{value:.4g}"


def _eps(value: float) -> str:
    return "∞" if math.isinf(value) else f"{value:.3g}"


def _describe(run: Run) -> str:
    setting = f", {run.setting}" if run.setting else ""
    return f"{run.reading}{setting}, seed {run.seed}: {_fmt(run.value)} at ε {_eps(run.epsilon)} ({run.name})"


def _distance(run: Run, printed: float | bool) -> float:
    if isinstance(printed, bool) or isinstance(run.value, bool):
        if bool(run.value) == bool(printed):
            return 0.0
        return abs(run.margin) if math.isfinite(run.margin) else math.inf
    return abs(float(run.value) - float(printed))


def _seed_stats(group: list[Run]) -> tuple[int, float, float]:
    """(seeds, mean, sample standard deviation; NaN with one seed) of numeric runs; bools give NaN mean/sd."""
    seeds = len({r.seed for r in group})
    if len(group) == 1 and math.isfinite(group[0].se):  # a mean over trials with its standard error
        run = group[0]
        return run.trials, math.nan if isinstance(run.value, bool) else float(run.value), float(run.se)
    if any(isinstance(r.value, bool) for r in group):
        margins = [r.margin for r in group if math.isfinite(r.margin)]
        sd = statistics.stdev(margins) if len(margins) > 1 else math.nan
        return seeds, math.nan, sd
    values = [float(r.value) for r in group]
    return seeds, statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else math.nan


def decide(printed: float | bool, runs: Iterable[Run], rule: TrainedRule, *, atol: float = 0.0, rtol: float = 0.0,
           control: Control | None = None, full_scale: bool = True) -> Verdict:  # fmt: skip
    """The verdict of a trained claim printed as ``printed`` (tolerance ``atol + rtol·|printed|``) from ``runs``
    under ``rule`` (the module docstring's rules 1-6); ``control`` the pipeline's positive control (None: not
    committed); ``full_scale``: the claim needs the paper's scale (``ClaimSpec.scale == "full"``)."""
    if not isinstance(rule, TrainedRule):
        raise ValueError(f"rule must be a TrainedRule, got {type(rule).__name__}")
    runs = list(runs)
    if not all(isinstance(r, Run) for r in runs):
        raise ValueError("runs must be Run records")
    for name, tol in (("atol", atol), ("rtol", rtol)):
        if not isinstance(tol, int | float) or not math.isfinite(tol) or tol < 0:
            raise ValueError(f"{name} must be a finite number >= 0, got {tol!r}")
    tol = 0.0 if isinstance(printed, bool) else atol + rtol * abs(float(printed))
    caveat = f"stand-in data: {rule.stand_in}" if rule.stand_in else ""
    full = [r for r in runs if r.scale == "full"]
    used = full or runs
    if not used:
        return Verdict("not-run", None, _join("no committed run", caveat))
    if not full and full_scale:
        reduced = "; ".join(_describe(r) for r in sorted(runs, key=lambda r: _distance(r, printed))[:3])
        return Verdict("not-run", None, _join(f"reduced runs only (a full-scale claim): {reduced}", caveat))
    scale = "full-scale" if full else "reduced"
    level = [r for r in used if rule.at_level(r)]
    beside = [r for r in used if not rule.at_level(r)]
    beside_note = ""
    if beside:
        best = min(beside, key=lambda r: _distance(r, printed))
        beside_note = (f"beside (another privacy level, never decides): {len(beside)} run(s), nearest "
                       f"{_describe(best)}")  # fmt: skip
    printed_eps = _eps(rule.epsilon) if not math.isnan(rule.epsilon) else "that of the printed noise at each setting"
    level_note = f"printed level ε <= {printed_eps} under {rule.accounting}"
    if not level:
        return Verdict("not-run", None, _join(f"no {scale} run at the {level_note}", beside_note, caveat))
    readings = sorted({r.reading for r in level})
    evidence = f"{len(level)} {scale} run(s) at the {level_note}, readings: {', '.join(readings)}"
    matched = [r for r in level if r.printed and _distance(r, printed) <= tol]
    if matched:
        hit = min(matched, key=lambda r: (_distance(r, printed), r.name))
        opened = f" (the paper leaves open {rule.open_settings}: any value counts)" if rule.open_settings else ""
        note = _join(f"reproduced by {_describe(hit)}{opened}", evidence, beside_note, caveat)
        return Verdict("reproduced", hit.value, note, hit)
    closest = min(level, key=lambda r: (_distance(r, printed), r.name))
    gap = _distance(closest, printed)
    group = [r for r in level if r.group == closest.group]
    seeds, mean, sd = _seed_stats(group)
    spread = f"mean {mean:.4g} ± {sd:.2g} over {seeds} seed(s)" if math.isfinite(mean) and seeds > 1 else (
        f"{seeds} seed(s)")  # fmt: skip
    if len(group) == 1 and math.isfinite(closest.se):
        spread = f"a mean over {closest.trials} trials, standard error {closest.se:.2g}"
    failed: list[str] = []
    if gap <= tol:
        failed.append(f"only {closest.reading} (not the algorithm as printed) reaches it")
    if seeds > 1 and math.isfinite(sd) and not gap > rule.spread_factor * sd:
        failed.append(f"gap {_fmt(gap)} is within {rule.spread_factor:g} seed spreads (sd {sd:.2g})")
    if gap < rule.few_seeds_gap and seeds < rule.min_seeds:
        failed.append(f"gap {_fmt(gap)} < {rule.few_seeds_gap:g} needs >= {rule.min_seeds} seeds of the closest "
                      f"reading, has {seeds}")  # fmt: skip
    if control is None:
        failed.append(f"no positive control of pipeline {rule.pipeline or '(none named)'} committed")
    elif not control.holds:
        failed.append(f"positive control {control.key} does not hold")
    ctrl = f"positive control {control.key}: {control.what or ('holds' if control.holds else 'fails')}" if (
        control is not None) else ""  # fmt: skip
    closest_note = f"closest reading: {_describe(closest)} ({spread}); gap {_fmt(gap)} (tolerance {_fmt(tol)})"
    status = "not-reproduced" if not failed else "inconclusive"
    why = f"inconclusive: {'; '.join(failed)}" if failed else ""
    return Verdict(status, closest.value, _join(why, closest_note, evidence, ctrl, beside_note, caveat), closest,
                   tuple(failed))  # fmt: skip


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def merge_profiles(verdicts: Mapping[str, Verdict]) -> dict[str, Verdict]:
    """One verdict per claim over profiles (rule 1): ``{profile: verdict}`` -> the same mapping where every profile
    carries the verdict of the strongest evidence (a decided verdict -- not ``not-run`` -- of the ``paper`` profile,
    else the profile's own).  A reduced profile never contradicts a decided full-scale verdict."""
    decided = verdicts.get("paper")
    if decided is None or decided.status == "not-run":
        return dict(verdicts)
    return {p: (v if p == "paper" else decided) for p, v in verdicts.items()}


# ---------------------------------------------------------------------------------------------- audits
def audit_status(key: str, holds: bool) -> str:
    """The status of an audit row (``source = audit``): a check named ``*lower_bound_exceeds_claim`` that holds ->
    ``fails-audit`` (the claim fails it); ``*lower_bound_within_claim`` that holds -> ``passes-audit``; any other
    audit check that holds (a value reached under a named mode of the authors' code, at the ε of the noise that ran)
    -> ``authors-code``; a check that does not hold -> ``differs`` (not yet investigated)."""
    if not isinstance(key, str) or not key:
        raise ValueError(f"key must be a non-empty string, got {key!r}")
    if not holds:
        return "differs"
    if key.endswith("lower_bound_exceeds_claim"):
        return "fails-audit"
    if key.endswith("lower_bound_within_claim"):
        return "passes-audit"
    return "authors-code"


def clopper_pearson(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """Two-sided Clopper–Pearson interval of a binomial proportion at ``confidence`` (exact, scipy's beta)."""
    from scipy.stats import beta

    if not isinstance(trials, int) or trials < 1:
        raise ValueError(f"trials must be an int >= 1, got {trials!r}")
    if not isinstance(successes, int) or not 0 <= successes <= trials:
        raise ValueError(f"successes must be an int in [0, trials], got {successes!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    alpha = 1 - confidence
    low = 0.0 if successes == 0 else float(beta.ppf(alpha / 2, successes, trials - successes + 1))
    high = 1.0 if successes == trials else float(beta.ppf(1 - alpha / 2, successes + 1, trials - successes))
    return low, high


def clopper_pearson_epsilon(false_positives: int, negatives: int, false_negatives: int, positives: int, *,
                            delta: float = 0.0, confidence: float = 0.95) -> float:  # fmt: skip
    """A lower bound on ε valid with probability >= ``confidence`` from a distinguishing attack's errors (Jagielski
    et al. 2020; Nasr et al. 2021): with FPR and FNR bounded above by Clopper–Pearson at ``(1 + confidence) / 2``
    each (a union bound), ε >= max(log((1 − δ − FNR⁺)/FPR⁺), log((1 − δ − FPR⁺)/FNR⁺), 0)."""
    if not 0 <= delta < 1:
        raise ValueError(f"delta must be in [0, 1), got {delta!r}")
    each = 1 - (1 - confidence) / 2
    fpr = clopper_pearson(false_positives, negatives, 2 * each - 1)[1]
    fnr = clopper_pearson(false_negatives, positives, 2 * each - 1)[1]
    bounds = [0.0]
    for num, den in ((1 - delta - fnr, fpr), (1 - delta - fpr, fnr)):
        if num > 0 and den > 0:
            bounds.append(math.log(num / den))
    return max(bounds)


def audit_changes_conclusion(confidence: float | None, conclusion: bool) -> bool:
    """An audit finding changes a conclusion only when it says so and its bound holds at a stated confidence
    (``confidence`` not None, e.g. a Clopper–Pearson bound); an estimate never does."""
    return bool(conclusion) and confidence is not None


# ---------------------------------------------------------------------------------------------- weight and scope
@dataclass(frozen=True)
class Weight:
    """What an erratum moves: the number as ``printed`` and as ``corrected`` (both from the paper's own formulas), the
    value the paper compares it with in a comparison or conclusion (``compared_with``, None if none) and the relative
    change that counts (``rel``)."""

    printed: float
    corrected: float
    compared_with: float | None = None
    rel: float = CONCLUSION_REL

    def __post_init__(self) -> None:
        for name in ("printed", "corrected", "rel"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or math.isnan(value):
                raise ValueError(f"{name} must be a number, got {value!r}")


def changes_conclusion(weight: Weight) -> bool:
    """Rule: an erratum changes a conclusion when the corrected number lies on the other side of the value the paper
    compares it with (``compared_with``), or moves by more than ``rel`` (relative) from the printed one; everything
    else is cosmetic."""
    if not isinstance(weight, Weight):
        raise ValueError(f"weight must be a Weight, got {type(weight).__name__}")
    p, c = float(weight.printed), float(weight.corrected)
    if weight.compared_with is not None:
        ref = float(weight.compared_with)
        if (p - ref) * (c - ref) < 0 or ((p == ref) != (c == ref)):
            return True
    if p == c:
        return False
    if p == 0 or math.isinf(p) or math.isinf(c):
        return True
    return abs(c - p) / abs(p) > weight.rel


def scope_phrase(hits: int, total: int, what: str) -> str:
    """A finding's scope, counted: ``scope_phrase(3, 35, "calibrations")`` -> "3 of 35 calibrations"."""
    if not isinstance(total, int) or total < 1 or not isinstance(hits, int) or not 0 <= hits <= total:
        raise ValueError(f"hits/total must be ints with 0 <= hits <= total >= 1, got {hits!r}/{total!r}")
    return f"{hits} of {total} {what}"


# ---------------------------------------------------------------------------------------------- the one count
def count_by_status(rows: Iterable[Mapping] | Iterable[object]) -> dict[str, int]:
    """Rows per status (every status of :data:`ALL_STATUSES`, zeros included); rows of ``source = consistency`` that
    ran (our checks of the paper's setup, which reproduce nothing) are counted apart, under ``consistency`` /
    ``consistency-ok`` (those that hold).  The one count behind README, SCORECARD, ERRATA, the docs and the runner's
    summary."""
    counts = dict.fromkeys((*ALL_STATUSES, "consistency", "consistency-ok"), 0)
    for row in rows:
        status, source = (row.get("status"), row.get("source")) if isinstance(row, Mapping) else (
            getattr(row, "status", None), getattr(row, "source", None))  # fmt: skip
        if status not in ALL_STATUSES:
            raise ValueError(f"rows must have a status among {ALL_STATUSES}, got {status!r}")
        if source == "consistency" and status != "not-run":
            counts["consistency"] += 1
            counts["consistency-ok"] += status == "reproduced"
        else:
            counts[status] += 1
    return counts


def count_phrase(counts: Mapping[str, int], *, where: str = "here", differs: str = "**{n} differ unexplained**") -> str:
    """E.g. "12 of 20 claims reproduced, 2 errata, 1 not reproduced, 1 not run here; audits: 2 claims fail the
    audit, 1 passes" from :func:`count_by_status` (zero parts left out)."""
    claims = sum(counts.get(s, 0) for s in CLAIM_STATUSES)
    parts = []
    if claims:
        parts.append(f"{counts['reproduced']} of {claims} reproduced")
    if counts.get("erratum"):
        parts.append(f"{counts['erratum']} errata" if counts["erratum"] > 1 else "1 erratum")
    for status in ("not-reproduced", "inconclusive"):
        if counts.get(status):
            parts.append(f"{counts[status]} {STATUS_WORDS[status]}")
    if counts.get("differs"):
        parts.append(differs.format(n=counts["differs"]))
    if counts.get("not-run"):
        parts.append(f"{counts['not-run']} not run {where}")
    if counts.get("consistency"):
        parts.append(f"{counts['consistency-ok']}/{counts['consistency']} consistency checks hold")
    audits = [f"{counts[s]} {AUDIT_WORDS[s]}" for s in AUDIT_STATUSES if counts.get(s)]
    if audits:
        parts.append("audit rows: " + ", ".join(audits))
    return ", ".join(parts)
