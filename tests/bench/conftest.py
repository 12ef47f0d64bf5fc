"""The built model, shared with tests/models: bench/encoder_conformance.py reads its graphs."""

from tests.models.conftest import built, rt

__all__ = ["built", "rt"]
