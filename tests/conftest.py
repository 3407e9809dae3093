"""Shared pytest set-up: the suite runs on every core when pytest-xdist is installed, and
a plain ``pytest`` leaves out the slow sweeps.

``-n auto`` cannot sit in ``addopts``: without pytest-xdist a plain ``pytest``
would stop at ``unrecognized arguments: -n``. Here it is the default instead,
when the plugin is there and the command line did not choose (``-n 0`` runs in
one process; ``-p no:xdist`` turns the plugin off).

The ``slow`` marker (registered in ``pyproject.toml``, deselected there by
``addopts``) goes on the long sweeps: ``pytest -m ""`` runs everything, as CI does;
``pytest -m slow`` runs only them. A test is marked where it is written
(``@pytest.mark.slow``) or, for the sweeps below, here: each sweep keeps one or a
few of its cases in the default run, so every kind of check still runs there.
"""

from __future__ import annotations

from collections.abc import Iterator
from fnmatch import fnmatch

import mpmath
import pytest

#: Sweeps marked slow here: test (its node id without parameters) -> the parameter ids
#: (fnmatch patterns) that stay in the default run, less those a "!pattern" names;
#: () leaves none there.
SLOW_SWEEPS: dict[str, tuple[str, ...]] = {
    # 20 seeds per bundled derivation: seed 0 of each stays, but int8 absmax's, which
    # alone takes half as long as the other 21 together.
    "tests/test_sheet_secrets.py::test_no_sheet_gives_a_blank_away": (
        "*-0",
        "!steps_int8_absmax-0",
    ),
    # PDF sweeps: a compile of every bundled example or derivation document; one stays.
    "tests/test_layout.py::test_no_overfull_box_in_any_bundled_pdf": ("i_love_ai",),
    "tests/test_latex.py::test_bundled_article_compiles_and_shows_corrections": ("i_love_ai",),
    "tests/test_derive_proofs.py::test_every_derivation_document_compiles_without_overfull_boxes": (
        "softmax-jacobian",
    ),
    # Browser sweeps: every bundled page in headless Chromium; the seed article's stays.
    "tests/test_html.py::test_page_in_headless_chromium": ("i_love_ai",),
    "tests/test_html.py::test_phone_width_scrolls_matrices_not_the_page": ("i_love_ai",),
    # The fuzzer's three longest grammars; the other five run in the default set.
    "tests/test_fuzz.py::test_fuzz_typed_programs": (),
    "tests/test_fuzz.py::test_fuzz_articles": (),
    "tests/test_fuzz.py::test_fuzz_bundled_examples_mutated": (),
    # Big examples: the GPT-2-sized model and attention's gradients at a worked row.
    "tests/test_scale_example.py::test_the_scale_example_checks": (),
    "tests/test_scale_example.py::test_the_script_writes_the_shipped_derivation": (),
    "tests/test_derive_proofs.py::test_attention_gradients_at_match_finite_differences": (),
    # attention-backward verified at n = 2 (the longest of the ten, shared through a cache
    # by both tests): the nine other derivations stay, every step of attention-backward is
    # proved for every n by test_derive_proofs.py::test_every_proof_checks_step_by_step,
    # and its n = 1 run is rendered by test_proof_latex_has_no_ascii_maths_in_text.
    "tests/test_derive.py::test_every_step_verified_both_ways": ("*", "!attention-backward"),
    "tests/test_derive.py::test_attention_backward_matches_textbook": (),
    # Symbolic entries: the birds article stays; the seed article (its interval searches
    # take about eight times the birds article's) runs with the slow sweeps, but in the
    # two tests that share its module-wide check.
    "tests/test_symbolic_entries.py::test_with_scale_t_the_files_own_divisor_is_inside_each_interval": (
        "birds_build_nests",
    ),
    "tests/test_symbolic_entries.py::test_latex_and_html_complete_and_show_symbolic_values_in_their_own_words": (
        "birds_build_nests-*",
    ),
    "tests/test_symbolic_entries.py::test_explain_completes_on_a_symbolic_claim": (
        "birds_build_nests",
    ),
    # The grid worksheet reads the sheets' choices of blanks: seed 0 of each bundled
    # derivation stays, but int8 absmax's, as in the sheet sweep above.
    "tests/test_sheet_secrets.py::test_no_grid_worksheet_gives_a_blank_away": (
        "*-0",
        "!steps_int8_absmax-0",
    ),
    # Reuse of the last check, and the language server against `check --format json`: the
    # articles taking longest (the source article, the two big notebooks, the longest
    # markdown post) are slow; a .txt article, notebooks and markdown posts stay.
    "tests/test_check_incremental.py::test_a_check_reusing_the_last_gives_the_report_a_cold_check_gives": (
        "*",
        "!000_*",
        "!mortenson_illustrated_attention_snippet.ipynb",
        "!rasbt_ch03.ipynb",
        "!vizuara_self_attention_snippet.md",
        "!toyai_example3_worksheet.md",
    ),
    # A refusal of a 317 x 317 matrix (100,489 entries, read whole before it is refused, by
    # draft and by check): the 142 x 142 and 100 x 200 cases of the same limits stay.
    "tests/test_scale_limits.py::test_draft_and_check_refuse_a_matrix_over_the_limits_at_the_articles_line": (
        "*",
        "!317-*",
    ),
    "tests/test_lsp.py::test_diagnostics_equal_symtf_check_json_number_for_number": (
        "*",
        "!mortenson_illustrated_attention_snippet.ipynb",
    ),
}


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """Ask pytest-xdist for a worker per core unless ``-n`` was given."""
    if not config.pluginmanager.hasplugin("xdist") or hasattr(config, "workerinput"):
        return
    if getattr(config.option, "numprocesses", None) is None and not config.option.collectonly:
        config.option.numprocesses = "auto"


@pytest.hookimpl(tryfirst=True)  # before the -m selection reads the marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the cases of :data:`SLOW_SWEEPS` slow, but those each keeps in the default run."""
    for item in items:
        keep = SLOW_SWEEPS.get(item.nodeid.split("[", 1)[0])
        if keep is None:
            continue
        callspec = getattr(item, "callspec", None)
        case = callspec.id if callspec is not None else ""
        kept = any(fnmatch(case, p) for p in keep if not p.startswith("!"))
        if not kept or any(fnmatch(case, p[1:]) for p in keep if p.startswith("!")):
            item.add_marker(pytest.mark.slow)


def pytest_report_header(config: pytest.Config) -> str | None:
    """Say, at the top of a plain run, that the slow sweeps are left out and how to run them."""
    if config.option.markexpr == "not slow":
        return "slow sweeps left out (marker 'slow'): pytest -m '' runs everything"
    return None


@pytest.fixture(autouse=True)
def _mpmath_digits(request: pytest.FixtureRequest) -> Iterator[None]:
    """mpmath at the module's ``MPMATH_DIGITS`` for each of its tests (none: left alone),
    and the global precision as the test found it afterwards, whatever the test set."""
    digits = getattr(request.module, "MPMATH_DIGITS", None)
    dps = mpmath.mp.dps
    try:
        if digits is None:
            yield
        else:
            with mpmath.workdps(digits):
                yield
    finally:
        mpmath.mp.dps = dps
