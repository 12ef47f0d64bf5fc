"""Packaging: our four import names belong to us alone, and the import direction of DESIGN section 1 holds."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import distributions, packages_distributions

import pytest

OURS = ("proxy", "rules", "models", "audit")


def test_no_other_distribution_provides_our_import_names() -> None:
    providers = packages_distributions()
    for name in OURS:
        assert set(providers.get(name, [])) == {"llm-warden"}, f"{name} is provided by {providers.get(name)}"
    for dist in distributions():
        if dist.metadata["Name"] == "llm-warden":
            continue
        top = (dist.read_text("top_level.txt") or "").split()
        assert not set(top) & set(OURS), f"{dist.metadata['Name']} also provides {set(top) & set(OURS)}"


def imported_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print('\\n'.join(sorted(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(result.stdout.split())


def ours(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules} & set(OURS)


@pytest.mark.parametrize(
    ("package", "allowed"),
    [
        ("rules", {"rules"}),
        ("audit", {"audit"}),
        # models may use only rules.findings (the Detector protocol), rules.addressed (the addressee marks the
        # attack heads' cue shares with the request guard's addressed-instruction detector: pure RE2),
        # rules.lookalikes (the look-alike letters both read as Latin) and rules.decode_escapes (`\u` escapes read as
        # the decoder reads them: models/fold.py), rules.stance (the injection stance models/stance.py trains) and
        # rules.distress (the distress model models/distress.py trains); rules.lookalikes reads Martian script with
        # rules.martian, which simplifies traditional characters with rules.normalize's table (and its C helper)
        ("models", {"models", "rules"}),
        ("proxy", set(OURS)),
    ],
)
def test_import_direction(package: str, allowed: set[str]) -> None:
    import importlib
    import pkgutil

    pkg = importlib.import_module(package)
    names = [package] + [f"{package}.{m.name}" for m in pkgutil.walk_packages(pkg.__path__) if m.name != "__main__"]
    for name in names:
        loaded = imported_after(f"import {name}")
        assert ours(loaded) <= allowed, f"{name} imports {ours(loaded) - allowed}"
        if package == "models":
            assert {m for m in loaded if m.startswith("rules.")} <= {"rules.findings", "rules.errors",
                                                                      "rules.addressed", "rules.lookalikes",
                                                                      "rules.decode_escapes", "rules.stance",
                                                                      "rules.distress", "rules.martian",
                                                                      "rules.normalize", "rules._compact"}, name


def test_audit_needs_neither_mitmproxy_nor_boto3_nor_onnxruntime() -> None:
    import importlib
    import pkgutil

    import audit

    for module in pkgutil.walk_packages(audit.__path__):
        if module.name == "__main__":
            continue
        loaded = imported_after(f"import audit.{module.name}")
        heavy = {m.split(".")[0] for m in loaded} & {"mitmproxy", "boto3", "botocore", "onnxruntime", "asyncio"}
        assert not heavy, f"audit.{module.name} imports {heavy}"
    del importlib


def test_rules_does_not_import_mitmproxy_or_asyncio() -> None:
    import pkgutil

    import rules

    for module in pkgutil.walk_packages(rules.__path__):
        loaded = imported_after(f"import rules.{module.name}")
        assert not {m.split(".")[0] for m in loaded} & {"mitmproxy", "asyncio", "onnxruntime"}, module.name


def test_cli_starts_without_loading_mitmproxy() -> None:
    loaded = imported_after("import proxy.cli")
    assert "mitmproxy" not in {m.split(".")[0] for m in loaded}


def test_k8s_is_pure_manifest_mutation() -> None:
    """`warden inject` and the webhook rewrite manifests: neither loads mitmproxy nor the detection engine."""
    import pkgutil

    import proxy.k8s

    for module in pkgutil.walk_packages(proxy.k8s.__path__):
        loaded = imported_after(f"import proxy.k8s.{module.name}")
        heavy = {m.split(".")[0] for m in loaded} & {"mitmproxy", "onnxruntime", "re2"}
        assert not heavy, f"proxy.k8s.{module.name} imports {heavy}"
