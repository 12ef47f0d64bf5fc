"""RFC 6962 tree against the transparency-dev vectors (roots, inclusion, consistency, must-reject probes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.errors import ProofError
from audit.merkle import (
    EMPTY_ROOT,
    CompactRange,
    consistency_proof,
    frontier_range_hash,
    inclusion_proof,
    leaf_hash,
    list_range_hash,
    node_hash,
    root_of,
    verify_consistency,
    verify_inclusion,
)

VECTORS: dict[str, Any] = json.loads((Path(__file__).parent / "testdata" / "rfc6962-vectors.json").read_text())
LEAVES = [leaf_hash(bytes.fromhex(x)) for x in VECTORS["leaves_hex"]]


def _h(items: list[str]) -> list[bytes]:
    return [bytes.fromhex(x) for x in items]


def test_hasher_vectors() -> None:
    for vec in VECTORS["hasher_vectors"]:
        if vec["op"] == "empty_root":
            got = EMPTY_ROOT
        elif vec["op"] == "leaf":
            got = leaf_hash(bytes.fromhex(vec["input_hex"]))
        else:
            got = node_hash(bytes.fromhex(vec["left_hex"]), bytes.fromhex(vec["right_hex"]))
        assert got.hex() == vec["expected"]


def test_leaf_hashes_and_levels() -> None:
    assert [h.hex() for h in LEAVES] == VECTORS["leaf_hashes"]
    level = LEAVES
    for expected in VECTORS["node_hashes_by_level"][1:]:
        level = [node_hash(level[i], level[i + 1]) for i in range(0, len(level), 2)]
        assert [h.hex() for h in level] == expected


@pytest.mark.parametrize("size", range(1, 9))
def test_roots_by_size(size: int) -> None:
    assert root_of(LEAVES[:size]).hex() == VECTORS["roots_by_size"][str(size)]
    assert VECTORS["empty_root"] == root_of([]).hex()


@pytest.mark.parametrize("probe", VECTORS["inclusion_probes"], ids=lambda p: p["file"])
def test_inclusion_probes(probe: dict[str, Any]) -> None:
    args = (probe["leafIdx"], probe["treeSize"], bytes.fromhex(probe["leafHash"]), _h(probe["proof"]),
            bytes.fromhex(probe["root"]))
    if probe["wantErr"]:
        with pytest.raises(ProofError):
            verify_inclusion(*args)
    else:
        verify_inclusion(*args)
        if probe["treeSize"] > 1 and probe["treeSize"] <= len(LEAVES) and len(probe["leafHash"]) == 64:
            got = inclusion_proof(probe["leafIdx"], probe["treeSize"], list_range_hash(LEAVES))
            assert [h.hex() for h in got] == probe["proof"]


@pytest.mark.parametrize("probe", VECTORS["consistency_probes"], ids=lambda p: p["file"])
def test_consistency_probes(probe: dict[str, Any]) -> None:
    args = (probe["size1"], probe["size2"], _h(probe["proof"]), bytes.fromhex(probe["root1"]),
            bytes.fromhex(probe["root2"]))
    if probe["wantErr"]:
        with pytest.raises(ProofError):
            verify_consistency(*args)
        return
    verify_consistency(*args)
    m, n = probe["size1"], probe["size2"]
    if 0 < m < n <= len(LEAVES):
        assert [h.hex() for h in consistency_proof(m, n, list_range_hash(LEAVES))] == probe["proof"]
        old = CompactRange()
        for leaf in LEAVES[:m]:
            old.append(leaf)
        assert [h.hex() for h in consistency_proof(m, n, frontier_range_hash(old, LEAVES[m:n]))] == probe["proof"]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 300), st.data())
def test_generated_proofs_verify(n: int, data: st.DataObject) -> None:
    leaves = [leaf_hash(i.to_bytes(4, "big")) for i in range(n)]
    root = root_of(leaves)
    index = data.draw(st.integers(0, n - 1))
    verify_inclusion(index, n, leaves[index], inclusion_proof(index, n, list_range_hash(leaves)), root)
    m = data.draw(st.integers(1, n))
    old = CompactRange()
    for leaf in leaves[:m]:
        old.append(leaf)
    assert old.root() == root_of(leaves[:m])
    proof = consistency_proof(m, n, frontier_range_hash(old, leaves[m:]))
    verify_consistency(m, n, proof, old.root(), root)
    if m < n:
        with pytest.raises(ProofError):
            verify_consistency(m, n, proof, old.root(), root_of(leaves[: n - 1]) if n - 1 != m else EMPTY_ROOT)


def test_compact_range_restores_from_frontier() -> None:
    tree = CompactRange()
    for leaf in LEAVES[:7]:
        tree.append(leaf)
    copy = CompactRange(tree.size, tree.frontier)
    copy.append(LEAVES[7])
    assert copy.root().hex() == VECTORS["roots_by_size"]["8"]
    assert tree.ranges() == [(0, 4), (4, 6), (6, 7)]
    with pytest.raises(ProofError):
        CompactRange(7, tree.frontier[:2])
