"""Stage 2, build and evaluate: a Derivation → a graph of named nodes → a Trace.

The standard architectures are templates that expand into nodes with the canonical
names; a file's ``[steps]`` add nodes in the step language; conventions are rewrites
of the graph. Every node's op is an entry of the registry (:mod:`symtf.ops`), and
evaluation runs the same ops in any backend (exact, balls, floats).
It reads :mod:`symtf.spec` and the leaf modules, never :mod:`symtf.checking`.

- :mod:`symtf.graph.blocks`: Building blocks shared by the decoder and encoder–decoder
  templates.
- :mod:`symtf.graph.conventions`: Named alternative conventions an article may have followed, as
  rewrites of the step graph.
- :mod:`symtf.graph.core`: The step graph: named nodes ``name = op(inputs…)``, and their
  evaluation.
- :mod:`symtf.graph.evaluate`: The user's given tensors and steps as nodes of the step graph,
  and how a step is evaluated over the registry's ops.
- :mod:`symtf.graph.generate`: Decoding strategies on exact probabilities: greedy, beam search
  and sampling filters.
- :mod:`symtf.graph.pipeline`: The templates, written as nodes of the step graph, and ``run``.
- :mod:`symtf.graph.rewrite`: Conventions as rewrites of user steps: the same names as the model
  switches.
- :mod:`symtf.graph.seq2seq`: Encoder–decoder transformers: the parallel pass and KV-cached
  decoding.
- :mod:`symtf.graph.ties`: Exact ties: certified ordering of exact values, and proved equality.
"""
