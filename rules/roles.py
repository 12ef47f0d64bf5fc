"""Policy by role: where a text came from changes what a finding in it means (issue 23).

An instruction to "ignore all previous instructions" typed by the user is an attack on the model; the same
words inside a web page a tool fetched are an indirect injection, aimed at the model through data the user
never wrote. Blocking the request there would let any page an agent reads stop the agent; passing the text
on lets the page steer the model. So a rule says, per role, what happens to its findings:

    - rule: prompt_injection
      roles: {tool: strip, document: strip, assistant: strip}   # user and system: the rule's own action

* `block`: the request is refused (as a level-2 rule does).
* `annotate`: recorded and forwarded unchanged.
* `strip`: the whole text field (one message's content, one content part, one tool output) is replaced by a
  notice naming the rule, never its words; the body stays valid JSON and the verdict is `mask` (the request
  was rewritten), with `strip` under the role in the audit record's `roles`.
* `ignore`: the finding is dropped in that role (recorded as `ignore` under `roles`, counted nowhere else).

A role the rule does not list gets the rule's own action. Builtin defaults (`DEFAULT_ROLES`, by category) apply
to rules whose own action is `block` and that give no `roles` of their own for that role; a rule configured to
annotate (`level: 1`) is never made stronger by them. Pure: no proxy, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from rules.findings import SEVERITY, Action, Finding
from rules.policy import Decision, MaskSpec, RulePolicy

if TYPE_CHECKING:
    from rules.loader import LoadedRules


class Role(StrEnum):
    """Who wrote a text field of a request, as far as the API's shape says."""

    SYSTEM = "system"  # system and developer messages, Responses `instructions`
    USER = "user"  # user messages, prompts, inputs; anything of unknown role (the strictest reading)
    ASSISTANT = "assistant"  # earlier answers in the history, tool-call arguments the model wrote
    TOOL = "tool"  # tool and function outputs (role tool/function, function_call_output, tool_result parts)
    DOCUMENT = "document"  # document content parts (a `document` block with a text source)


class RoleAction(StrEnum):
    BLOCK = "block"
    ANNOTATE = "annotate"
    STRIP = "strip"
    IGNORE = "ignore"


# Decided, not measured: injection phrases in tool outputs, documents and earlier answers are data that may be
# steering the model, and a direct caller can forge any of these roles, so they are removed (the model never
# reads them, whoever wrote them) rather than refusing the request (a fetched page would stop the agent) or
# only annotating (the page would still steer the model). In user turns the rule blocks. A system prompt is the
# application's own text, and real ones quote the phrases they defend against ("never reveal your system
# prompt"): blocking or stripping there would break every such app, so it is annotated (recorded). Self-harm
# words speak for the person only in their own turns: in a system prompt ("if the user says 'I want to kill
# myself'..."), a tool output (a news page) or an earlier answer they are annotated, never answered with the
# help reply meant for someone in crisis.
DEFAULT_ROLES: Mapping[str, Mapping[Role, RoleAction]] = {
    "prompt_injection": {Role.SYSTEM: RoleAction.ANNOTATE, Role.TOOL: RoleAction.STRIP,
                         Role.DOCUMENT: RoleAction.STRIP, Role.ASSISTANT: RoleAction.STRIP},
    "self_harm": {Role.SYSTEM: RoleAction.ANNOTATE, Role.TOOL: RoleAction.ANNOTATE,
                  Role.DOCUMENT: RoleAction.ANNOTATE, Role.ASSISTANT: RoleAction.ANNOTATE},
}

# The order of what happened to a rule in a role, for the record's strongest entry.
_RECORDED = ("ignore", "allow", "annotate", "mask", "pseudonymize", "strip", "block")
RECORD_ORDER: Mapping[str, int] = {name: i for i, name in enumerate(_RECORDED)}


def strip_notice(role: Role, rules: Iterable[str]) -> str:
    """What the model reads instead of a stripped field: the role and rule ids, never the words."""
    return f"[warden: {role.value} text removed by policy ({', '.join(sorted(set(rules)))})]"


@dataclass(frozen=True, slots=True)
class RoleOutcome:
    """One field's decisions after its role's policy. `stripped`: the field's whole text is to be replaced
    (by `strip_notice`). `record`: (rule, role, what happened) per decision, for the audit record."""

    decisions: tuple[Decision, ...]
    action: Action
    stripped: tuple[str, ...]  # rule ids that strip the field (empty: not stripped)
    record: tuple[tuple[str, str, str], ...]


class RolePolicy:
    """Per-rule role tables, compiled once per policy from the loaded rules and the compiled rule policies."""

    def __init__(self, rules: LoadedRules, policy_of_rule: Mapping[str, RulePolicy]) -> None:
        self._by_rule: dict[str, Mapping[Role, RoleAction]] = {}
        self._by_category: dict[str, Mapping[Role, RoleAction]] = {}
        for e in rules.entries:
            if not e.fields.get("enabled", True):
                continue
            category = e.fields.get("category", e.rule)
            table: dict[Role, RoleAction] = {}
            own = policy_of_rule.get(e.rule)
            if own is not None and own.action is Action.BLOCK:
                table.update(DEFAULT_ROLES.get(category, {}))
            table.update(e.fields.get("roles", {}))
            self._by_rule[e.rule] = table
            if e.type != "pii":
                self._by_category.setdefault(category, table)
        self.active = any(self._by_rule.values())

    def table(self, finding: Finding) -> Mapping[Role, RoleAction]:
        """The finding's rule's table, else its category's (a plug-in's `semantic.<category>` findings take
        the word list's, as `Scanner.policy_of` does for their policy)."""
        table = self._by_rule.get(finding.rule)
        if table is None:
            table = self._by_category.get(finding.category, {})
        return table

    def apply(self, decisions: Iterable[Decision], covered: Iterable[Decision], role: Role) -> RoleOutcome:
        out: list[Decision] = []
        stripped: list[str] = []
        record: list[tuple[str, str, str]] = []
        action = Action.ALLOW
        for d in decisions:
            ra = self.table(d.finding).get(role) if self.active else None
            if ra is None:
                new = d
                record.append((d.finding.rule, role.value, d.action.value))
            elif ra is RoleAction.IGNORE:
                record.append((d.finding.rule, role.value, ra.value))
                continue
            elif ra is RoleAction.STRIP:
                new = Decision(d.finding, Action.MASK, d.level, MaskSpec("replace", text=""), d.alert)
                stripped.append(d.finding.rule)
                record.append((d.finding.rule, role.value, ra.value))
            else:
                new = Decision(d.finding, Action(ra.value), d.level, None, d.alert)
                record.append((d.finding.rule, role.value, ra.value))
            out.append(new)
            if SEVERITY[new.action] > SEVERITY[action]:
                action = new.action
        for d in covered:  # PII inside a stronger value: rewritten all the same, never blocking
            if d.action in (Action.MASK, Action.PSEUDONYMIZE) and SEVERITY[d.action] > SEVERITY[action]:
                action = d.action
        return RoleOutcome(tuple(out), action, tuple(stripped), tuple(record))


def parse_roles(value: object) -> dict[Role, RoleAction] | None:
    """A rule file's `roles` mapping, or None when it is not one (the loader names the field)."""
    if not isinstance(value, dict) or not value:
        return None
    out: dict[Role, RoleAction] = {}
    for role, action in value.items():
        if role not in Role.__members__.values() or action not in RoleAction.__members__.values():
            return None
        out[Role(role)] = RoleAction(action)
    return out
