"""The backend's reading of keyring requests: Mercurial's `USER@@URL` key, and what it
writes to `git-credential-tokenctl get`. Run by KeyringBackendHostTests.swift:

    python3 -m unittest discover --start-directory Python/keyring-tokenctl/tests
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), ".."))
from keyring_tokenctl import MERCURIAL_SERVICE, _helper_request, _url_and_user  # noqa: E402


class MercurialKeyTests(unittest.TestCase):
    def test_a_key_names_its_user_and_url(self):
        self.assertEqual(_url_and_user(MERCURIAL_SERVICE, "oauth2@@https://hg.example.org/repo"),
                         ("https://hg.example.org/repo", "oauth2"))
        self.assertEqual(_url_and_user(MERCURIAL_SERVICE, "ada@@http://127.0.0.1:8000"),
                         ("http://127.0.0.1:8000", "ada"))
        self.assertEqual(_url_and_user(MERCURIAL_SERVICE, "x-token-auth@@https://[::1]:8443/a/b"),
                         ("https://[::1]:8443/a/b", "x-token-auth"))

    def test_a_user_name_holding_another_url_names_no_url(self):
        # What mercurial_keyring asks for http://oauth2%40%40http%3A%2F%2FTRUSTED%2F@EVIL/repo:
        # the user part, from the URL, names TRUSTED; Mercurial sends to EVIL.
        for key in ("oauth2@@http://trusted.example/@@http://evil.example/repo",
                    "oauth2@@https://trusted.example/@@https://evil.example/",
                    "oauth2@@http://trusted.example@@http://evil.example/",
                    "@@http://trusted.example/@@http://evil.example/"):
            self.assertIsNone(_url_and_user(MERCURIAL_SERVICE, key), key)
            self.assertIsNone(_helper_request(MERCURIAL_SERVICE, key), key)

    def test_a_user_that_is_not_a_plain_user_name_names_no_url(self):
        for user in ("oauth2@", "a@b", "http://trusted.example/", "trusted.example/", "ada:secret", "a\\b", ""):
            key = user + "@@https://hg.example.org/repo"
            self.assertIsNone(_url_and_user(MERCURIAL_SERVICE, key), key)

    def test_a_url_holding_the_separator_names_no_url(self):
        self.assertIsNone(_url_and_user(MERCURIAL_SERVICE, "oauth2@@https://hg.example.org/a@@b"))

    def test_an_smtp_key_or_no_key_is_not_ours(self):
        for key in ("ada@@smtp.example.org:587", "", None, "oauth2", "oauth2@@ftp://hg.example.org/"):
            self.assertIsNone(_url_and_user(MERCURIAL_SERVICE, key), key)

    def test_other_services_are_urls_as_pip_and_uv_name_them(self):
        self.assertEqual(_url_and_user("https://pypi.example.org/simple/", "oauth2"),
                         ("https://pypi.example.org/simple/", "oauth2"))
        self.assertEqual(_url_and_user("pypi.example.org", None), ("pypi.example.org", None))


class HelperRequestTests(unittest.TestCase):
    def test_the_request_names_the_url_and_the_user(self):
        self.assertEqual(_helper_request(MERCURIAL_SERVICE, "oauth2@@https://hg.example.org/repo"),
                         "url=https://hg.example.org/repo\nusername=oauth2\n\n")
        self.assertEqual(_helper_request("https://pypi.example.org/simple/", None),
                         "url=https://pypi.example.org/simple/\n\n")

    def test_a_line_break_adds_no_attribute(self):
        for service, user in (("https://a.example/\nhost=b.example", None), ("https://a.example/", "x\nhost=b"),
                              ("https://a.example/\r", None), ("https://a.example/\0", "x")):
            self.assertIsNone(_helper_request(service, user))


if __name__ == "__main__":
    unittest.main()
