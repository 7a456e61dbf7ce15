"""Where a candidate without a price ranks: the one rule, in one place.

An unknown price must never look cheap, and it must not pull the answer toward big
machines either (ranking unpriced offers by time alone puts 8xA100 first for a one-GPU
LoRA). So under ``cost`` and ``balanced``:

1. every priced candidate ranks before every unpriced one (the key's money tier, see
   :mod:`service.planning.price`);
2. among unpriced candidates, a serving replica over the fewest servers first: every
   pipeline stage adds an inter-server hop to each decoded token and no speed, so 2 x 8
   H20 (SGLang's DeepSeek-V3/R1 layout) serves R1 at about 1.5-1.7x the rate of 3 x 4
   H20 and ranks first although it has more cards (review 5 G12; 1 for every other
   job); then the smallest sufficient resources: fewest accelerators, then the least
   accelerator memory, then the fewest nodes (every node adds a system disk, its share
   of the scratch data and of the orchestration: one machine that covers a CPU job
   before five small ones), then the smallest host (vCPUs, then RAM, all nodes
   together);
3. then the faster one.

An offline batch job (a fixed number of output tokens) is the exception to 2: its bill
is its accelerator-hours times the card's price, and batching makes them differ many
times over between machines (FP8 Llama-3.1-70B, 1e9 tokens: one H20 holds 13 sequences
and takes 1,304 card-hours, 8 x H20 batch 436 in 265), so with the price unknown its
accelerator-hours come first (to 3 significant figures, so equal ones keep the smaller
machine), then the rest of 2 (review rev13s S2). Training scales about linearly, so its
accelerator-hours hardly differ and it keeps 2 as it is.

Under ``time`` the objective itself is speed, and unpriced candidates compete on it.

Estimated prices (labelled, with a basis and a range) are priced candidates for this
rule; a later tier between "quoted" and "unknown" belongs here too, so that the ranking
of what is not quoted stays in one function.
"""

from __future__ import annotations

import math

INF = math.inf


def unpriced_order(
    devices: int,
    device_memory_gib: float | None,
    vcpus: int | None,
    memory_gib: float | None,
    nodes: int,
    speed: float,
    stages: int = 1,
    device_hours: float | None = None,
) -> tuple[float, float, float, float, float, float, float, float]:
    """The part of an unpriced candidate's ranking key after its tier: the servers one
    serving replica spans (``stages``, its pipeline stages), then resources (accelerators,
    then their memory in total — a 24 GB card before a 96 GB one — then fewer nodes,
    then host vCPUs and RAM over all ``nodes``), then ``speed`` (hours, or minus the
    throughput when serving; lower is better). Every element comes after the tier and
    money the planner's bounds cover, so none of them changes which lanes it prices.
    ``device_hours``: an offline batch job's accelerator-hours, ranked right after the
    stages (see the module's exception to rule 2)."""
    accelerator_memory = devices * device_memory_gib if device_memory_gib else 0.0
    host_vcpus = vcpus * nodes if vcpus else INF
    host_memory = memory_gib * nodes if memory_gib else INF
    card_hours = float(f"{device_hours:.3g}") if device_hours else 0.0
    return (
        float(stages),
        card_hours,
        float(devices),
        accelerator_memory,
        float(nodes),
        float(host_vcpus),
        host_memory,
        speed,
    )
