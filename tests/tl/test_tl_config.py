"""The TL's configuration (``tl/config.py``; ``specs/tl.md``, "Configuration"): one frozen
TLConfig, validated when it is built; an unknown option is Python's TypeError, a bad value
a ConfigError naming the option."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from ualink_ref.errors import ConfigError, EncodeError
from ualink_ref.tl import CreditConfig, TransactionLayer
from ualink_ref.tl.config import DEFAULT_TL_CONFIG, TLConfig
from ualink_ref.tl.limits import TLLimits


def test_the_default_is_a_frozen_value() -> None:
    assert TLConfig() == DEFAULT_TL_CONFIG
    assert TransactionLayer(1).config == TLConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULT_TL_CONFIG.compress = False  # type: ignore[misc]


@pytest.mark.parametrize("option", ["compres", "timeout", "max_responses", "credit"])
def test_an_unknown_option_is_a_type_error_at_construction(option: str) -> None:
    options: dict[str, Any] = {option: 1}
    with pytest.raises(TypeError, match=option):
        TLConfig(**options)


@pytest.mark.parametrize("option", ["compress", "timeout_slots", "credits", "split"])
def test_the_engine_takes_no_option_but_its_config(option: str) -> None:
    options: dict[str, Any] = {option: None}
    with pytest.raises(TypeError, match=option):
        TransactionLayer(1, **options)
    with pytest.raises(TypeError, match="TLConfig"):
        TransactionLayer(1, config={"compress": False})  # type: ignore[arg-type]


@pytest.mark.parametrize(("option", "value"), [
    ("credits", None),
    ("credits", (16, 16, 32, 32)),
    ("limits", None),
    ("compress", 1),
    ("batch_credit_returns", "yes"),
    ("split", "sometimes"),
    ("split_seed", 1.5),
    ("split_seed", True),
    ("timeout_slots", 0),
    ("timeout_slots", -3),
    ("timeout_slots", float("nan")),
    ("timeout_slots", True),
    ("timeout_slots", "5"),
    ("stop_tags", [2048]),
    ("stop_tags", [-1]),
    ("stop_tags", [True]),
])
def test_a_bad_value_is_a_config_error_naming_its_option(option: str, value: object) -> None:
    with pytest.raises(ConfigError) as got:
        TLConfig(**{option: value})
    assert got.value.option == option
    assert isinstance(got.value, EncodeError) and isinstance(got.value, ValueError)


def test_a_credit_config_that_cannot_carry_a_maximal_field_is_refused() -> None:
    short = CreditConfig(per_vc=(1, 1, 4, 4), pool=(0, 0, 0, 0))  # a Write needs 5 data
    with pytest.raises(ConfigError, match="maximal field") as got:
        TLConfig(credits=short)
    assert got.value.option == "credits"


@pytest.mark.parametrize(("make", "option"), [
    (lambda: CreditConfig(per_vc=(1, 2, 3)), "per_vc"),
    (lambda: CreditConfig(pool=(1, 2, 3, -1)), "pool"),
    (lambda: CreditConfig(pool=(1, 2, 3, 4.0)), "pool"),
    (lambda: TLLimits(max_responses=0), "max_responses"),
    (lambda: TLLimits(max_messages=True), "max_messages"),
    (lambda: TLLimits(max_credits=-1), "max_credits"),
])
def test_the_parts_of_a_config_refuse_bad_values_themselves(make: Any, option: str) -> None:
    with pytest.raises(ConfigError) as got:
        make()
    assert got.value.option == option


def test_given_values_are_kept_in_their_own_form() -> None:
    config = TLConfig(stop_tags=[3, 5], timeout_slots=7)  # type: ignore[arg-type]
    assert config.stop_tags == frozenset({3, 5}) and config.timeout_slots == 7
    assert CreditConfig(per_vc=[1, 2, 5, 4]).per_vc == (1, 2, 5, 4)  # type: ignore[arg-type]
    tl = TransactionLayer(1, config=config)
    assert tl.config is config and tl.limits is config.limits
