"""The texts of a whole answer that a schema plan covers, and what is wrong with them (issue 21).

Chat (`/v1/chat/completions`): every choice's `message.content` against the plan's content schema, and every
`message.tool_calls[j].function.arguments` against its function's `parameters`. Responses (`/v1/responses`):
every `output_text` part of the `message` items against the content schema, and every `function_call` item's
`arguments` against its function's. Each text is read as one JSON document (rules/schema/document.py: JSON
whitespace around it is fine, prose, fences or `NaN` are not) and then validated.

What is not a violation, and why:
- a refusal (`message.refusal` set and no content; a Responses `refusal` part): OpenAI's own structured
  outputs answer so when the model declines, and its SDK reports it apart from parse errors. It has no text
  to check;
- a message that calls tools and has no content: the model chose to call a function before answering (the
  content schema binds the final answer);
- a call to a function the request offers without `parameters`: there is nothing to check it against;
- content that is only whitespace beside tool calls (models emit "\n\n" before a call).
A call to a function the request does not offer at all, while the plan has tool schemas, is a violation
(keyword `name`): no schema can admit it, and a client would dispatch it to nothing.

Messages quote only the schema's words (rules.schema.Violation) and the request's own function names, never
the answer's text: a violation's JSON pointer keeps array indices and the property names the schema spells,
and shows any other object key (a map's key is the model's text) as `*`.

`param` names the failing text as streams name it (proxy/schemas/stream_gate.py): `output` for the message
text (chat's first choice, any Responses output text), `tool_calls[j].function.arguments` for the first
choice's calls, `choices[i].message.content` and `choices[i].message.tool_calls[j].function.arguments` for
later choices, `output[k].arguments` for a Responses function call; `.name` instead of `.arguments` for a
call to a function that is not offered.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from proxy.schemas.plan import SchemaPlan
from proxy.state import Route
from rules.schema import CompiledSchema, Violation, parse_document
from rules.schema.document import JSON_WHITESPACE

MAX_MESSAGES = 8  # violation messages kept for an answer (each text gives at most rules.schema MAX_VIOLATIONS)
MAX_NAMES_LISTED = 8  # offered function names quoted in an unknown-name violation
MAX_NAME_SETS = 1024  # schemas whose declared property names are remembered (by content hash)
_NAMES: dict[str, frozenset[str]] = {}


@dataclass(frozen=True, slots=True)
class Failure:
    """One text that does not fit. `item`: its choice (chat: position in `choices`) or output item
    (Responses: position in `output`); `call`: the tool call's position in the message's `tool_calls`
    (chat) or its output item (Responses), None for message text."""

    param: str
    violations: tuple[str, ...]
    item: int
    call: int | None = None


@dataclass(frozen=True, slots=True)
class AnswerCheck:
    """What came of checking one answer: how many texts were under a schema, and those that failed."""

    checked: int
    failures: tuple[Failure, ...] = ()

    @property
    def valid(self) -> bool:
        return not self.failures

    def messages(self) -> tuple[str, ...]:
        """The violations, bounded; each prefixed with its text's path when more than one text failed."""
        several = len(self.failures) > 1
        found = [f"{f.param}: {v}" if several else v for f in self.failures for v in f.violations]
        return tuple(found[:MAX_MESSAGES])

    @property
    def param(self) -> str:
        """What failed, for the error's `param`: the first failing text."""
        return self.failures[0].param if self.failures else ""


def offered_functions(route: Route, request: Mapping[str, object] | None) -> frozenset[str]:
    """The names of the function tools a request offers (with or without `parameters`)."""
    tools = request.get("tools") if request is not None else None
    names: set[str] = set()
    for tool in tools if isinstance(tools, list) else ():
        if not isinstance(tool, dict) or tool.get("type", "function") != "function":
            continue
        function = tool.get("function") if route is Route.CHAT else tool
        name = function.get("name") if isinstance(function, dict) else None
        if isinstance(name, str):
            names.add(name)
    return frozenset(names)


def declared_names(schema: CompiledSchema) -> frozenset[str]:
    """Every property name the schema itself spells (`properties`, `required`, `dependentRequired`,
    `dependentSchemas`, anywhere in it): the names a violation may quote."""
    found = _NAMES.get(schema.sha256)
    if found is not None:
        return found
    names: set[str] = set()
    stack: list[object] = [schema.document]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key in ("properties", "dependentRequired", "dependentSchemas"):
                if isinstance(node.get(key), dict):
                    names.update(node[key])
            for listed in [node.get("required"), *(node["dependentRequired"].values()
                                                   if isinstance(node.get("dependentRequired"), dict) else ())]:
                if isinstance(listed, list):
                    names.update(n for n in listed if isinstance(n, str))
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    found = frozenset(names)
    if len(_NAMES) < MAX_NAME_SETS:
        _NAMES[schema.sha256] = found
    return found


def quotable(violation: Violation, document: object, names: frozenset[str]) -> Violation:
    """The violation with its pointer's object keys that the schema does not spell as `*`: under
    `additionalProperties` or `patternProperties` the keys are the model's own text (an e-mail address as a
    map key), and the message goes where answer text must not (the client's 502, logs)."""
    if not violation.pointer:
        return violation
    node, tokens = document, []
    for token in violation.pointer.split("/")[1:]:
        key = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list) and token.isdigit():
            tokens.append(token)
            node = node[int(token)] if int(token) < len(node) else None
        elif isinstance(node, dict) and key in names:
            tokens.append(token)
            node = node.get(key)
        else:
            tokens.append("*")
            node = node.get(key) if isinstance(node, dict) else None
    pointer = "".join("/" + t for t in tokens)
    return violation if pointer == violation.pointer else Violation(pointer, violation.keyword, violation.detail)


def _violations(schema: CompiledSchema, text: object) -> tuple[str, ...]:
    if text is None:
        text = ""
    if not isinstance(text, str):
        return ("at the document root: the value is not text, so not a JSON document (keyword `json`)",)
    document = parse_document(text)
    if document.violation is not None:
        return (document.violation.message(),)
    found = schema.violations(document.value)
    if not found:
        return ()
    names = declared_names(schema)
    return tuple(quotable(v, document.value, names).message() for v in found)


class _Checker:
    def __init__(self, plan: SchemaPlan, offered: Collection[str]) -> None:
        self.plan = plan
        self.offered = offered
        self.checked = 0
        self.failures: list[Failure] = []

    def text(self, schema: CompiledSchema, text: object, param: str, item: int, call: int | None = None) -> None:
        self.checked += 1
        found = _violations(schema, text)
        if found:
            self.failures.append(Failure(param, found, item, call))

    def call(self, name: object, arguments: object, param: str, item: int, call: int) -> None:
        """A function call: its arguments against its function's schema, or its name against the offer."""
        tools = self.plan.tools
        schema = tools.get(name) if isinstance(name, str) else None
        if schema is not None:
            self.text(schema, arguments, f"{param}.arguments", item, call)
        elif tools and not (isinstance(name, str) and name in self.offered):
            self.checked += 1
            listed = sorted(set(self.offered) | set(tools))
            names = ", ".join(listed[:MAX_NAMES_LISTED]) + (", ..." if len(listed) > MAX_NAMES_LISTED else "")
            self.failures.append(Failure(
                f"{param}.name",
                (f"the function called is not one the request offers ({names}) (keyword `name`)",), item, call))

    def result(self) -> AnswerCheck:
        return AnswerCheck(self.checked, tuple(self.failures))


def _refused(message: Mapping[str, object]) -> bool:
    refusal = message.get("refusal")
    return isinstance(refusal, str) and bool(refusal) and not message.get("content")


def _check_chat(checker: _Checker, body: Mapping[str, object]) -> None:
    content = checker.plan.content
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices:
        if content is not None:
            checker.checked += 1
            checker.failures.append(Failure("output", ("the answer has no choices (keyword `json`)",), 0))
        return
    for i, choice in enumerate(choices):
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            message = {}
        calls = message.get("tool_calls")
        calls = calls if isinstance(calls, list) else []
        where = "" if i == 0 else f"choices[{i}].message."
        text = message.get("content")
        beside_calls = bool(calls) and (text is None or (isinstance(text, str) and not text.strip(JSON_WHITESPACE)))
        if content is not None and not _refused(message) and not beside_calls:
            checker.text(content, text, "output" if i == 0 else f"{where}content", i)
        for j, call in enumerate(calls):
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict):
                function = {}
            checker.call(function.get("name"), function.get("arguments"), f"{where}tool_calls[{j}].function", i, j)


def _check_responses(checker: _Checker, body: Mapping[str, object]) -> None:
    content = checker.plan.content
    output = body.get("output")
    items = output if isinstance(output, list) else []
    answered = False  # a text, a refusal or a function call: anything but silence
    for k, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "function_call":
            answered = True
            checker.call(item.get("name"), item.get("arguments"), f"output[{k}]", k, k)
        elif kind == "message":
            parts = item.get("content")
            for part in parts if isinstance(parts, list) else ():
                if not isinstance(part, dict):
                    continue
                if part.get("type") == "refusal":
                    answered = True
                elif part.get("type") == "output_text":
                    answered = True
                    if content is not None:
                        checker.text(content, part.get("text"), "output", k)
    if content is not None and not answered:
        checker.checked += 1
        checker.failures.append(Failure("output", ("the answer has no text (keyword `json`)",), 0))


def check_answer(route: Route, body: Mapping[str, object], plan: SchemaPlan,
                 offered: Collection[str] = ()) -> AnswerCheck:
    """Check a whole answer's texts against the plan. `offered`: the request's function names
    (`offered_functions`). `checked == 0` means nothing in the answer was under a schema."""
    checker = _Checker(plan, offered)
    if route is Route.RESPONSES:
        _check_responses(checker, body)
    else:
        _check_chat(checker, body)
    return checker.result()
