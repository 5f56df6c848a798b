"""The subcommands' handlers: parse-free glue from ``argparse`` namespaces to the library.

``viddiff.cli`` builds the parser and imports a handler only when its command runs; each handler
turns flags into a config, looks up the benchmark and method in their registries, and calls the
library (``pipeline``, ``api``, ``benchmarks``). Nothing below this layer imports it.
"""
