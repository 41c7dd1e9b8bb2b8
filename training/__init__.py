"""Post-training on one environment: recipes, the TRL environment over sandbox sessions, warm-up, the learnability
pre-flight, GRPO with LoRA, the in-domain lift, checkpoints and the run manifest. torch, transformers, trl and peft are
imported lazily (the `train` extra), so validation never loads them.
"""
