"""Figures are written atomically and labelled with the profile."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from dpcore.report import Report, atomic_path  # noqa: E402


def test_figure_writes_png_pdf_csv(tmp_path):
    report = Report("00_x", "nb", figures_dir=tmp_path, reduced=True, reduced_note="2 epochs")
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    written = report.figure(fig, "line", data=pd.DataFrame({"x": [0, 1]}))
    assert {p.name for p in written.values()} == {"line.png", "line.pdf", "line.csv"}
    assert all(p.stat().st_size > 0 for p in written.values())
    assert "REDUCED SCALE: 2 epochs" in report.label
    assert any("REDUCED SCALE" in t.get_text() for t in fig.texts)
    assert not list(tmp_path.rglob(".*tmp*"))


def test_failed_write_leaves_previous_file(tmp_path):
    target = tmp_path / "fig.png"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_bytes(b"half")
            raise RuntimeError("boom")
    assert target.read_bytes() == b"old"
    assert list(tmp_path.iterdir()) == [target]


def test_bad_profile():
    with pytest.raises(ValueError, match="profile"):
        Report("00_x", "nb", profile="fast")
