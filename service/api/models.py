"""``GET /v1/models``: the model presets a workload can name, with their sources."""

from __future__ import annotations

import msgspec
from litestar import Controller, get

from service.sizing.presets import ModelKind, ModelPreset
from service.state import SuanliDep


class ModelInfo(msgspec.Struct, frozen=True, kw_only=True):
    """A preset as clients see it: id, size, architecture, aliases and provenance."""

    id: str
    display_name: str
    kind: ModelKind
    params_b: float
    active_params_b: float | None
    layers: int | None
    hidden: int | None
    heads: int | None
    kv_heads: int | None
    head_dim: int | None
    intermediate: int | None
    vocab: int | None
    tied_embeddings: bool
    experts: int
    experts_per_token: int
    image_size: int | None
    aliases: list[str]
    source: str
    activation_source: str | None
    confidence: str

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
