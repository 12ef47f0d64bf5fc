"""The semantic model: build the ONNX encoder from a pinned PyPI package, run it with onnxruntime.

Imports nothing of ours: `proxy` wires it into `rules` through the `Detector` protocol.
"""
