"""The node and run configurations: validated once, at construction (specs/README.md,
"Architecture"; each option's rule in the spec its docstring names)."""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from typing import Any

import pytest

from ualink_ref.dl.config import DLConfig
from ualink_ref.errors import ConfigError, EncodeError
from ualink_ref.node.config import EndpointConfig, LinkConfig, PfcConfig, SwitchConfig
from ualink_ref.node.endpoint import Endpoint
from ualink_ref.node.switch import Switch
from ualink_ref.phy.config import PhyConfig
from ualink_ref.sim.config import Burst, SimConfig
from ualink_ref.sim.fabric import FabricConfig
from ualink_ref.tl.config import TLConfig
from ualink_ref.tl.credits import CreditConfig


@pytest.mark.parametrize("make", [
    lambda: PhyConfig(fecc="kp4"),
    lambda: LinkConfig(tl_backlogg=3),
    lambda: EndpointConfig(fault=1),
    lambda: SwitchConfig(ports=2, latncy=1),
    lambda: SimConfig(replay_timout=5),
    lambda: Burst(len_bits=3),
], ids=["phy", "link", "endpoint", "switch", "sim", "burst"])
def test_a_misspelt_option_is_refused_at_construction(make: Any) -> None:
    with pytest.raises(TypeError, match="unexpected keyword"):
        make()


@pytest.mark.parametrize(("make", "option"), [
    (lambda: PhyConfig("turbo"), "fec"),
    (lambda: PhyConfig("kp4", 2), "interleave"),
    (lambda: PhyConfig("ll", 3), "interleave"),
    (lambda: LinkConfig(tl_backlog=0), "tl_backlog"),
    (lambda: LinkConfig(dl={"window": 4}), "dl"),
    (lambda: EndpointConfig(tl=DLConfig()), "tl"),
    (lambda: TLConfig(fault_status=3), "fault_status"),
    (lambda: SwitchConfig(ports=0), "ports"),
    (lambda: SwitchConfig(ports=2, latency=-1), "latency"),
    (lambda: SwitchConfig(ports=2, pfc=(1, 2)), "pfc"),
    (lambda: PfcConfig(xoff=4, xon=4), "xoff"),
    (lambda: SimConfig(batch=0), "batch"),
    (lambda: SimConfig(latency=-1), "latency"),
    (lambda: SimConfig(max_outstanding=0), "max_outstanding"),
    (lambda: SimConfig(ber=1.5), "ber"),
    (lambda: SimConfig(edge="middle"), "edge"),
    (lambda: SimConfig(acc_ids=(1, 1)), "acc_ids"),
    (lambda: SimConfig(stall_slots=0), "stall_slots"),
    (lambda: SimConfig(tl=TLConfig(), dl=7), "dl"),
    (lambda: Burst(length_bits=0), "length_bits"),
    # Found in review: each was taken, or refused later under another option's name.
    (lambda: SimConfig(seed="x"), "seed"),
    (lambda: SimConfig(acc_ids=(1, 5000)), "acc_ids"),
    (lambda: SimConfig(credits_b=CreditConfig(per_vc=(0, 0, 0, 0), pool=(0, 0, 0, 0))),
     "credits_b"),
    (lambda: PfcConfig(xoff=2.5, xon=1), "xoff"),
    (lambda: PfcConfig(xoff=3, xon=1, delay=0.5), "delay"),
    (lambda: SwitchConfig(ports=2, buffer=CreditConfig(per_vc=(0, 0, 0, 0),
                                                       pool=(0, 0, 0, 0))), "buffer"),
    (lambda: FabricConfig(accelerators=2.5), "accelerators"),
    (lambda: FabricConfig(fec="bogus"), "fec"),
    (lambda: FabricConfig(ber=2.0), "ber"),
    (lambda: FabricConfig(buffer=5), "buffer"),
    (lambda: FabricConfig(planes="2"), "planes"),
    (lambda: TLConfig(stop_tags=5), "stop_tags"),
    (lambda: TLConfig(timeout_slots=float("inf")), "timeout_slots"),
    (lambda: Burst(rate=-0.1), "rate"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_a_bad_value_is_a_config_error_naming_its_option(make: Any, option: str) -> None:
    with pytest.raises(ConfigError) as info:
        make()
    assert info.value.option == option
    assert isinstance(info.value, EncodeError) and isinstance(info.value, ValueError)


def test_configurations_are_frozen_values() -> None:
    config = EndpointConfig.with_fec("ll")
    assert config == EndpointConfig(link=LinkConfig(phy=PhyConfig("ll")))
    assert config.link.phy.fec == "ll" and config.tl == TLConfig()
    with pytest.raises(FrozenInstanceError):
        config.tl = config.tl  # type: ignore[misc]


def test_the_endpoint_runs_the_configuration_it_was_given() -> None:
    config = EndpointConfig(link=LinkConfig(phy=PhyConfig("ll", 2), dl=DLConfig(window=8),
                                            tl_backlog=5),
                            tl=TLConfig(compress=False, timeout_slots=40))
    ep = Endpoint(3, config=config)
    assert ep.config is config
    assert (ep.fec, ep.interleave, ep.wire_bytes_per_flit) == ("ll", 2, 680)
    assert ep.dl.config.window == 8 and ep.link_end.tl_backlog == 5
    assert ep.acc_id == 3


def test_the_link_run_derives_its_replay_timeout_unless_given() -> None:
    # 4 * (latency + batch) + 64, never below the DL's own 128 (net/timeouts.py).
    assert SimConfig().dl_config.replay_timeout == 128
    assert SimConfig(latency=50, batch=8).dl_config.replay_timeout == 4 * 58 + 64
    assert SimConfig(latency=50, dl=DLConfig(replay_timeout=60)).dl_config.replay_timeout == 60
    slow = SimConfig(latency=50, tl=TLConfig(timeout_slots=100.5))
    assert slow.watchdog_slots == 16 * (4 * 58 + 64) + 101  # rule S2 plus the timeout


def test_end_b_gets_its_own_credits_only() -> None:
    from ualink_ref.tl.credits import CreditConfig

    few = CreditConfig(per_vc=(1, 8, 5, 16), pool=(0, 0, 0, 0))
    config = SimConfig(credits_b=few)
    assert config.endpoint_config_b.tl.credits == few
    assert config.endpoint_config.tl.credits == CreditConfig()


@pytest.mark.parametrize("make", [
    lambda: Endpoint(1, config=TLConfig()),  # type: ignore[arg-type]
    lambda: Switch(LinkConfig(), {}),  # type: ignore[arg-type]
], ids=["endpoint", "switch"])
def test_an_engine_refuses_a_configuration_of_another_kind(make: Any) -> None:
    with pytest.raises(TypeError):
        make()


def test_a_switch_without_pfc_has_no_pause_peer_to_connect() -> None:
    switch = Switch(SwitchConfig(ports=2), {0: 0, 1: 1})
    with pytest.raises(ConfigError):
        switch.connect_pause_peer(0, Endpoint(0))
    with pytest.raises(ConfigError):
        Switch(SwitchConfig(ports=2), {0: 0, 1: 5})  # a route to a port that does not exist
