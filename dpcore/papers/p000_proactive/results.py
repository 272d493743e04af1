"""Paper 000 (van Dijk et al., "Proactive DP"): the numbers the notebook checks against the paper.

Each function derives one group of our values from the calculators in
:mod:`~dpcore.papers.p000_proactive.calculator`, :mod:`~dpcore.papers.p000_proactive.e1`,
:mod:`~dpcore.papers.p000_proactive.moments` and the regenerated tables of
:mod:`~dpcore.papers.p000_proactive.tables`; :func:`claim_values` maps them onto the claim keys of
:mod:`~dpcore.papers.p000_proactive.claims` (our value and a note per key).  The notebook only calls these.

"Paper mode" values are *our* reproduction of the paper's procedure (σ = sqrt(2 ln(1/δ)/ε), one update
γ = F(2)); they are compared with the printed numbers, never printed in their place.

>>> round(theta_max_b4(), 4)
6.7957
>>> k_upper_bound(0.2, 2.0, 10_000)
1000.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from dpcore.papers.p000_proactive import calculator as pr
from dpcore.papers.p000_proactive import e1
from dpcore.papers.p000_proactive import moments as pm
from dpcore.papers.p000_proactive import tables as tb
from dpcore.validation import check_positive, check_positive_int

__all__ = [
    "SETTING_KEYS",
    "theta_max_b4",
    "k_upper_bound",
    "b4_in_text",
    "gamma_rows",
    "row_key",
    "e1_paper_iterates",
    "e1_restart_check",
    "e1_restart_rows",
    "schedule_rows",
    "engine_rows",
    "tightness_table",
    "tightness_summary",
    "claim_values",
]

#: claim-key spelling of the three experimental settings
SETTING_KEYS = {"LIBSVM": "libsvm", "MNIST": "mnist", "CIFAR-10": "cifar10"}

#: App. E example: LIBSVM-like N = 10^4, ε_target = 2, K_j = 5·10^4 per phase; batch caps 20 and 60 in phases 0/1
SCHEDULE_EXAMPLE = {
    "N": 10_000,
    "phases": ((None, 5e4, 20), (15.0, 5e4, 60), (10.0, 5e4), (6.0, 5e4)),
    "epsilon_target": 2.0,
    "delta": 1e-4,
}


# --------------------------------------------------------------------------- App. B.4 in-text numbers
def theta_max_b4(sigma_floor: float = 6.0, inv_h: float = 2.4) -> float:
    """Largest θ with σ ≥ ``sigma_floor`` ≥ ``inv_h``·θ/e, the step "θ ≤ 6.85 ⇒ σ ≥ 6 ≥ 0.88θ = 2.4θ/e" of
    App. B.4 (2.4 ≈ 1/h(6) = 1/0.42): θ ≤ sigma_floor·e/inv_h."""
    return check_positive("sigma_floor", sigma_floor) * math.e / check_positive("inv_h", inv_h)


def k_upper_bound(epsilon: float, gamma_theta2: float, N: int) -> float:
    """App. B.4, "Remark Reusing the Local Data Set": k ≤ εN/(γθ²)."""
    gamma_theta2 = check_positive("gamma_theta2", gamma_theta2)
    return check_positive("epsilon", epsilon) * check_positive_int("N", N) / gamma_theta2


def b4_in_text() -> dict[str, float]:
    """The numbers of App. B.4's text: σ of eq. (6) at ε = 0.5, δ = 1/N for N = 10⁴ and 10⁵, h(6), h(10), the
    k bound at ε = 0.2, γθ² = 2, N = 10⁴, and the largest θ of the "θ ≤ 6.85" step."""
    return {
        "sigma_min_N1e4": pr.sigma(0.5, 1e-4),
        "sigma_min_N1e5": pr.sigma(0.5, 1e-5),
        "h6": pr.h_bound(6.0),
        "h10": pr.h_bound(10.0),
        "k_max": k_upper_bound(0.2, 2.0, 10_000),
        "theta_max": theta_max_b4(),
    }


# --------------------------------------------------------------------------- γ (Sec. 3.3)
def gamma_rows() -> list[dict]:
    """γ at the Tables 9–11 operating points (σ printed, ε by eq. (6)): the smallest solution γ* of γ ≥ F(γ)
    (Theorem 3.1), the one update F(2) the calculators apply, and γ* with the corrected (39) (App. B.3)."""
    rows = []
    for name, spec in tb.TABLES_9_11.items():
        st = tb.SETTINGS[spec["setting"]]
        eps = pr.epsilon(spec["sigma"], st.delta)
        g_corr = pr.gamma(spec["sigma"], eps, st.k, formula="corrected")
        rows.append({
            "table": name, "setting": spec["setting"], "sigma": spec["sigma"], "k": st.k, "epsilon_eq6": eps,
            "gamma_star": pr.gamma(spec["sigma"], eps, st.k),
            "gamma_F2": pr.gamma(spec["sigma"], eps, st.k, mode="paper"),
            "gamma_star_corrected": g_corr,
            "s_max_star_corrected": st.k * st.N / (g_corr * st.k**2 / eps),
        })
    return rows


def e1_paper_iterates(s: float, N: int, K: float, delta: float, *, steps: int = 4) -> list[tuple[float, float, float]]:
    """The paper-mode E.1 loop (App. E.1 steps 2–5, σ = sqrt(2 ln(1/δ)/ε), j = 0, θ = 1) continued for ``steps``
    updates: [(γ_i, ε_i, σ_i)] with γ_0 = 2, ε_i = γ_i sK/N², γ_{i+1} = F(γ_i; σ_i, ε_i, K/N).  Element 1 is the
    one step that reproduces Tables 6–8 (:func:`~dpcore.papers.p000_proactive.e1.e1_paper_sigma`)."""
    s = check_positive("s", s)
    N = check_positive_int("N", N)
    K = check_positive("K", K)
    steps = check_positive_int("steps", steps)
    out, g = [], 2.0
    for _ in range(steps + 1):
        eps = g * s * K / N**2
        sig = pr.sigma(eps, delta, mode="paper")
        out.append((g, eps, sig))
        g = pr.gamma_rhs(g, sig, eps, K / N)
    return out


# --------------------------------------------------------------------------- App. E.1 restart
def e1_restart_check(
    N: int = 10_000,
    K_j: float = 5e4,
    epsilon_target: float = 2.0,
    *,
    delta: float = 1e-4,
    history: Sequence[tuple[float, float]] = ((20.0, 5e4),),
    sigma_j: float = 15.0,
) -> dict:
    """App. E.1 "we start our calculation with s_j = 1 and rerun for bigger batch sizes until we reach a maximum",
    for a later phase j > 0: the literal search from s_j = 1 against the search from the largest earlier s_i.

    Returns ``literal_s`` (None when s_j = 1 is rejected at once), ``literal_message``, ``s_max`` (the largest
    accepted s_j, :func:`~dpcore.papers.p000_proactive.e1.max_sample_size_e1`), ``s1_accepted`` and
    ``literal_finds_max`` (whether the literal loop returns ``s_max``).
    """
    if not history:
        raise ValueError("history must hold at least one earlier phase (s_i, K_i): the restart concerns j > 0")
    best = e1.max_sample_size_e1(N, K_j, epsilon_target, delta=delta, history=history, sigma_j=sigma_j)
    try:
        literal = e1.max_sample_size_e1(
            N, K_j, epsilon_target, delta=delta, history=history, sigma_j=sigma_j, s_start=1, search="scan"
        )
        literal_s, message = literal.s, "accepted"
    except ValueError as exc:
        literal_s, message = None, str(exc)
    first = e1.e1_evaluate(1, N, K_j, delta=delta, history=history, sigma_j=sigma_j)
    return {
        "literal_s": literal_s,
        "literal_message": message,
        "s1_theta": first.theta,
        "s1_epsilon": first.epsilon,
        "s1_accepted": first.accepted(epsilon_target),
        "s_max": best.s,
        "s_max_epsilon": best.epsilon,
        "literal_finds_max": literal_s == best.s,
    }


def e1_restart_rows(sched: pd.DataFrame, example: dict | None = None) -> pd.DataFrame:
    """:func:`e1_restart_check` for every later phase j > 0 of a schedule (:func:`schedule_rows` of ``example``,
    default :data:`SCHEDULE_EXAMPLE`), with the phases before j as history."""
    ex = dict(SCHEDULE_EXAMPLE if example is None else example)
    sched = pd.DataFrame(sched)
    rows = []
    for j in range(1, len(sched)):
        sigma_j, K_j = ex["phases"][j][0], ex["phases"][j][1]
        history = [(float(sched.s_j.iloc[i]), float(ex["phases"][i][1])) for i in range(j)]
        check = e1_restart_check(
            ex["N"], K_j, ex["epsilon_target"], delta=ex["delta"], history=history, sigma_j=sigma_j
        )
        rows.append({"phase": j, "sigma_j": sigma_j, **check})
    return pd.DataFrame(rows)


def schedule_rows(example: dict | None = None) -> pd.DataFrame:
    """The App. E / Fig. 15 loop on ``example`` (default :data:`SCHEDULE_EXAMPLE`), one row per completed phase."""
    ex = dict(SCHEDULE_EXAMPLE if example is None else example)
    plan = e1.schedule(ex["N"], ex["phases"], ex["epsilon_target"], delta=ex["delta"], on_infeasible="stop")
    return pd.DataFrame([
        {"phase": j, "s_j": r.s, "sigma_j": r.sigma, "epsilon": r.epsilon, "gamma": r.gamma, "theta": r.theta,
         "s_bar": r.s_bar, "K": r.K, "T_total": r.T}
        for j, r in enumerate(plan)
    ])


# --------------------------------------------------------------------------- Lemma B.3 / Theorem B.2 engine
def engine_rows(t911: pd.DataFrame) -> pd.DataFrame:
    """At each Tables 9–11 operating point (paper mode, s = ⌊s_max⌋, T = ⌈kN/s⌉): ε of eq. (6), of the Lemma B.3
    moments accountant, of RDP and of the GDP CLT, and Theorem B.2's required σ (its c₀ = 2/(ρ̂c₁) branch)."""
    rows = []
    for row in t911.itertuples():
        s = int(row.s_max_int)
        T = math.ceil(row.k * row.N / s)
        b2 = pm.theorem_b2(row.sigma, row.epsilon_target, row.delta, [s] * T, row.N)
        rows.append({
            "setting": row.setting, "sigma": row.sigma, "s": s, "T": T, "epsilon_eq6": row.epsilon_target,
            "epsilon_lemma_b3_moments": pm.moments_epsilon(row.sigma, s, row.N, row.delta, rounds=T),
            "epsilon_rdp": pr.rdp_epsilon(row.sigma, row.N, row.k, s, row.delta),
            "epsilon_gdp_clt": row.eps_fdp_s_max_int,
            "theorem_b2_sigma_required": float(b2["sigma_required"]), "theorem_b2_holds": bool(b2["holds"]),
        })
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- Theorem 3.2 in numbers
def tightness_table(divisors=None, *, mode: str = "paper") -> pd.DataFrame:
    """``tables.tightness_rows`` for every setting, one frame (ε of the CLT and RDP at T = T_min/a)."""
    return pd.concat(
        [pd.DataFrame(tb.tightness_rows(setting, divisors=divisors, mode=mode)) for setting in tb.SETTINGS],
        ignore_index=True,
    )


def tightness_summary(t911: pd.DataFrame, t911_thm: pd.DataFrame) -> pd.DataFrame:
    """Per setting: the divisor a of T_min (paper mode) at which the CLT (the paper's accountant) and RDP lose
    ε_target, in units of γ = F(2), with T_min (F(2) and γ*), T_min_asym = T_min/(2γ) and k²/(4ε)."""
    rows = []
    for row in t911.itertuples():
        a_clt = tb.tightness_divisor(row.setting)
        a_rdp = tb.tightness_divisor(row.setting, accountant="rdp")
        thm = t911_thm[t911_thm.setting == row.setting].iloc[0]
        rows.append({
            "setting": row.setting, "delta": row.delta, "gamma_F2": row.gamma, "epsilon_target": row.epsilon_target,
            "T_min": row.T_min, "T_min_gamma_star": float(thm.T_min), "T_min_asym": row.T_min_asym,
            "T_k2_over_4eps": row.k**2 / (4 * row.epsilon_target),
            "a_clt": a_clt, "a_clt_over_gamma": a_clt / row.gamma, "T_clt": row.T_min / a_clt,
            "a_rdp": a_rdp, "a_rdp_over_gamma": a_rdp / row.gamma, "T_rdp": row.T_min / a_rdp,
        })
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- claim keys
def row_key(table: str, epsilon_label: float) -> str:
    """Claim-key prefix of a Tables 6–8 row: ``row_key("Table 8", 1.5) == "table8.eps1.5"``."""
    if not isinstance(table, str) or not table.startswith("Table "):
        raise ValueError(f"table must be 'Table <n>', got {table!r}")
    return f"table{table.split()[1]}.eps{check_positive('epsilon_label', epsilon_label):g}"


def claim_values(
    *,
    b4: dict,
    gammas: pd.DataFrame,
    t35: pd.DataFrame,
    t68: pd.DataFrame,
    honest: pd.DataFrame,
    t911: pd.DataFrame,
    t911_thm: pd.DataFrame,
    restart: pd.DataFrame,
) -> dict[str, tuple[object, str]]:
    """Our value (and a note) for every claim key of :mod:`~dpcore.papers.p000_proactive.claims`; raises
    ``ValueError`` when the keys differ from the specifications'.

    Arguments are the outputs of :func:`b4_in_text`, :func:`gamma_rows`, ``tables.table_3_5_rows``,
    ``tables.table_6_8_rows``, ``tables.honest_rows``, ``tables.table_9_11_rows`` (paper and theorem mode) and
    :func:`e1_restart_rows`, as lists of dicts or DataFrames.
    """
    gammas, t35, t68, honest, t911, t911_thm, restart = (
        pd.DataFrame(x) for x in (gammas, t35, t68, honest, t911, t911_thm, restart)
    )
    out: dict[str, tuple[object, str]] = {}
    for name in ("sigma_min_N1e4", "sigma_min_N1e5", "h6", "h10", "k_max", "theta_max"):
        out[f"appB4.{name}"] = (b4[name], "")
    for row in gammas.itertuples():
        out[f"sec3.3.gamma.{SETTING_KEYS[row.setting]}"] = (
            row.gamma_star, f"one update F(2) (the calculators' γ) = {row.gamma_F2:.4f}"
        )
    two_gamma = 2 * gammas["gamma_star"]
    out["thm3.2.two_gamma"] = (
        float(two_gamma.min()),
        "2γ* per setting: " + ", ".join(f"{r.setting} {2 * r.gamma_star:.3f}" for r in gammas.itertuples())
        + "; with F(2): " + ", ".join(f"{2 * r.gamma_F2:.3f}" for r in gammas.itertuples()),
    )
    for row in t35.itertuples():
        n = row.table.split()[1]
        out[f"table{n}.epsilon"] = (row.epsilon_paper_rule, f"eq. (6) at the printed σ gives {row.epsilon_eq6:.5f}")
    r3 = t35.iloc[0]
    out["table3.s_max"] = (
        float(r3.s_bound_D4_paper_rule),
        f"App. D.4 bound kN/T_min at the printed ε with γ = F(2) = {r3.gamma_F2:.5f}",
    )
    out["table4.sigma"] = (float(t35.iloc[1].e1_sigma_at_s_max), "E.1 one step (paper mode) at s = 370")
    out["table5.sigma"] = (float(t35.iloc[2].e1_sigma_at_s_max), "E.1 one step (paper mode) at s = 689")
    for row in t68.itertuples():
        key = row_key(row.table, row.paper_epsilon)
        if row.route == "E.1 one step at printed s":  # row 1 of Table 6 is Table 3's configuration (σ is the input)
            out[f"{key}.sigma"] = (row.sigma_paper_mode, "E.1 one step (paper mode) at the printed s")
            out[f"{key}.epsilon_implied"] = (row.epsilon_implied, "ε₁ of the E.1 one step (paper mode), printed s")
            out[f"{key}.s"] = (
                int(row.s_paper_mode_search),
                f"largest s with ε₁ ≤ target (paper mode); theorem mode (eq. (6), γ*): s = {row.s_theorem}",
            )
    for row in honest.itertuples():
        out[f"{row_key(row.table, row.paper_epsilon)}.epsilon_eq6"] = (
            row.epsilon_eq6, f"Theorem B.4's (32)-(35) hold at the printed (σ, s): {row.theorem_b4}"
        )
    for row, thm in zip(t911.itertuples(), t911_thm.itertuples(), strict=True):
        n = row.table.split()[1]
        out[f"table{n}.epsilon_target"] = (row.epsilon_target, "")
        out[f"table{n}.s_max"] = (int(row.s_max_int), f"theorem mode (γ*) gives {int(thm.s_max_int)}")
        out[f"table{n}.s_max_asym"] = (int(row.s_max_asym_int), "")
        out[f"table{n}.eps_fdp.T_min"] = (
            row.eps_fdp_s_max, f"at T = T_min (real-valued s_max); at the printed ⌊s_max⌋ {row.eps_fdp_s_max_int:.5f}"
        )
        out[f"table{n}.factor.T_min"] = (row.factor_s_max, "")
        out[f"table{n}.eps_fdp.T_min_asym"] = (
            row.eps_fdp_s_max_asym,
            f"CLT at the stated s_max_asym; at twice that batch {row.eps_fdp_2x_s_max_asym:.4f}; "
            f"RDP at the stated batch {row.eps_rdp_s_max_asym:.4f}",
        )
        out[f"table{n}.factor.T_min_asym"] = (
            row.factor_s_max_asym, f"at twice the stated batch {row.factor_2x_s_max_asym:.4f}"
        )
        out[f"appD4.target_missed.T_min_asym.{SETTING_KEYS[row.setting]}"] = (
            bool(row.eps_fdp_s_max_asym > row.epsilon_target),
            f"CLT ε at the stated s_max_asym {row.eps_fdp_s_max_asym:.4f} vs ε_target {row.epsilon_target:.4f}; "
            f"RDP upper bound {row.eps_rdp_s_max_asym:.4f}",
        )
    if restart.empty:
        raise ValueError("restart must hold at least one later phase (e1_restart_rows)")
    out["appE1.restart_s1_finds_max"] = (
        bool(restart.literal_finds_max.all()),
        "; ".join(
            f"phase {r.phase}: s_j = 1 has θ = {r.s1_theta:.1f}, ε = {r.s1_epsilon:.3g}, largest accepted s_j = "
            f"{r.s_max} (ε = {r.s_max_epsilon:.4f})"
            for r in restart.itertuples()
        ),
    )
    from dpcore.papers.p000_proactive.claims import TABLE_CLAIMS

    if set(out) != set(TABLE_CLAIMS):
        raise ValueError(
            f"claim keys without a value: {sorted(set(TABLE_CLAIMS) - set(out))}; values without a claim: "
            f"{sorted(set(out) - set(TABLE_CLAIMS))}"
        )
    return {k: (np.asarray(v).item() if isinstance(v, np.generic) else v, note) for k, (v, note) in out.items()}
