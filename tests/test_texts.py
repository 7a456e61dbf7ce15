"""Text helpers of the planner's answers."""

from __future__ import annotations

from service.planning.texts import clip


def test_clip_keeps_short_text_and_cuts_long_text_at_a_word() -> None:
    assert clip("Alibaba purchase page") == "Alibaba purchase page"
    source = "github.com/a/b _posts/2023-06-17-gpu-prices.md ('GPU Prices Quick Reference', " * 3
    cut = clip(source)
    assert len(cut) <= 120
    assert cut.endswith("…")
    assert source.startswith(cut[:-1])
    assert source[len(cut) - 1] in " ,;:("


def test_clip_cuts_a_single_long_word_at_the_limit() -> None:
    assert clip("x" * 300, 50) == "x" * 49 + "…"
