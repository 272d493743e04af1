"""Claim specifications of paper 004: Asoodeh, Chen, Calmon, Özgür, "Differentially Private Federated
Learning: An Information-Theoretic Perspective", ISIT 2021.

The paper prints no numbers: Fig. 2 is a plot of Theorem 2 whose image is not in the text, and the
text states its claims in words.  The δ values below are therefore ``consistency`` rows (Theorem 2
read off at the Fig. 2 parameters of the caption: they check our implementation of the closed form, they
reproduce no printed number), and the qualitative statements are bool rows with the check in
``location``.  Errata: the last display of the proof of Theorem 2 and Corollary 1's b_j.
"""

from __future__ import annotations

from dpcore.claims import ClaimSpec, Erratum, Finding, NotebookClaims, specs_by_key

__all__ = ["SPECS", "CLAIMS", "NOTEBOOKS", "TITLE"]

TITLE = "Asoodeh et al., DP federated learning: an information-theoretic perspective, ISIT 2021"

_FIG2 = "η = 0.5, L = 1, ρ = 1, σ = 1.5, n = 100 (Fig. 2 caption)"

SPECS: tuple[ClaimSpec, ...] = (
    ClaimSpec(
        "004",
        "lemma1.gaussian_hockey_stick",
        "Lemma 1, eq. (6)",
        "θ_ε(r) is the E_ε divergence of two Gaussians at normalised distance r",
        True,
        "printed",
        "Lemma 1, eq. (6), Sec. II-B; check: θ_ε(2L/(√m σ)) at ε = 0.5, 1, 2 (m = 10, σ = 1.5) equals the δ of "
        "one Gaussian mechanism by dp_accounting's PLD accountant (REPLACE_ONE, sensitivity 2L) within rel 1e-6",
    ),
    ClaimSpec(
        "004",
        "fig2.decreasing_in_q",
        "Fig. 2 (text)",
        "δ(ε) decreases with q at every ε (more users per round, more privacy)",
        True,
        "printed",
        "Sec. III-B, paragraph after Theorem 2: 'the more users are involved in each iteration, the higher the "
        f"privacy guarantee is'; check: Theorem 2's δ(ε) strictly ordered q=0.3 < 0.2 < 0.1 on the ε grid, {_FIG2}",
    ),
    ClaimSpec(
        "004",
        "fig2.delta_eps1.q0.1",
        "Fig. 2",
        "δ at ε = 1, q = 0.1 (m = 10, T = 10)",
        2.0211e-3,
        "consistency",
        f"Fig. 2 prints no numbers: Theorem 2's closed form read off at ε = 1, {_FIG2}",
        rtol=1e-4,
    ),
    ClaimSpec(
        "004",
        "fig2.delta_eps1.q0.2",
        "Fig. 2",
        "δ at ε = 1, q = 0.2 (m = 20, T = 5)",
        5.0375e-5,
        "consistency",
        f"Fig. 2 prints no numbers: Theorem 2's closed form read off at ε = 1, {_FIG2}",
        rtol=1e-4,
    ),
    ClaimSpec(
        "004",
        "fig2.delta_eps1.q0.3",
        "Fig. 2",
        "δ at ε = 1, q = 0.3 (m = 30, T = n/m = 10/3)",
        1.7561e-6,
        "consistency",
        f"Fig. 2 prints no numbers: Theorem 2's closed form (real exponent n/m) read off at ε = 1, {_FIG2}",
        rtol=1e-4,
    ),
    ClaimSpec(
        "004",
        "thm2.below_parallel_composition",
        "Corollary 1 (remark after (11))",
        "Theorem 2's δ never exceeds θ_ε(2L/(√m σ))",
        True,
        "printed",
        "Sec. IV-A after (11): 'a straightforward upper bound on (11) is θ_ε(2L/(√m σ))'; check: Theorem 2 ≤ "
        f"θ_ε(a) on the Fig. 2 ε grid for q = 0.1, 0.2, 0.3, {_FIG2}",
    ),
    ClaimSpec(
        "004",
        "thm2.bounds_exact_instance",
        "Theorem 2",
        "Theorem 2's δ(ε) bounds an exact instance of Algorithm 1",
        True,
        "printed",
        "Theorem 2 (Sec. III-B): Algorithm 1 is (ε, δ)-DP; check: the exact δ(ε) of the 1-D instance "
        "ℓ(w, x) = L·x·w (2001-point grid, secret position) lies at or below the bound for ε in [0, 1], "
        "ρ = 1 and 0.1, m = 10, other parameters of Fig. 2",
    ),
    ClaimSpec(
        "004",
        "thm2.proof_last_display.ordering",
        "Theorem 2 proof (Appendix), last display",
        "ordering of δ(0) in q with the display's θ_ε(2L√m/σ) evaluated as printed",
        "q=0.3 < q=0.2 < q=0.1",
        "derived",
        "the display claims to equal Theorem 2's closed form, whose ordering in q Sec. III-B states; evaluated "
        f"at ε = 0, {_FIG2}",
        explanation=Erratum(
            "q=0.1 < q=0.2 < q=0.3",
            "The proof's last display has θ_ε(2L√m/σ) where the statement and eq. (24) have θ_ε(2L/(√m σ)); "
            "taken as printed it gives δ(0) = 0.965 / 0.997 / 0.9997 for q = 0.1 / 0.2 / 0.3, the reverse of the "
            "stated ordering, so the statement's form is the correct one.",
        ),
    ),
    ClaimSpec(
        "004",
        "cor1.b_j.j3",
        "Corollary 1, eq. (11)",
        "contraction argument b_j of round j = 3 for η_j = 1/(λj) (λ = 0.05, ρ = 0.05, m = 10, σ = 1.5)",
        0.0816497,
        "derived",
        "the printed b_j = 2ρ√(λmj)/σ in the first line of (11), evaluated at j = 3, λ = 0.05, ρ = 0.05, m = 10, "
        "σ = 1.5",
        rtol=1e-5,
        explanation=Erratum(
            0.0316228,
            "Theorem 2's b_j = 2ρ√m/(η_j σ) with η_j = 1/(λj) is 2ρλj√m/σ (0.0316 here), not the printed "
            "2ρ√(λmj)/σ; the right-hand side of (11) uses the correct b_T, so (11) still holds.",
            rtol=1e-5,
        ),
    ),
    ClaimSpec(
        "004",
        "footnote1.rdp_weaker",
        "Footnote 1",
        "converting RDP to (ε, δ) gives a weaker guarantee than computing (ε, δ) directly",
        True,
        "printed",
        "Footnote 1, Sec. I; check: ε at δ = 1e-5 of parallel composition through Gaussian RDP and the improved "
        f"RDP→DP conversion (B2) exceeds the exact θ_ε route (B1) for q = 0.1, 0.2, 0.3, {_FIG2}",
    ),
    ClaimSpec(
        "004",
        "cor2.rate_sqrt_n",
        "Corollary 2 (batch-m form), Sec. IV-B",
        "with σ_t² = √n and η_t = 1/(λt), Corollary 2's bound is Õ(1/√n ∨ m/n)",
        True,
        "printed",
        "Sec. IV-B, after (12): 'and by Corollary 2, the convergence rate is Õ(1/√n ∨ m/n)'; check: the batch-m "
        "bound c·m((L+μB)²+G²)log(n/m)/(λn) + Σ_t η_t σ_t²/n (c and (L+μB)²+G² set to 1: the paper gives neither) "
        "divided by log(n/m)·max(1/√n, m/n) stays within a factor 4 for n = 1e3..1e7, m = 1, 10, 100, λ = 0.05",
    ),
    ClaimSpec(
        "004",
        "cor3.eq12_bounds_sum",
        "Corollary 3, eq. (12)",
        "the closed form (12) is at least Corollary 3's double sum (so it 'can also' be picked as δ)",
        True,
        "printed",
        "Corollary 3, Sec. IV-B: 'Moreover, if η* = min η_t and σ* = min σ_t, then we can also pick δ as (12)'; "
        "check: (12) ≥ the double sum at ε = 0, 0.5, 1, 2 for the paper's instance η_t = 1/(λt), σ_t² = √n "
        "(λ = 0.05, m = 10, n = 100, L = 1, ρ = 1)",
    ),
)

CLAIMS = specs_by_key(SPECS)
NOTEBOOKS: tuple[NotebookClaims, ...] = (
    NotebookClaims.of("004_contraction/contraction_fig2", "Theorem 2, Fig. 2, Corollaries 1-3", SPECS),
)


# ---------------------------------------------------------------------------------------------- findings (issue 41)
FINDINGS: tuple[Finding, ...] = (
    Finding("004", "contraction", "reproduced",
            "Fig. 2 and Theorem 2's contraction bound reproduce (an exact 1-D instance lies below the bound), and so "
            "do Corollary 2's rate and Corollary 3's closed form (12).",
            "Fig. 2, Theorem 2, Corollaries 2–3 reproduced", False,
            ("fig2.*", "thm2.below_*", "thm2.bounds_*", "lemma1.*", "cor2.*", "cor3.*"),
            "dpcore.papers.p004_contraction, notebook contraction_fig2"),
    Finding("004", "typos", "erratum",
            "Two typos: Theorem 2's proof (last display) has θ_ε(2L√m/σ) where the statement has θ_ε(2L/(√m σ)), "
            "and Corollary 1 prints b_j = 2ρ√(λmj)/σ for 2ρλj√m/σ.", "two typos (Thm 2's proof, Cor. 1)", False,
            ("thm2.proof_last_display.*", "cor1.b_j.*"), "notebook contraction_fig2"),
)
