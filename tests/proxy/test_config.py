from __future__ import annotations

from pathlib import Path

import pytest

from proxy.config import ConfigError, HostPort, parse_duration, parse_size, resolve


def test_defaults() -> None:
    config = resolve({"upstream": "http://127.0.0.1:8000"}, env={})
    assert config.listen == HostPort("0.0.0.0", 8080)
    assert config.admin == HostPort("127.0.0.1", 9464)
    assert config.max_body_bytes == 8 * 1024 * 1024
    assert config.readiness_path == "/health"


def test_flags_override_environment_override_file(tmp_path: Path) -> None:
    file = tmp_path / "warden.yaml"
    file.write_text("upstream: http://file:1\nlisten: 0.0.0.0:7000\nmax-body-bytes: 1MiB\nbackend: triton\n")
    env = {"WARDEN_LISTEN": "127.0.0.1:7001", "WARDEN_UPSTREAM": "http://env:2"}
    config = resolve({"upstream": "http://flag:3", "listen": None}, env=env, config_file=file)
    assert config.upstream == "http://flag:3"
    assert config.listen == HostPort("127.0.0.1", 7001)
    assert config.max_body_bytes == 1024 * 1024
    assert config.readiness_path == "/v2/health/ready"


def test_config_file_from_environment(tmp_path: Path) -> None:
    file = tmp_path / "w.yaml"
    file.write_text("upstream: http://file:1\nupstream_timeout: 2m\n")
    config = resolve({}, env={"WARDEN_CONFIG": str(file), "WARDEN_UPSTREAM_CONNECT_TIMEOUT": "1.5s"})
    assert config.upstream_timeout == 120.0
    assert config.upstream_connect_timeout == 1.5


@pytest.mark.parametrize(
    ("flags", "needle"),
    [
        ({}, "no upstream"),
        ({"upstream": "ftp://x"}, "upstream must be"),
        ({"upstream": "http://x", "listen": "nowhere"}, "listen"),
        ({"upstream": "http://x", "backend": "nope"}, "backend"),
        ({"upstream": "http://x", "tls_cert": "c.pem"}, "tls_key"),
        ({"upstream": "http://x", "max_body_bytes": "big"}, "max_body_bytes"),
    ],
)
def test_bad_values_name_the_key(flags: dict[str, object], needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        resolve(flags, env={})


def test_unknown_file_key_is_an_error(tmp_path: Path) -> None:
    file = tmp_path / "w.yaml"
    file.write_text("upstream: http://x\nlisten_port: 1\n")
    with pytest.raises(ConfigError, match="unknown keys"):
        resolve({}, env={}, config_file=file)


def test_units() -> None:
    assert parse_size("8MiB") == 8 * 1024 * 1024
    assert parse_size("512k") == 512_000
    assert parse_duration("250ms") == 0.25
    assert parse_duration("2m") == 120


@pytest.mark.parametrize(("env", "verify"), [
    ({}, True),
    ({"WARDEN_UPSTREAM_CA": "/etc/warden/upstream-ca.pem"}, "/etc/warden/upstream-ca.pem"),
    ({"WARDEN_UPSTREAM_CA": "/etc/warden/upstream-ca.pem", "WARDEN_UPSTREAM_TLS_VERIFY": "false"}, False),
])
def test_how_an_https_upstream_is_checked(env: dict[str, str], verify: bool | str) -> None:
    config = resolve({"upstream": "https://model.internal:8443"}, env=env)
    assert config.upstream_verify == verify


def test_an_https_upstream_gets_mitmproxys_tls_addon_and_the_ca(tmp_path: Path) -> None:
    from mitmproxy.addons.tlsconfig import TlsConfig

    from proxy.server import mitm_addons, mitm_options

    plain = resolve({"upstream": "http://127.0.0.1:8000"}, env={})
    assert not any(isinstance(a, TlsConfig) for a in mitm_addons(plain))
    https = resolve({"upstream": "https://model.internal:8443", "upstream_ca": "/ca.pem"}, env={})
    assert any(isinstance(a, TlsConfig) for a in mitm_addons(https))
    assert mitm_options(https, tmp_path)["ssl_verify_upstream_trusted_ca"] == "/ca.pem"
    assert "ssl_verify_upstream_trusted_ca" not in mitm_options(plain, tmp_path)


def test_workers_is_auto_or_a_count() -> None:
    """`--workers` / WARDEN_WORKERS / `workers:`: 0 stands for auto (proxy/cpus.py decides at start)."""
    base = {"upstream": "http://127.0.0.1:8000"}
    assert resolve(base, env={}).workers == 0
    assert resolve(base, env={"WARDEN_WORKERS": "auto"}).workers == 0
    assert resolve({**base, "workers": "4"}, env={"WARDEN_WORKERS": "2"}).workers == 4
    for bad in ("0", "-1", "65", "two"):
        with pytest.raises(ConfigError, match="workers"):
            resolve({**base, "workers": bad}, env={})


def test_user_heads_from_a_flag_the_environment_or_the_file(tmp_path: Path) -> None:
    up = {"upstream": "http://m:1"}
    assert resolve(up, env={}).heads is None
    assert resolve({**up, "heads": "/a.json"}, env={"WARDEN_HEADS": "/b.json"}).heads == "/a.json"
    assert resolve(up, env={"WARDEN_HEADS": "/b.json"}).heads == "/b.json"
    cfg = tmp_path / "warden.yaml"
    cfg.write_text("heads: mine.json\n")
    assert resolve(up, env={}, config_file=cfg).heads == str(tmp_path / "mine.json")  # next to the file
    with pytest.raises(ConfigError, match="need the semantic stage"):
        resolve({**up, "heads": "/a.json", "semantic": False}, env={})
