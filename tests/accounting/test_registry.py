"""dpcore.accounting.registry: accountants as objects, chosen by a loop over a registry in order of tightness."""

import inspect

import pytest

from dpcore.accounting import records, registry, replacement
from dpcore.accounting.records import choose_accountant, epsilon_for_record
from dpcore.accounting.run_record import RunRecord


def _record(**changes) -> RunRecord:
    base = dict(private=True, sampling="poisson", clipping="individual", clip_norm=1.0, noise_multiplier=1.1,
                noise_std=1.1, dataset_size=1000, batch_size=10, steps=50)  # fmt: skip
    base.update(changes)
    return RunRecord(**base)


def test_every_entry_is_an_accountant_with_a_unique_name_and_a_default_method():
    names = [a.name for a in registry.REGISTRY]
    assert len(set(names)) == len(names) and registry.ACCOUNTANT_NAMES == ("none", *names)
    for acc in registry.REGISTRY:
        assert isinstance(acc, registry.Accountant), acc.name
        assert acc.methods and set(acc.methods) <= set(registry.ALL_METHODS)
        assert acc.describe(_record(), acc.methods[0])


@pytest.mark.parametrize(
    "changes,name",
    [
        ({}, "dpsgd"),
        ({"batch_size": [10] * 50}, "dpsgd-schedule"),
        ({"sampling": "fixed"}, "fixed-wor"),
        ({"sampling": "fixed", "batch_size": [10] * 50}, "fixed-wor-schedule"),
        ({"sampling": "shuffle"}, "shuffling-A1"),
        ({"sampling": "replacement"}, "with-replacement"),
        ({"sampling": "replacement", "clipping": "batch"}, "with-replacement-batch-mean"),
        ({"modelmix": {"phases": [{"steps": 50, "tau_ratio": 0.5}]}}, "modelmix"),
    ],
)
def test_the_first_entry_that_supports_a_record_accounts_for_it(changes, name):
    rec = _record(**changes)
    first = next(a for a in registry.REGISTRY if a.supports(rec))
    assert first.name == name == choose_accountant(rec).name


def test_modelmix_comes_before_the_plain_bound_it_tightens():
    rec = _record(modelmix={"phases": [{"steps": 50, "tau_ratio": 0.5}]})
    order = [a.name for a in registry.REGISTRY]
    assert order.index("modelmix") < order.index("dpsgd")
    assert epsilon_for_record(rec, 1e-5) <= epsilon_for_record(rec, 1e-5, modelmix="plain", method="rdp")
    assert choose_accountant(rec, modelmix="plain").name == "dpsgd"


def test_with_replacement_records_get_the_librarys_pld():
    """A silo record (noise std K·σ on the sum) gives with_replacement_epsilon of the mean's σ."""
    rec = _record(sampling="replacement", dataset_size=4, batch_size=2, steps=8, noise_multiplier=2.0, noise_std=2.0)
    eps = epsilon_for_record(rec, 1e-3)
    direct = replacement.with_replacement_epsilon(noise_std=1.0, lipschitz=1.0, batch_size=2, n=4, rounds=8,
                                                  delta=1e-3)  # fmt: skip
    assert eps == direct and eps == pytest.approx(4.71, abs=0.01)
    assert eps.rigorous and eps.method == "pld" and "with-replacement" in eps.description
    with pytest.raises(ValueError, match="method"):
        epsilon_for_record(rec, 1e-3, method="rdp")


def test_a_clipped_batch_mean_with_replacement_is_bounded_without_amplification():
    rec = _record(sampling="replacement", clipping="batch", batch_size=2, steps=4, noise_multiplier=2.0,
                  noise_std=2.0, clip_norm=1.0)  # fmt: skip
    eps = epsilon_for_record(rec, 1e-5)
    assert eps == replacement.batch_mean_epsilon_upper(noise_std=2.0, clip=1.0, rounds=4, delta=1e-5)
    assert eps.rigorous and eps.method == "gdp-exact"


def test_records_types_no_sensitivity_or_noise_factor():
    """Sensitivities and noise factors come from events.py: records.py and registry.py type none in place."""
    for module in (records, registry):
        source = inspect.getsource(module)
        for literal in ("sens = ", "/ (2.0 *", "2.0 if", "1.0 if"):
            assert literal not in source, (module.__name__, literal)


def test_unknown_name_is_refused():
    with pytest.raises(ValueError, match="name"):
        registry.accountant_named("moments")
