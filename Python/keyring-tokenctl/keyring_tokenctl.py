"""A read-only keyring backend that answers with tokens from tokenctl's accounts.

keyring asks for a "service", which pip and uv make an index URL or a host
(`https://pypi.corp.example/simple/`, `pypi.corp.example`) and Mercurial a repository
URL. The backend hands that URL to `git-credential-tokenctl get` as git's `url`
attribute, so tokenctl chooses the account by the one rule every helper of it follows,
and answers from its agent when one runs. Nothing is parsed here but the answer.

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


def _helper():
    return shutil.which(HELPER)


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
        helper = _helper()
        # A line break would let the service add attributes of its own to the request.
        if helper is None or not service or any(c in service for c in "\n\r\0"):
            return None
        if username is not None and any(c in username for c in "\n\r\0"):
            return None
        request = "url=" + service + "\n" + ("username=" + username + "\n" if username else "") + "\n"
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
        if credential is None or (username and credential.username != username):
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
