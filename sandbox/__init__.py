"""The container sandbox: images, episodes, the agent interface and cleanup, on a real Docker engine.

Validation, training rollouts and held-out scoring all drive episodes through this package.
"""
