"""dpcore.papers.reference.legacy.legacy_table: the legacy table prints δ and q as given, ε to 4 decimals."""

from __future__ import annotations

import pandas as pd
import pytest

from dpcore.papers.reference.legacy import EPSILON_COLUMNS, LEGACY_SETTINGS, legacy_rows, legacy_table


def test_delta_and_rate_are_printed_as_given_and_epsilons_rounded():
    rows = legacy_rows()
    table = legacy_table(pd.DataFrame(rows))
    assert "key" not in table.columns
    assert list(table["delta"]) == [s.delta for s in LEGACY_SETTINGS]  # was 0.0 with .round(4)
    assert (table["delta"] > 0).all() and "1e-05" in table["delta"].map("{:g}".format).tolist()
    assert list(table["q"]) == [s.sample_rate for s in LEGACY_SETTINGS]
    for column in EPSILON_COLUMNS:
        for row, value in zip(rows, table[column], strict=True):
            assert value == pytest.approx(row[column], abs=5e-5) and value == round(value, 4)
    assert legacy_table(rows).equals(table)  # the list works as the frame does


@pytest.mark.parametrize(("kwargs", "name"), [(dict(decimals=-1), "decimals"), (dict(decimals=True), "decimals")])
def test_bad_input_names_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        legacy_table(legacy_rows()[:1], **kwargs)


def test_rows_without_the_epsilon_columns_are_refused():
    with pytest.raises(ValueError, match="rows"):
        legacy_table([{"sigma": 1.0}])
