"""The two ways a live price fetch fails, as the refresh job needs to tell them apart.

Adapters translate their SDK's exceptions into these, because only the adapter knows its
SDK: the refresh job retries a :class:`TransientLivePriceError` (throttling, 5xx, network,
timeout) with back-off, and gives up at once on a plain :class:`LivePriceError`
(bad credentials, missing permission, malformed payload, wrong currency), where
retrying would only repeat the failure and burn the account's API quota.
"""

from __future__ import annotations


class LivePriceError(Exception):
    """A fetch failed in a way that retrying will not fix."""

    retryable = False


class TransientLivePriceError(LivePriceError):
    """A fetch failed in a way that may pass on retry: throttled, 5xx, network, timeout."""

    retryable = True
