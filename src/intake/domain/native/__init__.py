"""Optional native accelerators of the domain's hot paths, in C against the CPython API
(docs/architecture.md, "Native code"). Each `<stem>.c` here is built as the extension
module `intake.domain.native.<stem>` (hatch_build.py), with a `<stem>.pyi` stub beside it.

The pure-Python code they stand in for stays the reference: a domain module uses the
native function when its module imports, else its own, and the two give identical
results (the tests compare them). Without a C compiler intake installs and runs as it
is, slower."""
