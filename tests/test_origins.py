"""Host and Origin headers are parsed and compared exactly (the dashboard and the proxy)."""

from __future__ import annotations

import pytest

from waymark.base import origins


@pytest.mark.parametrize(
    "origin",
    [
        "http://localhost.evil.example",
        "http://127.0.0.1.nip.io",
        "http://localhostevil.example",
        "https://127.0.0.1.evil.example",
        "http://localhost@evil.example",
        "http://evil.example#@localhost",
        "http://127.0.0.1:80@evil.example",
        "http://[::1].evil.example",
        "http://127.0.0.1:8795/path",
        "http://127.0.0.1:x",
        "file://localhost",
        "null",
        "",
        "http://127.0.0.256",
        "http://localhost, http://evil.example",
    ],
)
def test_a_lookalike_origin_is_not_loopback(origin):
    assert not origins.loopback_origin(origin)


@pytest.mark.parametrize(
    "origin",
    ["http://localhost", "http://127.0.0.1:8795", "https://LOCALHOST:3000", "http://[::1]:9",
     "http://127.9.0.1"],
)  # fmt: skip
def test_a_loopback_origin_is(origin):
    assert origins.loopback_origin(origin)


def test_same_origin_is_the_faces_own_address_exactly():
    hosts = {"127.0.0.1:8787", "localhost:8787", "[::1]:8787"}
    assert origins.same_origin("http://127.0.0.1:8787", hosts)
    assert origins.same_origin("http://LocalHost:8787", hosts)
    assert origins.same_origin("http://[::1]:8787", hosts)
    for other in ("http://127.0.0.1:8788", "https://127.0.0.1:8787", "http://127.0.0.1",
                  "http://127.0.0.1:8787.evil.example", "http://localhost:8787@evil"):  # fmt: skip
        assert not origins.same_origin(other, hosts), other


def test_host_of_reads_names_addresses_and_ports():
    assert origins.host_of("[::1]:8795") == ("::1", "8795")
    assert origins.host_of("LocalHost") == ("localhost", "")
    assert origins.host_of("127.0.0.1:80") == ("127.0.0.1", "80")


@pytest.mark.parametrize(
    ("value", "url"),
    [("http://127.0.0.1:11434/v1/", "http://127.0.0.1:11434/v1"),
     ("https://api.example.com", "https://api.example.com"),
     ("http://127.0.0.1:", None), ("http://127.0.0.1:0", None), ("http://127.0.0.1:99999", None),
     ("http://:8080", None), ("ftp://x.example", None), ("127.0.0.1:8080", None),
     ("http://user@x.example", None)],
)  # fmt: skip
def test_an_upstream_is_a_url_with_a_host_and_a_real_port(value, url):
    """#44: `waymark proxy --upstream http://127.0.0.1:` (no port) started."""
    assert origins.upstream_url(value) == url


def test_the_proxy_refuses_an_upstream_without_its_port(capsys):
    from waymark.cli import main

    assert main(["proxy", "--upstream", "http://127.0.0.1:", "--json"]) == 1
    assert "an upstream is an http(s) URL" in capsys.readouterr().out
