"""Privacy before persistence: `<private>` spans vanish and secrets are redacted.

The corpus in fixtures/secrets_corpus.json holds real-shaped (fake) secrets that must be
redacted and look-alikes (code, prose, SHAs, UUIDs, timestamps...) that must not be.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from waymark.base.redact import scrub, scrub_many, scrub_value

CORPUS = json.loads(
    (Path(__file__).parent / "fixtures" / "secrets_corpus.json").read_text(encoding="utf-8")
)
POSITIVE = CORPUS["positive"]
NEGATIVE = CORPUS["negative"]


def _ids(samples):
    return [sample["name"] for sample in samples]


@pytest.mark.parametrize("sample", POSITIVE, ids=_ids(POSITIVE))
def test_scrub_redacts_each_real_shaped_secret(sample):
    out, count = scrub(sample["text"])
    assert count >= 1
    assert f"[REDACTED:{sample['kind']}]" in out
    for secret in sample["secrets"]:
        assert secret not in out


@pytest.mark.parametrize("sample", NEGATIVE, ids=_ids(NEGATIVE))
def test_scrub_leaves_each_look_alike_byte_identical(sample):
    assert scrub(sample["text"]) == (sample["text"], 0)


@pytest.mark.parametrize("sample", POSITIVE + NEGATIVE, ids=_ids(POSITIVE + NEGATIVE))
def test_scrubbing_twice_changes_nothing_more(sample):
    once, _ = scrub(sample["text"])
    assert scrub(once) == (once, 0)


def test_the_whole_corpus_scrubbed_as_one_text_is_idempotent_and_leaks_nothing():
    text = "\n".join(sample["text"] for sample in POSITIVE + NEGATIVE)
    once, count = scrub(text)
    assert count >= len(POSITIVE)
    assert scrub(once) == (once, 0)
    for sample in POSITIVE:
        for secret in sample["secrets"]:
            assert secret not in once


def test_scrub_many_gives_what_scrub_gives_each_text_in_every_mix():
    """Checking the rules' words once for a batch skips no rule any one text needs: every
    sample alone, beside each of a few others (a secret beside a look-alike, two secrets),
    and the whole corpus as one batch, each as `scrub` makes it."""
    import random

    texts = [sample["text"] for sample in POSITIVE + NEGATIVE]
    texts += ["", "a-tag", "<private>x</private>", "pa<private>x</private>ssword=hunter2hunter2"]
    rng = random.Random(7)
    batches = [[t] for t in texts] + [texts]
    batches += [rng.sample(texts, 3) for _ in range(300)]
    for batch in batches:
        assert scrub_many(batch) == [scrub(t) for t in batch]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("password=hunter2", "password=[REDACTED:password]"),
        ('password = "hunter2"', 'password = "[REDACTED:password]"'),
        ("postgres://user:pw@host/db", "postgres://user:[REDACTED:password]@host/db"),
        ("export API_KEY=abc123", "export API_KEY=[REDACTED:api_key]"),
        ("--token abc123 --verbose", "--token [REDACTED:token] --verbose"),
        ('{"client_secret": "x1"}', '{"client_secret": "[REDACTED:secret]"}'),
        (
            "User ID=sa;Password=Pw1;Encrypt=True",
            "User ID=sa;Password=[REDACTED:password];Encrypt=True",
        ),
        ("key AKIAIOSFODNN7EXAMPLE here", "key [REDACTED:aws_access_key] here"),
        ("Authorization: Bearer abc.def-123", "Authorization: Bearer [REDACTED:authorization]"),
        ("get(password='x')", "get(password='[REDACTED:password]')"),
    ],
)
def test_scrub_keeps_the_non_secret_part_around_the_marker(text, expected):
    assert scrub(text) == (expected, 1)


def test_a_private_span_vanishes_without_a_marker():
    assert scrub("keep <private>my home address</private> this") == ("keep  this", 1)


def test_private_tags_are_case_insensitive_and_span_lines():
    assert scrub("a <PRIVATE>\nline one\nline two\n</Private> b") == ("a  b", 1)


def test_each_private_span_is_dropped_separately_and_counted():
    text = "a <private>x</private> b <private>y</private> c"
    assert scrub(text) == ("a  b  c", 2)


def test_an_unclosed_private_span_drops_everything_to_the_end():
    assert scrub("before <private> the rest\nof the text") == ("before ", 1)


def test_a_private_tag_quoted_inside_a_private_span_does_not_end_it_early():
    text = "a <private>talk about <private> tags</private> still private</private> b"
    assert scrub(text) == ("a  b", 1)


def test_a_private_tag_joined_by_dropping_a_span_is_dropped_too():
    out, count = scrub("<pri<private>x</private>vate>hidden</private>!")
    assert (out, count) == ("!", 2)


def test_a_secret_inside_a_private_span_counts_once_as_the_span():
    assert scrub("<private>AKIAIOSFODNN7EXAMPLE</private>") == ("", 1)


def test_every_redaction_is_counted():
    text = (
        "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n"
        "DATABASE_URL=postgres://app:s3cret@db/app\n"
        "card 4111 1111 1111 1111 <private>note</private>"
    )
    out, count = scrub(text)
    assert count == 4
    assert out.count("[REDACTED:") == 3


def test_scrub_value_walks_nested_lists_tuples_and_dict_values():
    value = {
        "tags": ["deploy", "token=abc123def"],
        "evidence": [{"cmd": "psql postgres://u:pw9@h/db", "exit": 0}],
        "pair": ("AKIAIOSFODNN7EXAMPLE", None),
        "n": 3,
    }
    out, count = scrub_value(value)
    assert count == 3
    assert out == {
        "tags": ["deploy", "token=[REDACTED:token]"],
        "evidence": [{"cmd": "psql postgres://u:[REDACTED:password]@h/db", "exit": 0}],
        "pair": ("[REDACTED:aws_access_key]", None),
        "n": 3,
    }


def test_scrub_value_leaves_keys_and_non_strings_alone():
    value = {"password=hunter2": 1.5, "ok": True, "none": None}
    assert scrub_value(value) == (value, 0)


def test_scrub_value_of_a_plain_string_is_scrub():
    assert scrub_value("password=hunter2") == scrub("password=hunter2")


@pytest.mark.parametrize(
    "text",
    [
        "Le mot de passe est stocké côté serveur 🔐 — naïve café",
        "密码不会被记录。パスワードは保存されません。",
        "🚀🔥✨ ship it 🎉 👩‍💻",
        "",
    ],
)
def test_non_ascii_and_emoji_text_passes_through(text):
    assert scrub(text) == (text, 0)


def test_offsets_stay_right_when_lower_casing_changes_the_length():
    # `İ`.lower() is two characters, so the rules fall back to case-insensitive scans.
    text = "İstanbul 🔐 PASSWORD=hunter2 and Authorization: Bearer abcdefgh12"
    expected = (
        "İstanbul 🔐 PASSWORD=[REDACTED:password] and "
        "Authorization: Bearer [REDACTED:authorization]"
    )
    assert scrub(text) == (expected, 2)


def _hundred_kb(unit: str) -> str:
    return unit * (100_000 // len(unit) + 1)


ADVERSARIAL = {
    "many_assignments": _hundred_kb("a="),
    "many_password_keys": _hundred_kb("password="),
    "many_yaml_keys": _hundred_kb("password: "),
    "many_flags": _hundred_kb("--password "),
    "chained_code_values": _hundred_kb("token=a("),
    "annotations": _hundred_kb("token: Abc,"),
    "one_base64_run": "A" * 100_000,
    "jwt_prefixes": _hundred_kb("eyJ"),
    "jwt_like_segments": _hundred_kb("eyJabcde."),
    "pem_headers_without_end": _hundred_kb("-----BEGIN RSA PRIVATE KEY-----\n"),
    "private_openers": _hundred_kb("<private>"),
    "private_closers": _hundred_kb("</private>"),
    "one_digit_run": "4" * 100_000,
    "spaced_digits": _hundred_kb("4 "),
    "url_userinfo_without_at": _hundred_kb("https://a:"),
    "openai_prefix_then_letters": "sk-" + "a" * 100_000,
    "bearer_words": _hundred_kb("Bearer "),
    "unterminated_quote": 'password="' + "a" * 100_000,
    "xml_openers": _hundred_kb("<a_password>"),
    "many_tool_names": _hundred_kb("curl "),
    "tool_names_with_flags": _hundred_kb("mysql -u sshpass docker login -U x "),
    "curl_users_without_colon": _hundred_kb("curl -u "),
    "netrc_machines": _hundred_kb("machine a login b "),
    "config_sets": _hundred_kb("config set token "),
    "telegram_like_digits": _hundred_kb("1234567890:AA"),
    "realistic_mix": _hundred_kb("\n".join(s["text"] for s in POSITIVE + NEGATIVE)),
}


CONTACTS_ADVERSARIAL = {
    "one_local_part_run": "a" * 100_000 + "@",
    "many_ats": _hundred_kb("a@"),
    "dotted_digits": _hundred_kb("1."),
    "many_double_colons": _hundred_kb("a::"),
    "hex_and_colons": _hundred_kb("ab:"),
}


@pytest.mark.parametrize("text", CONTACTS_ADVERSARIAL.values(), ids=CONTACTS_ADVERSARIAL.keys())
def test_contact_redaction_of_100_kb_finishes_in_linear_time(text):
    from waymark.base.redact import scrub_contacts

    start = time.perf_counter()
    scrub_contacts(text)
    assert time.perf_counter() - start < 1.0


def test_contacts_become_markers_and_non_addresses_stay():
    from waymark.base.redact import scrub_contacts

    text = "to bob.o'neil@x.example from 192.168.1.20, v1.2.3, 999.1.1.1 at 12:30:45, 127.0.0.1"
    assert scrub_contacts(text) == (
        "to bob.o'[REDACTED:email] from [REDACTED:ip_address], v1.2.3, 999.1.1.1 at "
        "12:30:45, 127.0.0.1",
        2,
    )


@pytest.mark.parametrize("text", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_scrub_of_100_kb_finishes_in_linear_time(text):
    start = time.perf_counter()
    scrub(text)
    # Typical cost is 5-60 ms; a catastrophic backtrack would take minutes.
    assert time.perf_counter() - start < 1.0


def test_importing_redact_is_light_and_compiles_nothing_yet():
    code = (
        "import sys; before = set(sys.modules); import waymark.base.redact as r; "
        "print(len(r._COMPILED)); print(' '.join(sorted(set(sys.modules) - before)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, encoding="utf-8", check=True
    )
    compiled, modules = result.stdout.splitlines()
    assert compiled == "0"
    foreign = [
        name
        for name in modules.split()
        if name.split(".")[0] not in sys.stdlib_module_names
        and name != "waymark.base.redact"
        and name not in ("waymark", "waymark.base")
    ]
    assert foreign == []
    assert "typing" not in modules.split()


def test_scrub_cut_carries_an_open_private_span_into_the_window_it_scrubs():
    from waymark.base.redact import WINDOW, scrub_cut

    text = "<private>" + "x" * (2 * WINDOW) + " the customer is zebra</private> done"
    kept, count = scrub_cut(text, 400, tail=True)
    assert kept == " done" and count == 1


def test_scrub_cut_redacts_before_it_cuts_the_head():
    from waymark.base.redact import scrub_cut

    token = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    kept, count = scrub_cut("a" * 10 + " " + token, 20)
    assert kept == "a" * 10 + " [REDACTED" and count == 1


def test_scrub_long_keeps_everything_and_redacts_across_windows():
    from waymark.base.redact import WINDOW, scrub_long

    filler = "".join(f"build step {i:07d} ok\n" for i in range(WINDOW // 12))
    key = "-----BEGIN RSA PRIVATE KEY-----\n" + "MIIEowIBAAKCAQEA7x\n" * 4000
    text = filler + "<private>the vault code is QX-vault-ZZ9\n" + filler + "</private>\n" + key
    text += "-----END RSA PRIVATE KEY-----\n" + filler + "done: sk-proj-" + "a1B2" * 12 + "\n"
    clean, count = scrub_long(text)
    assert len(text) > 4 * WINDOW and count >= 3
    assert (
        "QX-vault-ZZ9" not in clean
        and "MIIEowIBAAKCAQEA7x" not in clean
        and "a1B2a1B2" not in clean
    )
    assert clean.startswith("build step 0000000 ok") and clean.endswith("\n")
    assert clean.count("build step 0000001 ok") == 2  # the filler outside the private span


def test_a_clearance_stamp_holds_for_its_own_text_under_its_own_redactor(monkeypatch):
    from waymark.base import redact

    text = "Staging resets nightly\n[]"
    stamp = redact.clearance(text)
    assert stamp is not None and redact.cleared(text, stamp)
    assert not redact.cleared(text + " ", stamp) and not redact.cleared(text, None)
    secret = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
    assert redact.clearance(f"token {secret}") is None
    assert redact.clearance("token [REDACTED:github_token]") is None  # a marker: flagged
    monkeypatch.setattr(redact, "_VERSION", [b"another redactor's rules" * 2])
    assert not redact.cleared(text, stamp)  # a changed redactor scans again
