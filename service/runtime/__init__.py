"""What every room stands on and that knows nothing of jobs or clouds: settings, errors,
response cache and stores, bounded memos, logs and request ids, metrics, rate limit, and
the board that shares catalog changes between workers.
"""
