"""The environment a test launches ranks in: this one without any launcher's variables (pytest itself may run
under srun or torchrun), one OpenMP thread per rank, and a free local port for the rendezvous."""

import os
import socket

LAUNCH_PREFIXES = ("RANK", "WORLD_SIZE", "LOCAL_", "GROUP_", "ROLE_", "MASTER_", "TORCHELASTIC_", "SLURM_",
                   "OMPI_", "PMI_", "MPI_LOCAL")


def clean_env(**extra: str) -> dict:
    """This environment without any launcher's variables, with ``extra`` added."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(LAUNCH_PREFIXES)}
    return {**env, "OMP_NUM_THREADS": "1", **extra}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
