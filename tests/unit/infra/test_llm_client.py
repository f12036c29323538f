"""The LLM config and client against a real loopback HTTP server."""

from __future__ import annotations

import json
import time

import pytest

from core.infra.config import ConfigError
from core.infra.llm import LlmClient, LlmConfig, LlmError, load_llm_config


def client_for(url: str, **overrides: object) -> LlmClient:
    return LlmClient(LlmConfig(base_url=url, **overrides))


def test_shipped_config_has_no_endpoint(config_path):
    config = load_llm_config(config_path, environ={})
    assert config.base_url is None
    assert config.timeout_s == 20
    assert config.temperature == 0
    assert not LlmClient(config).configured


def test_env_overrides_file_values(config_path):
    env = {
        "MRPTUI_LLM_BASE_URL": "http://127.0.0.1:9/v1",
        "MRPTUI_LLM_MODEL": "local-7b",
        "MRPTUI_LLM_API_KEY": "sk-secret-123",
    }
    config = load_llm_config(config_path, environ=env)
    assert config.base_url == "http://127.0.0.1:9/v1"
    assert config.model == "local-7b"
    assert config.api_key.get_secret_value() == "sk-secret-123"
    assert "sk-secret-123" not in repr(config) and "sk-secret-123" not in str(config.model_dump())


def test_empty_env_values_keep_the_file_values(tmp_path):
    (tmp_path / "llm.json").write_text(json.dumps({"baseUrl": "http://127.0.0.1:9", "model": "m1"}))
    config = load_llm_config(tmp_path, environ={"MRPTUI_LLM_BASE_URL": "", "MRPTUI_LLM_MODEL": ""})
    assert (config.base_url, config.model) == ("http://127.0.0.1:9", "m1")


def test_missing_file_means_unconfigured(tmp_path):
    assert load_llm_config(tmp_path, environ={}).base_url is None


def test_bad_env_url_is_a_config_error_naming_the_variable(config_path):
    with pytest.raises(ConfigError, match="MRPTUI_LLM_BASE_URL"):
        load_llm_config(config_path, environ={"MRPTUI_LLM_BASE_URL": "ftp://example"})


def test_bad_file_value_points_at_its_line(tmp_path):
    (tmp_path / "llm.json").write_text('{\n  "baseUrl": null,\n  "timeoutSeconds": -1\n}\n')
    with pytest.raises(ConfigError) as caught:
        load_llm_config(tmp_path, environ={})
    assert caught.value.diagnostics[0].line == 3


def test_unconfigured_client_refuses_without_connecting():
    with pytest.raises(LlmError, match="no LLM endpoint configured"):
        LlmClient(LlmConfig()).chat([{"role": "user", "content": "hi"}])


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/"])
def test_posts_openai_shape_to_chat_completions(llm_server, suffix):
    llm_server.reply("hello there")
    client = client_for(llm_server.url + suffix, model="m-test", api_key="sk-abc")
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    assert client.chat(messages) == "hello there"
    [request] = llm_server.received
    assert request.path == "/v1/chat/completions"
    assert request.headers["Authorization"] == "Bearer sk-abc"
    assert request.headers["Content-Type"] == "application/json"
    assert request.json == {"model": "m-test", "messages": messages, "temperature": 0.0}


def test_no_authorization_header_without_a_key(llm_server):
    llm_server.reply("ok")
    client_for(llm_server.url).chat([{"role": "user", "content": "hi"}])
    assert "Authorization" not in llm_server.received[0].headers


def test_json_mode_and_model_role(llm_server):
    llm_server.reply("{}")
    client = client_for(llm_server.url, model="base", models={"deep": "big-model"})
    client.chat([{"role": "user", "content": "hi"}], response_format_json=True, role="deep")
    sent = llm_server.received[0].json
    assert sent["response_format"] == {"type": "json_object"}
    assert sent["model"] == "big-model"


def test_timeout_is_an_error_naming_the_limit(llm_server):
    llm_server.reply("too late", delay_s=1.0)
    client = client_for(llm_server.url, timeout_s=0.3)
    started = time.monotonic()
    with pytest.raises(LlmError, match=r"timed out after 0\.3 s"):
        client.chat([{"role": "user", "content": "hi"}])
    assert time.monotonic() - started < 0.9


def test_http_error_status_and_body_excerpt(llm_server):
    llm_server.reply_raw(500, b"upstream exploded" + b"x" * 500)
    with pytest.raises(LlmError) as caught:
        client_for(llm_server.url).chat([{"role": "user", "content": "hi"}])
    assert caught.value.reason.startswith("LLM endpoint returned HTTP 500: upstream exploded")
    assert len(caught.value.reason) < 260


def test_non_json_body(llm_server):
    llm_server.reply_raw(200, b"<html>gateway</html>")
    with pytest.raises(LlmError, match="non-JSON body: <html>gateway"):
        client_for(llm_server.url).chat([{"role": "user", "content": "hi"}])


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (
            b'{"choices": ' + b"[" * 200_000 + b"]" * 200_000 + b"}",
            "JSON nested deeper than 100 levels (at character 112)",
        ),
        (b'{"choices": [], "usage": ' + b"9" * 5_000 + b"}", "a number of 5,000 digits; at most 4,300 are read"),
    ],
    ids=["nested", "long-number"],
)
def test_a_body_json_cannot_take_is_an_llm_error_saying_why(llm_server, body, reason):
    """Not a RecursionError or the interpreter's advice: the plugin reports the reason as it is."""
    llm_server.reply_raw(200, body)
    with pytest.raises(LlmError) as caught:
        client_for(llm_server.url).chat([{"role": "user", "content": "hi"}])
    assert caught.value.reason == f"LLM endpoint returned {reason}"


@pytest.mark.parametrize("body", [{"choices": []}, {"result": "hi"}, {"choices": [{"text": "hi"}]}])
def test_reply_without_choices_message(llm_server, body):
    llm_server.reply_raw(200, json.dumps(body).encode())
    with pytest.raises(LlmError, match=r"no choices\[0\]\.message"):
        client_for(llm_server.url).chat([{"role": "user", "content": "hi"}])


def test_null_content(llm_server):
    llm_server.reply_raw(200, json.dumps({"choices": [{"message": {"content": None}}]}).encode())
    with pytest.raises(LlmError, match="no message content"):
        client_for(llm_server.url).chat([{"role": "user", "content": "hi"}])


def test_connection_refused(refused_url):
    with pytest.raises(LlmError, match="refused the connection"):
        client_for(refused_url, timeout_s=2).chat([{"role": "user", "content": "hi"}])
