"""Stand-in for PyTorch's repository tools/ (the peer suite: tests/peer/peer_suite.py)."""
