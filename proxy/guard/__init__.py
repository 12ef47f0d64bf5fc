"""The detection engine as the proxy uses it, in one room.

- `engine`: the compiled policy per direction, the scan of extracted fields (`inspect`), the live `Guard` with
  its reload.
- `ledger`: what the guard decided over one exchange (`GuardLedger`, a part of the flow state), typed: actions,
  verdicts, counts, seconds; `strongest`, the one ordering of actions.
- `body`: the one inspect core for whole bodies, both directions (`BodyInspector.inspect_body`): extract, scan
  inline or in a worker thread under `guard_budget`, record into the ledger, plan the rewrite.
- `extract`: the text fields of each API's requests and answers, with their JSON paths (and `put` back).
- `stream`: the stream guard, event by event with a bounded hold-back (DESIGN section 4).
- `semantic`: the semantic model's detectors and fusion filters, loaded for the engine.

The hooks that call them are the stages (proxy/stages/inspect_request.py, inspect_response.py, stream.py).
"""
