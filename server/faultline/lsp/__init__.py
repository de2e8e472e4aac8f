"""The Faultline language server: diagnostics, hovers, code actions and commands over LSP (pygls 2).

Kept import-light on purpose: the VS Code client runs ``import faultline.lsp`` as a preflight check, and
``faultline.lsp.server.serve`` is what ``python -m faultline`` and ``faultline serve`` start.
"""
