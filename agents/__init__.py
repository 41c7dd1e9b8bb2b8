"""The agents: scripted ones (`scripted`), and the model-driven agent: the tools a model calls, the text it sees, the
chat loop, and model backends.

Shared by training (TRL's environment class wraps `EpisodeTools`), held-out scoring and `arena run --agent model`, so
a model sees identical tools and identical tool results wherever it runs. Imports only the sandbox and taskpkg;
heavy libraries (torch, transformers, peft, vllm) are imported lazily by the backends that need them.
"""
