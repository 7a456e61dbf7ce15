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
) -> tuple[float, float, float, float, float, float, float]:
    """The part of an unpriced candidate's ranking key after its tier: the servers one
    serving replica spans (``stages``, its pipeline stages), then resources (accelerators,
    then their memory in total — a 24 GB card before a 96 GB one — then fewer nodes,
    then host vCPUs and RAM over all ``nodes``), then ``speed`` (hours, or minus the
    throughput when serving; lower is better). Every element comes after the tier and
    money the planner's bounds cover, so none of them changes which lanes it prices."""
    accelerator_memory = devices * device_memory_gib if device_memory_gib else 0.0
    host_vcpus = vcpus * nodes if vcpus else INF
    host_memory = memory_gib * nodes if memory_gib else INF
    return (
        float(stages),
        float(devices),
        accelerator_memory,
        float(nodes),
        float(host_vcpus),
        host_memory,
        speed,
    )
