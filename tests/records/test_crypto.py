"""Credentials at rest: Fernet with the configured key, or one derived from SECRET_KEY."""

from __future__ import annotations

import pytest
from cryptography.fernet import Fernet

from memoryhub import crypto


def test_round_trip_and_the_secret_is_not_in_the_stored_text():
    token = crypto.encrypt_json({"api_key": "m0-very-secret"})
    assert "m0-very-secret" not in token
    assert crypto.decrypt_json(token) == {"api_key": "m0-very-secret"}


def test_none_is_stored_as_nothing():
    assert crypto.encrypt_json(None) == ""
    assert crypto.decrypt_json("") is None


def test_the_configured_key_is_used(settings):
    key = Fernet.generate_key().decode()
    settings.MEMORYHUB_CREDENTIAL_KEY = key
    token = crypto.encrypt_json({"api_key": "k"})
    assert Fernet(key.encode()).decrypt(token.encode()) == b'{"api_key": "k"}'


def test_a_key_derived_from_secret_key_changes_with_it(settings):
    settings.MEMORYHUB_CREDENTIAL_KEY = ""
    token = crypto.encrypt_json({"api_key": "k"})
    settings.SECRET_KEY = "another-secret-key"
    with pytest.raises(crypto.CredentialError):
        crypto.decrypt_json(token)


def test_a_tampered_token_is_refused():
    token = crypto.encrypt_json({"api_key": "k"})
    with pytest.raises(crypto.CredentialError):
        crypto.decrypt_json(token[:-4] + "AAAA")


def test_a_malformed_configured_key_fails_the_system_check(settings):
    settings.MEMORYHUB_CREDENTIAL_KEY = "not-a-fernet-key"
    assert [e.id for e in crypto.check_key()] == ["memoryhub.E101"]
    settings.MEMORYHUB_CREDENTIAL_KEY = Fernet.generate_key().decode()
    assert crypto.check_key() == []
