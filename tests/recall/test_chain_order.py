"""The recall plugins' declared order is checked at start-up."""

import pytest

from gateway.chain.validate import validate_plugins
from gateway.config import parse_config
from gateway.runtime.config import ConfigError
from tests.recall.conftest import REGISTRY

RECOMMENDED = ["recall_report", "auto_recall", "hybrid_injection", "personalization", "tool_splice", "token_budget"]


def config(names, disabled=()):
    return parse_config({"plugins": [{"name": n, "enabled": n not in disabled} for n in names]})


def test_the_recommended_order_is_accepted():
    # tool_splice is an alternative to hybrid_injection: never both enabled (as gateway.yaml)
    validate_plugins(config(RECOMMENDED, disabled={"tool_splice"}), REGISTRY)
    validate_plugins(config(RECOMMENDED, disabled={"hybrid_injection"}), REGISTRY)
    validate_plugins(config(["auto_recall", "personalization", "hybrid_injection", "token_budget"]), REGISTRY)


@pytest.mark.parametrize("names, message", [
    (["hybrid_injection", "auto_recall"], "'hybrid_injection' \\(entry 0\\) must run after 'auto_recall'"),
    (["token_budget", "personalization"], "'token_budget' \\(entry 0\\) must run after 'personalization'"),
    (["auto_recall", "hybrid_injection", "recall_report"], "'recall_report' \\(entry 2\\) must run before 'hybrid_injection'"),
])
def test_a_wrong_order_is_refused_naming_both_plugins(names, message):
    with pytest.raises(ConfigError, match=message):
        validate_plugins(config(names), REGISTRY)


def test_config_typos_name_their_path():
    with pytest.raises(ConfigError, match=r"plugins\.0\.config\.limt"):
        validate_plugins(parse_config({"plugins": [{"name": "auto_recall", "config": {"limt": 3}}]}), REGISTRY)
