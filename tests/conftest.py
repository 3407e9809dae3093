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
    """mpmath at the module's ``MPMATH_DIGITS`` for each of its tests (none: left alone)."""
    digits = getattr(request.module, "MPMATH_DIGITS", None)
    if digits is None:
        yield
        return
    with mpmath.workdps(digits):
        yield
