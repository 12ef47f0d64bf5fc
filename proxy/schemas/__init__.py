"""Output schema validation in the proxy (issue 21): where an exchange's schemas come from, how its answer
is checked, whole and streamed, and what the policy does about a violation. The validation itself is pure
and lives in rules/schema."""
