"""DLConfig and LinkStateConfig: validated once, passed whole (specs/dl.md section 6,
parameters; section 8)."""

from __future__ import annotations

import pytest

from tests.helpers.dl_links import (
    TL_512,
)
from ualink_ref.dl import (
    DataLink,
)
from ualink_ref.dl.config import DLConfig, LinkStateConfig
from ualink_ref.dl.linkstate import LinkManager, LinkState
from ualink_ref.errors import ConfigError, EncodeError


@pytest.mark.parametrize("options", [
    {"window": 0}, {"window": 257}, {"explicit_interval": 0}, {"explicit_interval": 33},
    {"replay_timeout": 0, "ack_delay": 1}, {"replay_timeout": -1, "ack_delay": 1},
    {"max_replays": 0}, {"ack_interval": 0}, {"ack_delay": 0},
])
def test_parameters_outside_their_range_are_refused(options: dict[str, float]) -> None:
    # Rules 2, 4, 6, 8: window 1..256, explicit_interval 1..32, the rest positive.
    with pytest.raises(ValueError):
        DataLink(DLConfig(**options))  # type: ignore[arg-type]


@pytest.mark.parametrize("options", [
    {"window": 1}, {"window": 256}, {"explicit_interval": 1}, {"explicit_interval": 32},
    {"replay_timeout": 0.5}, {"max_replays": 1}, {"ack_interval": 1}, {"ack_delay": 0.25},
])
def test_parameters_at_the_edge_of_their_range_are_accepted(options: dict[str, float]) -> None:
    link = DataLink(DLConfig(**options))  # type: ignore[arg-type]
    for name, value in options.items():
        assert getattr(link.config, name) == value


def test_the_default_replay_timeout_is_128_slots_and_the_ack_delay_a_quarter() -> None:
    # specs/dl.md: defaults assume `now` counts flit slots; 128-slot timeout, ack_delay
    # replay_timeout / 4 (rule 8).
    link = DataLink()
    assert (link.config.replay_timeout, link.config.effective_ack_delay) == (128, 32)
    link.send(TL_512[:1])
    link.poll(5)
    assert link.next_timer() == 133


@pytest.mark.parametrize("options", [
    {"window": 0}, {"window": 257}, {"window": True}, {"window": 2.0},
    {"replay_timeout": 0}, {"replay_timeout": float("inf")}, {"replay_timeout": float("nan")},
    {"replay_timeout": "128"}, {"max_replays": 0}, {"explicit_interval": 33},
    {"ack_interval": 0}, {"ack_delay": -1},
])
def test_a_bad_dl_option_value_is_a_config_error_naming_it(options: dict[str, object]) -> None:
    with pytest.raises(ConfigError) as info:
        DLConfig(**options)  # type: ignore[arg-type]
    assert info.value.option == next(iter(options))
    assert isinstance(info.value, EncodeError) and isinstance(info.value, ValueError)


@pytest.mark.parametrize("options", [
    {"retrain_slots": 0}, {"max_retrains": 0}, {"request_interval": -1.0},
    {"idle_after": float("nan")}, {"start_up": 1},
])
def test_a_bad_link_state_option_value_is_a_config_error_naming_it(
        options: dict[str, object]) -> None:
    with pytest.raises(ConfigError) as info:
        LinkStateConfig(**options)  # type: ignore[arg-type]
    assert info.value.option == next(iter(options))


def test_an_unknown_option_fails_at_construction() -> None:
    with pytest.raises(TypeError, match="replay_timout"):
        DLConfig(replay_timout=50)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="retrain_slot"):
        LinkStateConfig(retrain_slot=5)  # type: ignore[call-arg]
    # The engines take the configuration object and nothing else.
    with pytest.raises(TypeError):
        DataLink(replay_timeout=50)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        DataLink({"replay_timeout": 50})  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        LinkManager(DataLink(), retrain_slots=5)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        LinkManager(DataLink(), DLConfig())  # type: ignore[arg-type]


def test_the_engines_keep_the_configuration_they_were_given() -> None:
    dl_config = DLConfig(window=8, replay_timeout=40)
    link = DataLink(dl_config)
    assert link.config is dl_config and link.config.effective_ack_delay == 10
    state_config = LinkStateConfig(retrain_slots=64, start_up=False)
    manager = LinkManager(link, state_config)
    assert manager.config is state_config and manager.state is LinkState.DOWN
    with pytest.raises(AttributeError):
        link.config.window = 4  # type: ignore[misc]  # frozen
