"""Config checks at start-up (issue 9 item 10): refused with a message, or warned about."""

import hashlib
import json
import logging

import pytest
from click.testing import CliRunner

from gateway.app import default_registry
from gateway.chain.validate import validate_plugins
from gateway.cli.main import main
from gateway.config import parse_config
from gateway.runtime.config import ConfigError


def serve(tmp_path, data):
    path = tmp_path / "gateway.yaml"
    path.write_text(json.dumps(data))
    return CliRunner().invoke(main, ["serve", "--config", str(path), "--port", "0"])


@pytest.mark.parametrize("clients, message", [
    ([{"key": "k1", "user_id": "a"}, {"key": "k1", "user_id": "b"}], "clients.1: the same key as clients.0"),
    ([{"key": "k1", "user_id": "a"}, {"key_sha256": hashlib.sha256(b"k1").hexdigest(), "user_id": "b"}],
     "clients.1: the same key as clients.0"),
    ([{"key": "k1", "user_id": "a", "key_id": "dev"}, {"key": "k2", "user_id": "b", "key_id": "dev"}],
     "clients.1.key_id: 'dev' is also the key_id of clients.0"),
    ([{"key": "k1", "user_id": " a"}], "clients.0.user_id"),
    ([{"key": "k1", "user_id": "a", "friend_id": "tab\tx"}], "clients.0.friend_id"),
])
def test_duplicate_keys_and_bad_ids_are_refused_at_start(tmp_path, clients, message):
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        parse_config({"clients": clients})
    result = serve(tmp_path, {"clients": clients})
    assert result.exit_code == 1 and message in result.output, result.output


SPLICE = {"name": "tool_splice", "config": {"rounds": 1}}


@pytest.mark.parametrize("plugins, clients", [
    ([{"name": "hybrid_injection"}, SPLICE], []),
    ([SPLICE, {"name": "hybrid_injection"}], []),
    ([{"name": "hybrid_injection"}, {**SPLICE, "enabled": False}],
     [{"key": "k", "user_id": "u", "plugins": {"tool_splice": {"enabled": True}}}]),
])
def test_hybrid_injection_with_tool_splice_is_refused(tmp_path, plugins, clients):
    data = {"plugins": plugins, "clients": clients}
    with pytest.raises(ConfigError, match="cannot be enabled together"):
        validate_plugins(parse_config(data), default_registry())
    result = serve(tmp_path, data)
    assert result.exit_code == 1
    assert "'tool_splice' and 'hybrid_injection' cannot be enabled together" in result.output


def test_either_injection_plugin_alone_is_fine():
    validate_plugins(parse_config({"plugins": [{"name": "hybrid_injection"}, {**SPLICE, "enabled": False}]}), default_registry())
    validate_plugins(parse_config({"plugins": [SPLICE]}), default_registry())


async def test_the_composed_gateway_refuses_the_combination_too(upstream, redis_url, shared_model):
    from gateway.app import compose
    from tests.support.gateway import make_config

    config = make_config(upstream.url, redis_url, plugins=[{"name": "hybrid_injection"}, SPLICE])
    with pytest.raises(ConfigError, match="cannot be enabled together"):
        async with compose(config, embedder=shared_model.for_gateway(), start_plugins=False):
            pass


class Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.records = []

    def emit(self, record):
        self.records.append(record)


def test_openai_url_without_api_key_warns_at_start(start_gateway):
    # litestar reconfigures the root logger (caplog's handler goes): listen on "memgate"
    collect = Collect()
    logging.getLogger("memgate").addHandler(collect)
    try:
        start_gateway()  # the test upstream has a key and is not OpenAI: no warning
        assert not [r for r in collect.records if "api_key" in r.getMessage()]
        start_gateway(upstream={"base_url": "https://api.openai.com/v1", "api_key": ""})
    finally:
        logging.getLogger("memgate").removeHandler(collect)
    warnings = [r for r in collect.records if "upstream.api_key is empty" in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING
    assert "OPENAI_API_KEY" in warnings[0].getMessage() and "MEMGATE_UPSTREAM_URL" in warnings[0].getMessage()
