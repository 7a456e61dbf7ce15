"""Byte-for-byte replay of recorded answers (see :mod:`tests.replay.test_replay`)."""
