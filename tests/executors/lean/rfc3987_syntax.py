"""Found before the installed ``rfc3987_syntax`` by every process of the tests' Ray cluster
(``PYTHONPATH``, :mod:`executors.raycluster`): Ray imports jsonschema, whose optional IRI
format checker compiles ~35 Lark grammars at import (~0.9 s of CPU in each of the cluster's
Python processes and workers) for a format no Ray schema uses. Failing this import is what
jsonschema expects of an absent package (evalbench's own processes do the same:
:mod:`evalbench.lean_imports`)."""

raise ImportError("rfc3987_syntax is left out of the test cluster's processes")
