"""Subcommands: parse arguments, call the core, hand the result to a renderer. Never host, native, probes or fixes."""
