"""Output JSON-Schema validation (DESIGN section 5): compiled schemas, answers read as documents, and the
stream checker that decides as early as the facts allow. Pure and synchronous, like the rest of `rules`."""

from rules.schema.compiled import CompiledSchema, InvalidSchema, SchemaCache, Violation, compile_schema
from rules.schema.document import Document, parse_document

__all__ = ["CompiledSchema", "Document", "InvalidSchema", "SchemaCache", "Violation", "compile_schema",
           "parse_document"]
