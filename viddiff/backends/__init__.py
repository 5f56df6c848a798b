"""Model backends, and the seams the stages see them through.

- ``chat``: the :class:`~viddiff.backends.chat.ChatModel` protocol every LLM/VLM-calling stage depends on;
- ``llm``: ``ChatClient``, its OpenAI-compatible implementation, in layers (transport, retries, JSON
  answers, cache, usage);
- ``embedders``: embedders by name (``localizer.clip.backend``), ``clip``: the open_clip one.

Import from the submodules; this package imports nothing so that using the chat client never loads torch.
"""
