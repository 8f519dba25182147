"""A read-only keyring backend that answers with tokens from tokenctl's accounts.

keyring asks for a "service" and a username. pip and uv make the service an index URL or
a host (`https://pypi.corp.example/simple/`, `pypi.corp.example`); Mercurial's
mercurial_keyring asks for the service `Mercurial` with the username `USER@@URL` (the
repository's URL, or the `[auth]` prefix that covers it). The backend hands the URL, and
the user, to `git-credential-tokenctl get` as git's `url` attribute, so tokenctl chooses
the account by the one rule every helper of it follows, and answers from its agent when
one runs. Nothing is parsed here but the answer and Mercurial's key.

The token travels only through the helper's standard output and this process's memory:
never in an argument, an environment variable or a log line.
"""

import os
import shutil
import subprocess

from keyring import backend, credentials, errors

try:  # keyring 23.9 and later take it from jaraco.classes, which they depend on.
    from jaraco.classes import properties
except ImportError:  # pragma: no cover - older keyring
    from keyring.util import properties

HELPER = "git-credential-tokenctl"
# Long enough for a refresh at a slow server, short enough that a stuck helper does not
# hang pip: tokenctl bounds its own requests well below this.
TIMEOUT_SECONDS = 120
# mercurial_keyring's service, under which its usernames are `USER@@URL` (its
# PasswordStore._format_http_key); `USER@@HOST:PORT` ones are for SMTP, not ours.
MERCURIAL_SERVICE = "Mercurial"
MERCURIAL_SEPARATOR = "@@"
# What a Mercurial user name may not hold: the parts of a URL (userinfo, scheme, path),
# and the backslash some URL readers take for a slash.
NOT_IN_USER_NAMES = "@/:\\"


def _helper():
    return shutil.which(HELPER)


def _url_and_user(service, username):
    """The URL (or host) and the username a keyring request names, or None.

    Mercurial names the URL in the username: `oauth2@@https://hg.corp.example/repo` is the
    user `oauth2` at that URL. Only a key that splits one way is read.
    """
    if service != MERCURIAL_SERVICE:
        return service, username
    if not username:
        return None
    # The user part comes from the repository's URL, which whoever wrote the URL chose (a
    # link, a `.hgsub`): `http://oauth2%40%40http%3A%2F%2FTRUSTED%2F@EVIL/repo` gives the key
    # `oauth2@@http://TRUSTED/@@http://EVIL/repo`, and Mercurial sends what we answer to
    # EVIL. So a key with a second `@@`, or whose user is not a plain user name (one
    # holding `@`, `/`, `:` or `\`, which only a URL needs), names no URL: no answer.
    if username.count(MERCURIAL_SEPARATOR) != 1:
        return None
    user, _, url = username.partition(MERCURIAL_SEPARATOR)
    if not user or any(c in user for c in NOT_IN_USER_NAMES):
        return None
    if not url.startswith(("http://", "https://")):
        return None
    return url, user


def _helper_request(service, username):
    """What the backend writes to `git-credential-tokenctl get` for a keyring request, or
    None when it asks nothing.

    The helper chooses the account by the host it reads in `url`, so this is all of what
    decides where a token may go: the tests compare it with where each tool sends.
    """
    named = _url_and_user(service, username)
    if named is None:
        return None
    url, user = named
    # A line break would let the service add attributes of its own to the request.
    if not url or any(c in url for c in "\n\r\0"):
        return None
    if user is not None and any(c in user for c in "\n\r\0"):
        return None
    return "url=" + url + "\n" + ("username=" + user + "\n" if user else "") + "\n"


def register():
    """What the `keyring.backends` entry point names; defining the class registered it.

    An attribute, not the module: Mercurial imports lazily (demandimport), and keyring
    would get a module whose body has not run, so the class would never be defined.
    keyring reads the attribute, which runs the module, then calls it.
    """


class TokenctlKeyring(backend.KeyringBackend):
    """Tokens of tokenctl's accounts, for the hosts their types serve."""

    @properties.classproperty
    def priority(cls):
        # Above the Secret Service backend (5), which cannot see tokenctl's items: with
        # both, keyring chains them and asks this one first. Not viable without the helper.
        if _helper() is None:
            raise RuntimeError(HELPER + " is not on PATH (make install puts it beside tokenctl)")
        return 9

    def get_credential(self, service, username):
        request = _helper_request(service, username)
        helper = _helper()
        if request is None or helper is None:
            return None
        _, username = _url_and_user(service, username)
        environment = dict(os.environ)
        # No offer to sign in on the terminal: pip's own output owns it. The helper says
        # on standard error which login to run instead.
        environment["GIT_TERMINAL_PROMPT"] = "0"
        try:
            result = subprocess.run(
                [helper, "get"], input=request.encode(), stdout=subprocess.PIPE,
                env=environment, timeout=TIMEOUT_SECONDS, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
        if result.returncode != 0:
            return None
        answer = {}
        for line in result.stdout.decode("utf-8", "replace").splitlines():
            key, separator, value = line.partition("=")
            if separator:
                answer[key] = value
        password = answer.get("password")
        if not password:
            return None
        return credentials.SimpleCredential(answer.get("username", username or ""), password)

    def get_password(self, service, username):
        credential = self.get_credential(service, username)
        named = _url_and_user(service, username)
        user = named[1] if named else None
        # A password is for the username asked: the type's (`oauth2`), or the account's
        # name when the type sends that.
        if credential is None or (user and credential.username != user):
            return None
        return credential.password

    def set_password(self, service, username, password):
        raise errors.PasswordSetError(
            "tokenctl keeps no passwords given to keyring; it answers with the tokens of accounts "
            "signed in with 'tokenctl login' (see 'tokenctl types')")

    def delete_password(self, service, username):
        raise errors.PasswordDeleteError(
            "tokenctl keeps its accounts until they are revoked; see them with 'tokenctl list' and "
            "sign out with 'tokenctl revoke'")
