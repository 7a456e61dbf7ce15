"""The network between the servers of a multi-node training placement.

A multi-node job's data-parallel/ZeRO traffic crosses the servers' RDMA network
(:func:`service.sizing.compute.data_parallel_link_gbps`), so the planner needs each
type's figure: the RDMA figure a source states apart from the VPC (``rdma_gbps``), else
for eRDMA the instance's own network (Alibaba: "eRDMA reuses virtual private clouds
(VPCs) as the underlying link", "An ERI reuses the network to which an ENI belongs",
https://www.alibabacloud.com/help/en/ecs/user-guide/erdma-overview), else the stated
default per accelerator
(:data:`~service.sizing.compute.RDMA_DEFAULT_GBPS_PER_ACCELERATOR`).
"""

from __future__ import annotations

from service.catalog.models import InstanceType
from service.sizing.compute import RDMA_DEFAULT_GBPS_PER_ACCELERATOR


def node_network(row: InstanceType) -> tuple[float, bool] | None:
    """(Gbit/s per server to other servers, whether a source states it) of an RDMA/eRDMA
    type; ``None`` for a type that does not span servers."""
    if row.rdma not in ("rdma", "erdma"):
        return None
    if row.rdma_gbps:
        return row.rdma_gbps, True
    if row.rdma == "erdma" and row.network_gbps:
        return row.network_gbps, True
    return RDMA_DEFAULT_GBPS_PER_ACCELERATOR * max(row.accelerator_count, 1), False
