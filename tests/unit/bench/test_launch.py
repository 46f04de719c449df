"""bench.launch.discover: ranks from torchrun, srun, mpirun and MPICH variables; a world of one without."""

import dataclasses

import pytest

from clusterplan.bench.launch import Launch, discover
from clusterplan.errors import ConfigError

MASTER = {"MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29500"}


def test_no_variables_is_a_world_of_one():
    """An empty environment: rank 0 of 1, no rendezvous address needed."""
    launch = discover({})
    assert (launch.launcher, launch.rank, launch.world_size, launch.local_rank) == ("none", 0, 1, 0)
    assert launch.master_addr is None and launch.master_port is None


def test_torchrun_variables():
    """RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE and the MASTER_* torchrun sets."""
    env = {"RANK": "5", "WORLD_SIZE": "16", "LOCAL_RANK": "5", "LOCAL_WORLD_SIZE": "8", **MASTER}
    launch = discover(env)
    assert launch == Launch(launcher="torchrun", rank=5, world_size=16, local_rank=5, local_world_size=8,
                            master_addr="10.0.0.1", master_port=29500)
    assert launch.init_method == "tcp://10.0.0.1:29500"


def test_srun_variables_with_exported_master():
    """SLURM_PROCID/NTASKS/LOCALID; SLURM_NTASKS_PER_NODE '4(x2)' gives 4 ranks per node."""
    env = {"SLURM_PROCID": "6", "SLURM_NTASKS": "8", "SLURM_LOCALID": "2", "SLURM_NTASKS_PER_NODE": "4(x2)",
           **MASTER}
    launch = discover(env)
    assert (launch.launcher, launch.rank, launch.world_size, launch.local_rank, launch.local_world_size) == (
        "srun", 6, 8, 2, 4)


def test_srun_without_master_says_what_to_export():
    """srun sets no MASTER_ADDR/PORT: the error names both and shows the scontrol line."""
    with pytest.raises(ConfigError) as info:
        discover({"SLURM_PROCID": "0", "SLURM_NTASKS": "4"})
    message = str(info.value)
    assert "MASTER_ADDR and MASTER_PORT not set for 4 ranks started by srun" in message
    assert "scontrol show hostnames" in message and "--master-addr" in message


def test_options_fill_in_and_override_the_environment():
    """--master-addr/--master-port win over MASTER_ADDR/MASTER_PORT and replace missing ones."""
    env = {"SLURM_PROCID": "1", "SLURM_NTASKS": "2", "MASTER_ADDR": "ignored"}
    launch = discover(env, master_addr="node-001", master_port=1234)
    assert (launch.master_addr, launch.master_port) == ("node-001", 1234)


def test_mpirun_and_mpich_variables():
    """OMPI_COMM_WORLD_* (Open MPI) and PMI_RANK/PMI_SIZE/MPI_LOCALRANKID (MPICH, Intel MPI)."""
    ompi = {"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_LOCAL_RANK": "1",
            "OMPI_COMM_WORLD_LOCAL_SIZE": "2", **MASTER}
    assert discover(ompi) == Launch(launcher="mpirun", rank=3, world_size=4, local_rank=1, local_world_size=2,
                                    master_addr="10.0.0.1", master_port=29500)
    mpich = {"PMI_RANK": "2", "PMI_SIZE": "3", "MPI_LOCALRANKID": "0", **MASTER}
    assert (discover(mpich).launcher, discover(mpich).rank, discover(mpich).local_world_size) == ("mpich", 2, None)


def test_torchrun_inside_a_slurm_job_is_torchrun():
    """RANK/WORLD_SIZE win over SLURM_* (torchrun started by srun, one agent per node)."""
    env = {"RANK": "9", "WORLD_SIZE": "16", "LOCAL_RANK": "1", "SLURM_PROCID": "1", "SLURM_NTASKS": "2", **MASTER}
    launch = discover(env)
    assert (launch.launcher, launch.rank, launch.world_size) == ("torchrun", 9, 16)


def test_single_task_srun_needs_no_master():
    """srun -n 1: a world of one, no rendezvous address needed."""
    assert discover({"SLURM_PROCID": "0", "SLURM_NTASKS": "1"}).world_size == 1


@pytest.mark.parametrize("env, key", [
    ({"RANK": "one", "WORLD_SIZE": "2", **MASTER}, "RANK"),
    ({"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "h", "MASTER_PORT": "port"}, "MASTER_PORT"),
])
def test_non_integer_variables_name_the_variable(env, key):
    """A variable that is not a whole number is a ConfigError naming it."""
    with pytest.raises(ConfigError) as info:
        discover(env)
    assert info.value.key == key and "expected a whole number" in info.value.message


def test_impossible_values_name_every_value():
    """Rank 4 of 4 and local rank 3 of 2: one error naming each value."""
    env = {"RANK": "4", "WORLD_SIZE": "4", "LOCAL_RANK": "3", "LOCAL_WORLD_SIZE": "2", **MASTER}
    with pytest.raises(ConfigError) as info:
        discover(env)
    assert "rank (4) must be in 0..3" in info.value.message
    assert "local rank (3) must be below the local world size (2)" in info.value.message


def test_ipv6_master_and_frozen_value():
    """An IPv6 address is bracketed in the init method; Launch is immutable."""
    launch = discover({"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "fd00::1", "MASTER_PORT": "29500"})
    assert launch.init_method == "tcp://[fd00::1]:29500"
    with pytest.raises(dataclasses.FrozenInstanceError):
        launch.rank = 1
