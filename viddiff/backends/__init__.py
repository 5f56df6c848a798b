"""Model backends: ``llm`` (OpenAI-compatible chat client) and ``clip`` (open_clip embedder).

Import from the submodules; this package imports nothing so that using the
chat client never loads torch.
"""
