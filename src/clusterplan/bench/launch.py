"""Who am I in the job: rank discovery from the launcher's standard environment variables.

clusterplan never launches processes itself. Whatever started this one left
its place in the environment, read here in this order (the first complete set
wins, so torchrun inside a Slurm allocation is read as torchrun):

=========  ======================================================  ===========================
launcher   rank, world size, local rank (, local world size)       rendezvous address
=========  ======================================================  ===========================
torchrun   RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE          MASTER_ADDR, MASTER_PORT (set)
srun       SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID,              MASTER_ADDR, MASTER_PORT
           SLURM_NTASKS_PER_NODE                                   (exported by the batch script)
mpirun     OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE   MASTER_ADDR, MASTER_PORT
(MPICH)    PMI_RANK, PMI_SIZE, MPI_LOCALRANKID                     MASTER_ADDR, MASTER_PORT
none       a world of one                                          not needed
=========  ======================================================  ===========================

``discover(env)`` is a pure function of the mapping it is given; options
(``--master-addr``, ``--master-port``) override the environment.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from clusterplan.errors import ConfigError
from clusterplan.schema import FROZEN

# (launcher, rank, world size, local rank, local world size) variables, in order of precedence.
LAUNCHERS = (
    ("torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"),
    ("srun", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"),
    ("mpirun", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE"),
    ("mpich", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"),
)
_HINTS = {
    "srun": "srun does not set it: in the batch script, export MASTER_ADDR=$(scontrol show hostnames "
            "\"$SLURM_JOB_NODELIST\" | head -n 1) and MASTER_PORT=29500",
    "mpirun": "mpirun does not set it: pass -x MASTER_ADDR=<first host> -x MASTER_PORT=29500",
    "mpich": "mpiexec does not set it: pass -genv MASTER_ADDR <first host> -genv MASTER_PORT 29500",
    "torchrun": "torchrun normally sets it",
}


@dataclass(**FROZEN)
class Launch:
    """This process's place in the job and where the ranks meet."""

    launcher: str                 # "torchrun", "srun", "mpirun", "mpich" or "none"
    rank: int
    world_size: int
    local_rank: int
    local_world_size: int | None  # None where the launcher does not say
    master_addr: str | None       # None for a world of one
    master_port: int | None

    def __post_init__(self) -> None:
        problems = []
        if self.world_size < 1:
            problems.append(f"world size ({self.world_size}) must be at least 1")
        if not 0 <= self.rank < max(self.world_size, 1):
            problems.append(f"rank ({self.rank}) must be in 0..{self.world_size - 1}")
        if self.local_rank < 0:
            problems.append(f"local rank ({self.local_rank}) must not be negative")
        if self.local_world_size is not None and not 0 <= self.local_rank < self.local_world_size:
            problems.append(f"local rank ({self.local_rank}) must be below the local world size "
                            f"({self.local_world_size})")
        if self.master_port is not None and not 1 <= self.master_port <= 65535:
            problems.append(f"master port ({self.master_port}) must be in 1..65535")
        if self.world_size > 1 and (not self.master_addr or self.master_port is None):
            problems.append(f"a world of {self.world_size} needs a master address and port")
        if problems:
            raise ConfigError("; ".join(problems), key=f"launch ({self.launcher})")

    @property
    def init_method(self) -> str:
        """``tcp://host:port`` for ``torch.distributed.init_process_group``."""
        host = f"[{self.master_addr}]" if self.master_addr and ":" in self.master_addr else self.master_addr
        return f"tcp://{host}:{self.master_port}"


def discover(env: Mapping[str, str], *, master_addr: str | None = None,
             master_port: int | None = None) -> Launch:
    """This process's ``Launch`` from the environment ``env`` (and the options, which win)."""
    for launcher, rank_var, size_var, local_var, local_size_var in LAUNCHERS:
        if rank_var in env and size_var in env:
            break
    else:
        return Launch(launcher="none", rank=0, world_size=1, local_rank=0, local_world_size=1,
                      master_addr=master_addr, master_port=master_port)
    rank = _integer(env, rank_var)
    world_size = _integer(env, size_var)
    local_rank = _integer(env, local_var) if local_var in env else 0
    local_world_size = _local_size(env, local_size_var, launcher)
    addr = master_addr or env.get("MASTER_ADDR") or None
    port = master_port if master_port is not None else (
        _integer(env, "MASTER_PORT") if env.get("MASTER_PORT") else None)
    if world_size > 1:
        missing = [name for name, value in (("MASTER_ADDR", addr), ("MASTER_PORT", port)) if value is None]
        if missing:
            raise ConfigError(f"{' and '.join(missing)} not set for {world_size} ranks started by {launcher}; "
                              f"{_HINTS[launcher]} (or pass --master-addr/--master-port)",
                              key=" and ".join(missing))
    return Launch(launcher=launcher, rank=rank, world_size=world_size, local_rank=local_rank,
                  local_world_size=local_world_size, master_addr=addr, master_port=port)


def _integer(env: Mapping[str, str], name: str) -> int:
    text = env[name].strip()
    if not re.fullmatch(r"[+-]?\d+", text):
        raise ConfigError(f"expected a whole number, got {env[name]!r}", key=name)
    return int(text)


def _local_size(env: Mapping[str, str], name: str, launcher: str) -> int | None:
    """The ranks on this node; Slurm writes uneven layouts as "4(x2),2", of which none is taken."""
    if name not in env:
        return None
    text = env[name].strip()
    if launcher == "srun":
        match = re.fullmatch(r"(\d+)(?:\(x\d+\))?", text)
        return int(match.group(1)) if match else None
    return _integer(env, name)
