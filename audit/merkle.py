"""RFC 6962 / RFC 9162 Merkle tree over SHA-256: hashes, roots, inclusion and consistency proofs.

Leaf hash = SHA-256(0x00 || data), node hash = SHA-256(0x01 || left || right), the empty tree's root is
SHA-256(""). Proof generation follows RFC 6962 section 2.1 (PATH and SUBPROOF); verification follows the
RFC 9162 section 2.1.3 algorithms as implemented by transparency-dev/merkle, so a proof we emit can be checked
by any CT-style verifier.

Everything here is pure. The writer uses `CompactRange` (O(log n) memory) and `consistency_proof` with a
range-hash callback, so it never keeps the whole tree in memory.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

from audit.errors import ProofError

HASH_SIZE = 32
EMPTY_ROOT = hashlib.sha256(b"").digest()
_LEAF_PREFIX = b"\x00"
_NODE_PREFIX = b"\x01"
_sha256 = hashlib.sha256


def leaf_hash(data: bytes) -> bytes:
    """RFC 6962 MTH({d}) = SHA-256(0x00 || d)."""
    return _sha256(_LEAF_PREFIX + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """RFC 6962 interior node: SHA-256(0x01 || left || right)."""
    return _sha256(_NODE_PREFIX + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two strictly smaller than n (n >= 2), RFC 6962's k."""
    return 1 << ((n - 1).bit_length() - 1)


def root_of(leaves: Sequence[bytes]) -> bytes:
    """MTH over a list of leaf hashes (not leaf data), computed bottom-up without recursion."""
    if not leaves:
        return EMPTY_ROOT
    compact = CompactRange()
    for leaf in leaves:
        compact.append(leaf)
    return compact.root()


class CompactRange:
    """The perfect subtrees covering leaves [0, size): enough to append leaves and compute the root.

    `frontier` holds one hash per set bit of `size`, largest subtree first (RFC 9162 section 2.1.2's
    "compact range" of the whole tree). Appending costs one leaf plus, on average, one node hash.
    """

    __slots__ = ("_hashes", "_size")

    def __init__(self, size: int = 0, frontier: Sequence[bytes] = ()) -> None:
        if size < 0 or len(frontier) != size.bit_count():
            raise ProofError("compact range does not match its size", expected=size.bit_count(),
                             found=len(frontier))
        self._size = size
        self._hashes = list(frontier)

    @property
    def size(self) -> int:
        return self._size

    @property
    def frontier(self) -> tuple[bytes, ...]:
        return tuple(self._hashes)

    def append(self, leaf: bytes) -> None:
        """Add one leaf hash; merge equal-sized subtrees as the binary counter carries."""
        hashes = self._hashes
        node = leaf
        size = self._size
        while size & 1:
            node = _sha256(_NODE_PREFIX + hashes.pop() + node).digest()
            size >>= 1
        hashes.append(node)
        self._size += 1

    def root(self) -> bytes:
        """Fold the frontier right to left: the RFC 6962 root of leaves [0, size)."""
        if not self._hashes:
            return EMPTY_ROOT
        node = self._hashes[-1]
        for left in reversed(self._hashes[:-1]):
            node = _sha256(_NODE_PREFIX + left + node).digest()
        return node

    def ranges(self) -> list[tuple[int, int]]:
        """The [lo, hi) leaf ranges of the frontier hashes, in the same order."""
        out: list[tuple[int, int]] = []
        lo = 0
        for bit in reversed(range(self._size.bit_length())):
            width = 1 << bit
            if self._size & width:
                out.append((lo, lo + width))
                lo += width
        return out

    def copy(self) -> CompactRange:
        return CompactRange(self._size, self._hashes)


RangeHash = Callable[[int, int], bytes]
"""MTH over leaves [lo, hi) of the tree, for hi - lo >= 1."""


def list_range_hash(leaves: Sequence[bytes]) -> RangeHash:
    """A `RangeHash` over an in-memory list of leaf hashes."""

    def mth(lo: int, hi: int) -> bytes:
        return root_of(leaves[lo:hi])

    return mth


def inclusion_proof(index: int, size: int, mth: RangeHash) -> list[bytes]:
    """RFC 6962 PATH(m, D[n]): the audit path for leaf `index` in the tree of `size` leaves."""
    if not 0 <= index < size:
        raise ProofError("leaf index outside the tree", expected=f"< {size}", found=index)
    path: list[bytes] = []
    lo, hi = 0, size
    while hi - lo > 1:
        k = _split(hi - lo)
        if index < lo + k:
            path.append(mth(lo + k, hi))
            hi = lo + k
        else:
            path.append(mth(lo, lo + k))
            lo += k
    path.reverse()
    return path


def consistency_proof(old_size: int, new_size: int, mth: RangeHash) -> list[bytes]:
    """RFC 6962 PROOF(m, D[n]) for 0 < m <= n.

    Only ranges that are either frontier subtrees of [0, m) or lie entirely in [m, n) are requested, so
    `mth` can be answered from a `CompactRange` at m plus the leaves appended since.
    """
    if not 0 < old_size <= new_size:
        raise ProofError("consistency proof needs 0 < old size <= new size",
                         expected=f"0 < m <= {new_size}", found=old_size)
    proof: list[bytes] = []

    def subproof(m: int, lo: int, hi: int, complete: bool) -> None:
        n = hi - lo
        if m == n:
            if not complete:
                proof.append(mth(lo, hi))
            return
        k = _split(n)
        if m <= k:
            subproof(m, lo, lo + k, complete)
            proof.append(mth(lo + k, hi))
        else:
            subproof(m - k, lo + k, hi, False)
            proof.append(mth(lo, lo + k))

    subproof(old_size, 0, new_size, True)
    return proof


def frontier_range_hash(old: CompactRange, new_leaves: Sequence[bytes]) -> RangeHash:
    """A `RangeHash` for `consistency_proof(old.size, old.size + len(new_leaves), ...)`."""
    known = dict(zip(old.ranges(), old.frontier, strict=True))
    base = old.size

    def mth(lo: int, hi: int) -> bytes:
        hit = known.get((lo, hi))
        if hit is not None:
            return hit
        if lo < base:
            raise ProofError("range straddles the old tree and is not a frontier subtree",
                             expected=f"a frontier range or lo >= {base}", found=(lo, hi))
        return root_of(new_leaves[lo - base:hi - base])

    return mth


# --- verification (RFC 9162 section 2.1.3.2 and 2.1.4.2) -------------------------------------------------


def _check_hash(name: str, value: bytes) -> None:
    if len(value) != HASH_SIZE:
        raise ProofError(f"{name} is not a SHA-256 hash", expected=HASH_SIZE, found=len(value))


def _decomp_inclusion(index: int, size: int) -> tuple[int, int]:
    inner = (index ^ (size - 1)).bit_length()
    border = (index >> inner).bit_count()
    return inner, border


def _chain_inner(seed: bytes, proof: Sequence[bytes], index: int) -> bytes:
    for i, h in enumerate(proof):
        seed = node_hash(seed, h) if (index >> i) & 1 == 0 else node_hash(h, seed)
    return seed


def _chain_inner_right(seed: bytes, proof: Sequence[bytes], index: int) -> bytes:
    for i, h in enumerate(proof):
        if (index >> i) & 1:
            seed = node_hash(h, seed)
    return seed


def _chain_border_right(seed: bytes, proof: Sequence[bytes]) -> bytes:
    for h in proof:
        seed = node_hash(h, seed)
    return seed


def root_from_inclusion(index: int, size: int, leaf: bytes, proof: Sequence[bytes]) -> bytes:
    """RFC 9162 2.1.3.2: the root implied by an inclusion proof; raises ProofError on a malformed proof."""
    if not 0 <= index < size:
        raise ProofError("leaf index outside the tree", expected=f"< {size}", found=index)
    _check_hash("leaf hash", leaf)
    for i, h in enumerate(proof):
        _check_hash(f"proof[{i}]", h)
    inner, border = _decomp_inclusion(index, size)
    if len(proof) != inner + border:
        raise ProofError("wrong inclusion proof length", expected=inner + border, found=len(proof))
    node = _chain_inner(leaf, proof[:inner], index)
    return _chain_border_right(node, proof[inner:])


def verify_inclusion(index: int, size: int, leaf: bytes, proof: Sequence[bytes], root: bytes) -> None:
    """Raise ProofError unless `proof` shows leaf hash `leaf` at `index` in the tree (size, root)."""
    calculated = root_from_inclusion(index, size, leaf, proof)
    if calculated != root:
        raise ProofError("inclusion proof does not lead to the root", expected=root.hex(),
                         found=calculated.hex())


def verify_consistency(old_size: int, new_size: int, proof: Sequence[bytes], old_root: bytes,
                       new_root: bytes) -> None:
    """Raise ProofError unless `proof` shows tree (old_size, old_root) is a prefix of (new_size, new_root).

    A consistency check from the empty tree proves nothing, so size 0 is rejected outright (as the
    transparency-dev "additional" probes require).
    """
    if old_size <= 0:
        raise ProofError("consistency from an empty tree is meaningless", expected="old size > 0",
                         found=old_size)
    if new_size < old_size:
        raise ProofError("new tree is smaller than the old one", expected=f">= {old_size}", found=new_size)
    if old_size == new_size:
        if proof:
            raise ProofError("equal sizes need an empty proof", expected=0, found=len(proof))
        if old_root != new_root:
            raise ProofError("equal sizes but different roots", expected=old_root.hex(), found=new_root.hex())
        return
    if not proof:
        raise ProofError("empty consistency proof for different sizes", expected=">= 1", found=0)
    for i, h in enumerate(proof):
        _check_hash(f"proof[{i}]", h)
    inner, border = _decomp_inclusion(old_size - 1, new_size)
    shift = (old_size & -old_size).bit_length() - 1
    inner -= shift
    if old_size == 1 << shift:
        seed, start = old_root, 0
    else:
        seed, start = proof[0], 1
    if len(proof) != start + inner + border:
        raise ProofError("wrong consistency proof length", expected=start + inner + border, found=len(proof))
    rest = proof[start:]
    mask = (old_size - 1) >> shift
    hash1 = _chain_border_right(_chain_inner_right(seed, rest[:inner], mask), rest[inner:])
    if hash1 != old_root:
        raise ProofError("consistency proof does not lead to the old root", expected=old_root.hex(),
                         found=hash1.hex())
    hash2 = _chain_border_right(_chain_inner(seed, rest[:inner], mask), rest[inner:])
    if hash2 != new_root:
        raise ProofError("consistency proof does not lead to the new root", expected=new_root.hex(),
                         found=hash2.hex())
