"""Regeneration stable across CPUs (issue 54): the runner compares what each notebook wrote with the files it
replaced; within the tolerance of their kind of value the old bytes are put back, a real change is written and
listed loudly.  Both directions are tested with a planted perturbation, through the runner and file by file."""

import io

import nbformat
import pytest
import yaml

from dpcore import runner
from dpcore.runner import compare
from dpcore.runner.compare import ACCURACY, COMPUTED, LOSS, compare_csv, kind_of, numbers_within

NOTEBOOK = """
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
from dpcore.report import Report
report = Report("aa", "trained", profile=profile, figures_dir=figures_dir)
fig, ax = plt.subplots()
ax.plot([0, 1], [0.1, accuracy])
ax.set_title(title)
report.figure(fig, "curve", data=pd.DataFrame({"epsilon": [epsilon], "accuracy": [accuracy], "steps": [100]}))
fig, ax = plt.subplots()
ax.bar([0], [accuracy])
report.figure(fig, "bars")  # no CSV of its own: kept by the notebook's data
"""


def _notebook(path):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    params = nbformat.v4.new_code_cell(
        'profile = "quick"\nfigures_dir = None\nreduced = False\naccuracy = 0.553\nepsilon = 1.5\ntitle = "a"'
    )
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(NOTEBOOK)]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("notebooks")
    _notebook(root / "aa" / "trained.ipynb")
    (root / "profiles").mkdir()
    figures = tmp_path_factory.mktemp("figures")
    build = tmp_path_factory.mktemp("build")

    def run(**params):
        (root / "profiles" / "quick.yaml").write_text(yaml.safe_dump({"aa/trained": params}))
        stream = io.StringIO()
        paths = runner.discover("aa/trained", root)
        results = runner.run_notebooks(paths, profile="quick", out_figures=figures, out_build=build, root=root,
                                       stream=stream)  # fmt: skip
        assert all(r.ok for r in results), stream.getvalue()
        files = {p.name: p.read_bytes() for p in sorted((figures / "aa").iterdir())}
        return results[0].outputs, files, stream.getvalue()

    return run


def test_a_within_tolerance_perturbation_is_kept_and_a_real_change_is_written(world):
    first, committed, text = world(accuracy=0.553, epsilon=1.5)
    assert first.status == "changed" and {f.status for f in first.files} == {"new"}  # nothing was there
    assert set(committed) == {"curve.png", "curve.pdf", "curve.csv", "bars.png", "bars.pdf"}

    # the case: a reduced run's accuracy 55.3 % -> 55.2 % on another CPU: every figure and CSV kept as it was
    kept, files, text = world(accuracy=0.552, epsilon=1.5)
    assert kept.status == "within", [(f.path.name, f.status, f.why) for f in kept.files]
    assert files == committed  # byte for byte: git status stays clean
    assert "(outputs within tolerance, kept as committed)" in text
    lines = compare.outcome_lines([kept], kept.files[0].path.parents[1])
    assert lines[0] == "outputs: 0 notebook(s) identical, 1 within tolerance (kept as committed), 0 CHANGED (written)"
    assert "kept aa/curve.csv: row 1, accuracy: 0.553 -> 0.552 (accuracy, absolute 1" in "\n".join(lines)

    # a real change: 5 percentage points; written, and listed loudly
    moved, files, text = world(accuracy=0.603, epsilon=1.5)
    assert moved.status == "changed" and "(outputs CHANGED)" in text
    assert files["curve.csv"] != committed["curve.csv"] and files["curve.png"] != committed["curve.png"]
    assert files["bars.png"] != committed["bars.png"]  # the notebook's data changed: its other figure is written
    loud = "\n".join(compare.outcome_lines([moved], moved.files[0].path.parents[1]))
    assert "OUTPUTS CHANGED  aa/trained: 5 file(s) written" in loud
    assert "CHANGED aa/curve.csv: row 1, accuracy: 0.553 -> 0.603" in loud


def _in_process(figures, **params):
    """The notebook's code run here (no kernel) into ``figures``; the paths it wrote, as the runner reads them."""
    import matplotlib

    matplotlib.use("Agg")
    values = {"profile": "quick", "figures_dir": str(figures), "accuracy": 0.553, "epsilon": 1.5, "title": "a"}
    scope = {**values, **params}
    exec(NOTEBOOK.replace('matplotlib.use("Agg")', ""), scope)  # noqa: S102 - the test's own notebook code
    import matplotlib.pyplot as plt

    plt.close("all")
    return sorted((figures / "aa").iterdir())


def test_a_computed_value_beyond_its_tolerance_or_a_new_drawing_is_written(tmp_path):
    written = _in_process(tmp_path)
    before = compare.snapshot(tmp_path, "quick")
    # an ε that moved beyond its tolerance (relative 1e-9, one unit of the 6th significant digit as written)
    written = _in_process(tmp_path, epsilon=1.5001)
    moved = compare.settle({"aa/trained": written}, before)[0]
    by_name = {f.path.name: f for f in moved.files}
    assert moved.status == "changed" and by_name["curve.csv"].status == "changed"
    assert by_name["curve.csv"].why == "row 1, epsilon: 1.5 -> 1.5001 (computed, relative 1e-09)"
    assert by_name["curve.png"].status == "identical" and by_name["bars.png"].status == "identical"  # ε is not drawn
    assert (tmp_path / "aa" / "curve.csv").read_bytes() != before[(tmp_path / "aa" / "curve.csv").resolve()]
    # the drawing changed while its data did not: written; the other figure, identical, untouched
    before = compare.snapshot(tmp_path, "quick")
    drawn = compare.settle({"aa/trained": _in_process(tmp_path, epsilon=1.5001, title="b")}, before)[0]
    by_name = {f.path.name: f for f in drawn.files}
    assert by_name["curve.csv"].status == "identical" and by_name["curve.png"].status == "changed"
    assert by_name["curve.png"].why == "its data curve.csv is identical" and by_name["bars.png"].status == "identical"
    # a within-tolerance accuracy keeps even the figure without a CSV of its own (drawn from the notebook's data)
    before = compare.snapshot(tmp_path, "quick")
    kept = compare.settle({"aa/trained": _in_process(tmp_path, epsilon=1.5001, title="b", accuracy=0.556)}, before)[0]
    assert kept.status == "within" and {f.path.name for f in kept.files if f.status == "within"} >= {"bars.png"}
    assert all((tmp_path / "aa" / f.path.name).read_bytes() == before[f.path] for f in kept.files)


def test_the_runner_summary_lists_kept_and_changed_outputs(tmp_path):
    a, b = (compare.NotebookOutcome("x/kept"), compare.NotebookOutcome("y/moved"))
    a.files = [compare.FileOutcome(tmp_path / "x" / "t.csv", "within", "row 1, accuracy: 0.5 -> 0.501")]
    b.files = [compare.FileOutcome(tmp_path / "y" / "t.csv", "changed", "row 2, epsilon: 1 -> 2")]
    lines = compare.outcome_lines([a, b, compare.NotebookOutcome("z/same")], tmp_path)
    assert lines == [
        "outputs: 1 notebook(s) identical, 1 within tolerance (kept as committed), 1 CHANGED (written)",
        "outputs within tolerance, kept as committed  x/kept (1 of 1 files differ within the tolerance of their kind "
        "of value; committed bytes put back)",
        "    kept x/t.csv: row 1, accuracy: 0.5 -> 0.501",
        "OUTPUTS CHANGED  y/moved: 1 file(s) written (see git diff)",
        "    CHANGED y/t.csv: row 2, epsilon: 1 -> 2",
    ]


@pytest.mark.parametrize(
    ("column", "kind"),
    [("accuracy", ACCURACY), ("balanced_accuracy_sd", ACCURACY), ("ours_pct", ACCURACY), ("test_acc", ACCURACY),
     ("fraction_sd", ACCURACY), ("train_loss", LOSS), ("objective", LOSS), ("epsilon", COMPUTED),
     ("accountant", COMPUTED), ("sigma", COMPUTED), ("steps", COMPUTED), ("curve", COMPUTED)],
)  # fmt: skip
def test_each_column_has_the_tolerance_of_its_kind_of_value(column, kind):
    assert kind_of(column) is kind


@pytest.mark.parametrize(
    ("a", "b", "tolerance", "same"),
    [
        ("55.3", "55.2", ACCURACY, True),  # percent: 1 pp
        ("55.3", "56.4", ACCURACY, False),
        ("0.553", "0.552", ACCURACY, True),  # a fraction: 0.01
        ("0.553", "0.565", ACCURACY, False),
        ("1.23456", "1.23457", COMPUTED, True),  # one unit of the 6th significant digit (written at 6 digits)
        ("1.23456", "1.23458", COMPUTED, False),
        ("1.5", "1.5001", COMPUTED, False),  # "1.5" is 1.50000 at 6 significant digits
        ("1.5", "1.50001", COMPUTED, True),
        ("1.2345678901234567", "1.2345678901234569", COMPUTED, True),  # repr: relative 1e-9
        ("1.2345678901234567", "1.2345679901234567", COMPUTED, False),
        ("750", "751", COMPUTED, False),  # a count is exact
        ("s = 5, σ = 12.1088; ε 0.109", "s = 5, σ = 12.1089; ε 0.109", COMPUTED, True),
        ("s = 5, σ = 12.1088; ε 0.109", "s = 6, σ = 12.1088; ε 0.109", COMPUTED, False),
        ("ours = True", "ours = False", ACCURACY, False),  # text must be equal
        ("nan", "nan", COMPUTED, True),
        ("inf", "1e308", COMPUTED, False),
        ("1e-05", "1.00001e-05", COMPUTED, True),
        ("11901.4", "12400.2", LOSS, True),
        ("11901.4", "13400.2", LOSS, False),
    ],
)
def test_numbers_are_compared_within_their_tolerance_and_text_exactly(a, b, tolerance, same):
    assert numbers_within(a, b, tolerance)[0] is same


CLAIMS_HEADER = "paper,key,artifact,quantity,source,location,paper_value,our_value,tolerance,status,profile,note\n"


def _claims(our, status="not-run", note="at reduced scale ours = {our}"):
    row = f'000,m.accuracy_pct,Fig. 3,"test accuracy (%)",printed,Sec. 4,98,{our},abs 1,{status},quick,"{note}"\n'
    return (CLAIMS_HEADER + row.replace("{our}", str(our))).encode()


def test_claims_rows_compare_by_their_claims_kind_and_need_the_same_status():
    assert compare_csv(_claims(55.300000000000004), _claims(55.2))[0]
    assert not compare_csv(_claims(55.3), _claims(57.3))[0]
    within, why = compare_csv(_claims(55.3), _claims(55.3, status="reproduced"))
    assert not within and "status" in why
    eps = CLAIMS_HEADER + "000,t.eps,Table 8,epsilon,printed,p. 1,1.5,{},rtol 0.01,reproduced,quick,\n"
    assert compare_csv(eps.format(1.25).encode(), eps.format(1.25 * (1 + 1e-12)).encode())[0]
    assert not compare_csv(eps.format(1.25).encode(), eps.format(1.25 * (1 + 1e-7)).encode())[0]


def test_a_count_in_a_claims_note_is_exact_even_where_the_claims_values_have_a_tolerance():
    note = "closest reading: 96.85 at ε 35 ({n} full-scale run(s), {k} seed(s))"
    runs8, runs9 = note.format(n=8, k=3), note.format(n=9, k=3)
    assert numbers_within(runs8, runs9, ACCURACY)[0]  # as plain numbers, 8 -> 9 is within 1 point
    assert not numbers_within(runs8, runs9, ACCURACY, counts_exact=True)[0]  # a ninth run is a new result
    assert numbers_within(runs8, runs8.replace("96.85", "96.9"), ACCURACY, counts_exact=True)[0]
    within, why = compare_csv(_claims(55.3, note=runs8), _claims(55.3, note=runs9))
    assert not within and "8 -> 9" in why
    assert compare_csv(_claims(55.3, note=runs8), _claims(55.3, note=runs8.replace("96.85", "96.8")))[0]


def test_tables_with_other_rows_or_columns_changed():
    assert not compare_csv(b"a,b\n1,2\n", b"a,c\n1,2\n")[0]
    assert not compare_csv(b"a,b\n1,2\n", b"a,b\n1,2\n1,2\n")[0]
    assert compare_csv(b"accuracy,b\n0.5,x\n", b"accuracy,b\n0.505,x\n") == (
        True, "row 1, accuracy: 0.5 -> 0.505 (accuracy, absolute 1 (0.01 as a fraction))")  # fmt: skip


def test_files_no_report_logged_are_compared_only_in_the_folders_of_the_notebooks_that_ran(tmp_path):
    from dpcore.runner.execute import Result, _settle_unlogged

    for name, text in {"aa/own.csv": "accuracy\n0.5\n", "bb/other.csv": "x\n1\n", "claims.csv": "x\n1\n"}.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    before = compare.snapshot(tmp_path, "quick")
    (tmp_path / "aa" / "own.csv").write_text("accuracy\n0.501\n")  # written by aa/x itself, not through a Report
    (tmp_path / "bb" / "other.csv").write_text("x\n1.0000000001\n")  # not this run's notebook: left alone
    (tmp_path / "claims.csv").write_text("x\n1.0000000001\n")  # the runner's own summary, written after
    result = Result("aa/x", True, 1.0, outputs=compare.NotebookOutcome("aa/x"))
    _settle_unlogged([result], before, tmp_path, "quick")
    assert [(f.path.name, f.status) for f in result.outputs.files] == [("own.csv", "within")]
    assert (tmp_path / "aa" / "own.csv").read_text() == "accuracy\n0.5\n"  # put back
    assert (tmp_path / "bb" / "other.csv").read_text() == "x\n1.0000000001\n"
    assert (tmp_path / "claims.csv").read_text() == "x\n1.0000000001\n"
