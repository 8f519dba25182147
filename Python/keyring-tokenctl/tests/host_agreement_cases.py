"""Hostile URLs, each with what the keyring backend would ask tokenctl's helper and where
the tool would send the token it got: the cases of the host-agreement check
(Tests/TokenCtlCLITests/Integration/KeyringBackendHostTests.swift), which reads each
request with the helper's own URL reader.

    host_agreement_cases.py [--count N] [--seed S]

Prints one JSON object a line: `tool`, the `url` the user gave the tool, the `service` and
`username` keyring was asked with, the helper's input `request` (null when the backend
asks nothing), and where the tool connects: `scheme`, `host` as the tool gives it, and
`port` (the scheme's default when the URL names none). A URL the tool refuses sends
nothing and gives no case.

Each tool is its own code, not a model of it: urllib3's parse_url (pip's vendored copy);
pip's own request preparation (requests) and the way pip names the index to keyring; and
Mercurial's URL reader with mercurial_keyring's own key, then the connection Mercurial
opens (urllib's Request, http.client). Debian's python3 runs it: Mercurial is a module of
that Python only.
"""

import argparse
import http.client
import json
import os
import random
import sys
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), ".."))
import keyring_tokenctl  # noqa: E402
import mercurial_keyring  # noqa: E402
from mercurial.utils import urlutil  # noqa: E402
from pip._internal.utils.misc import split_auth_netloc_from_url  # noqa: E402
from pip._vendor.requests.models import PreparedRequest  # noqa: E402
from pip._vendor.urllib3.util import parse_url  # noqa: E402

DEFAULT_PORTS = {"http": 80, "https": 443}

# The shapes reviews and the URL parsers' own bug trackers found hosts hiding in: user
# names holding URLs or `@`, backslashes (a path separator to WHATWG readers), `://` in a
# path, percent-encodings, IPv6 literals with zones, ports that are empty, padded or too
# big, and Unicode that folds to ASCII punctuation.
SCHEMES = ["http", "https", "HTTP", "hTTps", "ftp", ""]
USERINFO = ["", "", "", "oauth2@", "ada:secret@", "@", "oauth2@@", "%40@", "trusted.example@",
            "http://trusted.example/@", "oauth2%40%40http%3A%2F%2Ftrusted.example%2F@",
            "oauth2%40%40https%3A%2F%2Ftrusted.example%3A8443%2F@", "a\\@", "user@evil.example@", "\u00fc@",
            "oauth2@@http://trusted.example/@"]
HOSTS = ["trusted.example", "TRUSTED.example", "evil.example", "127.0.0.1", "[::1]", "[fe80::1%25eth0]",
         "[::ffff:127.0.0.1]", "xn--bcher-kva.example", "b\u00fccher.example", "%65vil.example", "evil.example.",
         "trusted.example\\evil.example", "trusted.example%2Fevil.example", "", "localhost", "trusted.example:8443"]
PORTS = ["", "", "", ":443", ":8080", ":", ":0080", ":65536", ":x", ":80:81"]
PATHS = ["", "/", "/repo", "/simple/", "/@@http://trusted.example/", "/x/http://trusted.example/",
         "\\@trusted.example/", "/%2F%2Ftrusted.example/", "/a\\b", ";x", "/?q=http://t/", "#f",
         "/@@https://trusted.example/repo", "/%40%40http://trusted.example/"]
INSERTS = ["@", "@@", ":", "/", "//", "://", "\\", "%40", "%2F", "%3A", "%5C", "%25", "[", "]", ".", "#", "?",
           "\u00e9", "\u3002", "\uff0f", "\uff20", "\u212a", " ", "\t", "+", "-", "0", "%2e", "..",
           "@@http://trusted.example/"]

# URLs whose host parsers are known to disagree on, tried first, whatever the seed.
KNOWN = ["http://oauth2%40%40http%3A%2F%2Ftrusted.example%2F@evil.example/repo",
         "http://trusted.example/@@http://evil.example/repo", "http://evil.example\\@trusted.example/simple/",
         "https://trusted.example\\@evil.example/", "http://trusted.example/x://evil.example/"]


def random_url(rng):
    scheme = rng.choice(SCHEMES)
    url = (scheme + "://" if scheme else rng.choice(["", "//"])) + rng.choice(USERINFO) + rng.choice(HOSTS)
    url += rng.choice(PORTS) + rng.choice(PATHS)
    for _ in range(rng.randrange(0, 4)):
        at = rng.randrange(len(url) + 1)
        url = url[:at] + rng.choice(INSERTS) + url[at:]
    return url


def destination(scheme, host, port):
    """Where a tool connects, as the check compares it; None when it would not send."""
    scheme = (scheme or "").lower()
    if scheme not in DEFAULT_PORTS or not host:
        return None
    return {"scheme": scheme, "host": host, "port": int(port) if port is not None else DEFAULT_PORTS[scheme]}


def case(tool, url, service, username, where):
    return dict(where, tool=tool, url=url, service=service, username=username,
                request=keyring_tokenctl._helper_request(service, username))


def urllib3_cases(url):
    """A tool on urllib3 asking keyring for the URL it will fetch."""
    try:
        parsed = parse_url(url)
    except Exception:  # noqa: BLE001 - any refusal: urllib3 sends nothing
        return []
    where = destination(parsed.scheme, parsed.host, parsed.port)
    if where is None:
        return []
    return [case("urllib3", url, url, user, where) for user in (None, "oauth2")]


def pip_cases(url):
    """pip: requests prepares the URL; pip names the index (without credentials) and its
    netloc to keyring; urllib3 connects where the prepared URL says."""
    try:
        prepared = PreparedRequest()
        prepared.prepare_url(url, None)
        parsed = parse_url(prepared.url)
        index, netloc, (user, _) = split_auth_netloc_from_url(prepared.url)
    except Exception:  # noqa: BLE001
        return []
    where = destination(parsed.scheme, parsed.host, parsed.port)
    if where is None:
        return []
    return [case("pip", url, service, user, where) for service in (index, netloc)]


def hg_cases(url):
    """Mercurial: its URL reader, mercurial_keyring's key (the user from the URL, else the
    one an `[auth]` section would give), and the connection urllib opens."""
    try:
        parsed = urlutil.url(url.encode())
        if parsed.scheme not in (b"http", b"https"):
            return []
        user = parsed.user or b"oauth2"
        opened, _ = parsed.authinfo()
        base, _, _ = mercurial_keyring.HTTPPasswordHandler.unpack_url(opened)
        key = mercurial_keyring.PasswordStore._format_http_key(bytes(base), user)
        connect = http.client.HTTPSConnection if parsed.scheme == b"https" else http.client.HTTPConnection
        connection = connect(urllib.request.Request(opened.decode("latin-1")).host)
    except Exception:  # noqa: BLE001 - Mercurial refuses the URL: nothing is sent
        return []
    where = destination(parsed.scheme.decode(), connection.host, connection.port)
    if where is None:
        return []
    return [case("hg", url, keyring_tokenctl.MERCURIAL_SERVICE, key, where)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    for url in KNOWN + [random_url(rng) for _ in range(args.count)]:
        for found in urllib3_cases(url) + pip_cases(url) + hg_cases(url):
            print(json.dumps(found))


if __name__ == "__main__":
    sys.exit(main())
