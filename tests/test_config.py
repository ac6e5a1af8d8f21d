"""gateway.yaml: env interpolation, frozen models, bad keys named by path."""

import pytest
from pydantic import ValidationError

from gateway.config import load_config
from gateway.runtime.config import ConfigError


def write(tmp_path, text):
    path = tmp_path / "gateway.yaml"
    path.write_text(text)
    return path


def test_env_interpolation_with_defaults(tmp_path):
    path = write(tmp_path, """
upstream: {base_url: "${UP:-http://x/v1}", api_key: "${UP_KEY}"}
# a comment mentioning ${NOT_SET} is inert
clients:
  - {key: "${ALICE}", user_id: alice}
""")
    config = load_config(path, {"UP_KEY": "sk-1", "ALICE": "a-key"})
    assert config.upstream.base_url == "http://x/v1" and config.upstream.api_key == "sk-1"
    assert config.clients[0].key == "a-key" and config.clients[0].friend_id == "default"


def test_unset_variable_is_named(tmp_path):
    with pytest.raises(ConfigError, match="MISSING_VAR is not set"):
        load_config(write(tmp_path, "upstream: {api_key: '${MISSING_VAR}'}"), {})


@pytest.mark.parametrize("text, path", [
    ("server: {prot: 1}", "server.prot"),
    ("upstream: {routes: [{models: ['a*'], timeout: 3}]}", "upstream.routes.0.timeout"),
    ("clients: [{user_id: u}]", "clients.0"),
    ("memory: {backend: sqlite}", "memory.backend"),
    ("plugins: [{name: x, enable: true}]", "plugins.0.enable"),
    ("telemetry: {exporter: jaeger}", "telemetry.exporter"),
])
def test_a_bad_key_stops_start_up_with_its_path(tmp_path, text, path):
    with pytest.raises(ConfigError, match=path.replace(".", r"\.")):
        load_config(write(tmp_path, text), {})


def test_config_is_frozen(tmp_path):
    config = load_config(write(tmp_path, "server: {port: 9000}"), {})
    with pytest.raises(ValidationError):
        config.server.port = 1  # type: ignore[misc]


def test_shipped_gateway_yaml_is_valid():
    from pathlib import Path

    from gateway.app import default_registry
    from gateway.chain.validate import validate_plugins

    config = load_config(Path(__file__).resolve().parent.parent / "gateway.yaml",
                         {"OPENAI_API_KEY": "sk-x", "MEMGATE_KEY": "k", "MEMGATE_ADMIN_KEY": "a"})
    validate_plugins(config, default_registry())


def test_relative_paths_resolve_against_the_config_folder(tmp_path, monkeypatch):
    folder = tmp_path / "etc" / "memgate"
    folder.mkdir(parents=True)
    (folder / "model").mkdir()
    path = folder / "gateway.yaml"
    path.write_text("memory: {data_dir: ./store, embedding: {model: ./model}}")
    monkeypatch.chdir(tmp_path)  # another folder: it must not matter
    config = load_config("etc/memgate/gateway.yaml", {})
    assert config.memory.data_dir == folder / "store"
    assert config.memory.embedding.model == "./model"  # the recorded name is unchanged
    from gateway.memory.embeddings.local import model_path

    assert model_path(config.memory.embedding.model_name, config.memory.embedding.config_dir) == folder / "model"


def test_default_data_dir_is_next_to_the_config_and_absolute_paths_stay(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "conf").mkdir()
    assert load_config(write(tmp_path / "conf", ""), {}).memory.data_dir == tmp_path / "conf" / "data"
    elsewhere = tmp_path / "abs"
    config = load_config(write(tmp_path / "conf", f"memory: {{data_dir: {elsewhere}}}"), {})
    assert config.memory.data_dir == elsewhere
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    config = load_config(write(tmp_path / "conf", "memory: {data_dir: ~/mg}"), {})
    assert config.memory.data_dir == tmp_path / "home" / "mg"


def test_a_client_whose_variable_is_unset_is_left_out_only_when_asked(tmp_path, caplog):
    path = write(tmp_path, """
clients:
  - {key: k-dev, user_id: demo, friend_id: assistant}
  - {key: "${GROUP_BOT_KEY}", user_id: groupbot, service: true, group: true}
""")
    with pytest.raises(ConfigError, match="GROUP_BOT_KEY is not set"):  # serve: strict
        load_config(path, {})
    with caplog.at_level("WARNING", logger="gateway.config"):
        config = load_config(path, {}, skip_unset_clients=True)
    assert [c.user_id for c in config.clients] == ["demo"]
    assert "clients.1 left out" in caplog.text and "GROUP_BOT_KEY" in caplog.text
    both = load_config(path, {"GROUP_BOT_KEY": "k-group"}, skip_unset_clients=True)
    assert [c.user_id for c in both.clients] == ["demo", "groupbot"]
