"""Estimates with their uncertainty, shared by training and scoring: exact binomial bounds, pass@k, the share of
GRPO groups that carry signal, and paired bootstrap intervals. Pure Python and numpy, no I/O, no project imports."""
