"""``GET /v1/models``: the model presets a workload can name, with their sources."""

from __future__ import annotations

from typing import Annotated

import msgspec
from litestar import Controller, get

from service.api.state import SuanliDep
from service.sizing.presets import ModelKind, ModelPreset


class ModelInfo(msgspec.Struct, frozen=True, kw_only=True):
    """A preset as clients see it: id, size, architecture, aliases and provenance."""

    id: Annotated[str, msgspec.Meta(description="Preset id to pass as `workload.model`.")]
    display_name: Annotated[str, msgspec.Meta(description="Human-readable model name.")]
    kind: Annotated[
        ModelKind,
        msgspec.Meta(
            description="Architecture class (e.g. decoder LLM, mixture of experts, encoder, CNN, "
            "detector, diffusion)."
        ),
    ]
    params_b: Annotated[
        float, msgspec.Meta(description="Total parameters in billions (all experts included).")
    ]
    active_params_b: Annotated[
        float | None,
        msgspec.Meta(
            description="Parameters active per token in billions (mixture of experts); `null` = "
            "all of them."
        ),
    ]
    layers: Annotated[
        int | None,
        msgspec.Meta(description="Transformer layers; `null` for non-transformer models."),
    ]
    hidden: Annotated[
        int | None,
        msgspec.Meta(description="Hidden size (d_model); `null` for non-transformer models."),
    ]
    heads: Annotated[
        int | None,
        msgspec.Meta(description="Attention (query) heads; `null` for non-transformer models."),
    ]
    kv_heads: Annotated[
        int | None,
        msgspec.Meta(
            description="Key/value heads (fewer than `heads` with grouped-query attention); "
            "`null` for non-transformer models."
        ),
    ]
    head_dim: Annotated[
        int | None,
        msgspec.Meta(
            description="Dimension of one attention head; `null` for non-transformer models."
        ),
    ]
    intermediate: Annotated[
        int | None,
        msgspec.Meta(
            description="MLP intermediate size (per expert); `null` for non-transformer models."
        ),
    ]
    vocab: Annotated[
        int | None, msgspec.Meta(description="Vocabulary size; `null` for models without one.")
    ]
    tied_embeddings: Annotated[
        bool, msgspec.Meta(description="True when input and output embeddings share one matrix.")
    ]
    experts: Annotated[int, msgspec.Meta(description="Experts per MoE layer (1 = dense model).")]
    experts_per_token: Annotated[
        int, msgspec.Meta(description="Experts each token is routed to (1 = dense model).")
    ]
    image_size: Annotated[
        int | None,
        msgspec.Meta(
            description="Default input image side in pixels (image models); `null` otherwise."
        ),
    ]
    aliases: Annotated[
        list[str],
        msgspec.Meta(
            description="Other names that select this preset (e.g. the Hugging Face repository id)."
        ),
    ]
    source: Annotated[
        str,
        msgspec.Meta(
            description="Public source of the architecture figures (model card or config file at "
            "a commit)."
        ),
    ]
    activation_source: Annotated[
        str | None,
        msgspec.Meta(
            description="Source of the activation-memory figures (image models); `null` when the "
            "standard transformer formula applies."
        ),
    ]
    confidence: Annotated[
        str,
        msgspec.Meta(description="How well the figures are sourced: `high`, `medium` or `low`."),
    ]

    @classmethod
    def of(cls, p: ModelPreset) -> ModelInfo:
        return cls(
            id=p.id,
            display_name=p.display_name,
            kind=p.kind,
            params_b=p.params_b,
            active_params_b=p.active_params_b,
            layers=p.layers,
            hidden=p.hidden,
            heads=p.heads,
            kv_heads=p.kv_heads,
            head_dim=p.head_dim,
            intermediate=p.intermediate,
            vocab=p.vocab,
            tied_embeddings=p.tied_embeddings,
            experts=p.experts,
            experts_per_token=p.experts_per_token,
            image_size=p.image_size,
            aliases=list(p.aliases),
            source=p.source,
            activation_source=p.activation_source,
            confidence=p.confidence,
        )


class ModelsController(Controller):
    path = "/v1/models"
    tags = ["models"]

    @get(summary="List model presets", sync_to_thread=False, operation_id="listModels")
    def list_models(self, suanli: SuanliDep) -> list[ModelInfo]:
        """Every model preset `workload.model` can name (ids and aliases), with the exact
        architecture and the public source each figure comes from."""
        return [ModelInfo.of(p) for p in suanli.models.all()]
